/**
 * TAP devices for net_tap: a queue on /dev/net/tun (IFF_TAP | IFF_NO_PI |
 * IFF_MULTI_QUEUE) and the per-burst loops (native/src/tap.cc). Node cannot
 * ioctl, and a tap gives one frame per read(): a loop in TypeScript would cost
 * one call into the shim per packet, so the shim walks a burst in one call,
 * readv() into mbufs on rx and writev() from them on tx.
 *
 * The burst calls take the heap's bytes and heap offsets: the queue's block
 * (drivers/tap/tap.record.ts), which says the fd and where the burst's fresh
 * mbufs are, and a burst.
 *
 * Thread-safety: `tapRxBurst`/`tapTxBurst` may be called from any thread
 * (each lcore on the queues it polls); the rest is control plane.
 */
import { NativeError, requireNative, type NativeShim } from './native.js';
import { CapabilityError } from './packet.js';

/** The shim's rx loop: (heap, q, burst, n, avail) → frames received, or -errno. */
export type TapRxBurstFn = (heap: Uint8Array, q: number, burst: number, n: number, avail: number) => number;
/** The shim's tx loop: (heap, q, burst, n) → packets taken. */
export type TapTxBurstFn = (heap: Uint8Array, q: number, burst: number, n: number) => number;

interface TapShim extends NativeShim {
  tapOpen(name: string): { fd: number; name: string };
  tapName(fd: number): string | null;
  tapRxBurst: TapRxBurstFn;
  tapTxBurst: TapTxBurstFn;
  ifaceSetUp(name: string, up: boolean): void;
  ifaceSetMtu(name: string, mtu: number): void;
}

function shim(feature: string): TapShim {
  return requireNative(feature) as TapShim;
}

/**
 * One more queue of tap `name`, created when there is none (a name with `%d`
 * gets the first free number, as `dtap%d`): a non-blocking, close-on-exec fd
 * the caller closes (closeFd); the kernel removes the interface when its
 * last queue closes. @returns the fd and the interface's name.
 * @throws CapabilityError without CAP_NET_ADMIN or without /dev/net/tun;
 * NativeError for any other failure (`ioctl TUNSETIFF dtap0: Invalid argument (EINVAL)`: a
 * non-tap interface of that name exists).
 */
export function tapOpen(feature: string, name: string): { fd: number; name: string } {
  try {
    return shim(feature).tapOpen(name);
  } catch (e) {
    if (e instanceof NativeError && e.syscall === 'open' && (e.code === 'ENOENT' || e.code === 'ENODEV' || e.code === 'ENXIO')) {
      throw new CapabilityError(`${feature}: iface=${name}: /dev/net/tun is missing (load the tun module, or give the container the device)`);
    }
    if (e instanceof NativeError && (e.code === 'EPERM' || e.code === 'EACCES')) {
      throw new CapabilityError(`${feature}: iface=${name}: a TAP device needs CAP_NET_ADMIN (run as root or grant the capability)`);
    }
    throw e;
  }
}

/** The name the tap on `fd` has now (it may have been renamed or moved to another namespace), or null once it is gone. */
export function tapName(fd: number, feature = 'net_tap'): string | null {
  return shim(feature).tapName(fd);
}

/**
 * Sets or clears IFF_UP on interface `name` in this namespace.
 * @throws NativeError (ENODEV when there is none; EPERM without CAP_NET_ADMIN).
 */
export function ifaceSetUp(name: string, up: boolean, feature = 'net_tap'): void {
  shim(feature).ifaceSetUp(name, up);
}

/**
 * Sets the MTU of interface `name` in this namespace (SIOCSIFMTU).
 * @throws NativeError (ENODEV when there is none; EINVAL outside the device's range; EPERM without CAP_NET_ADMIN).
 */
export function ifaceSetMtu(name: string, mtu: number, feature = 'net_tap'): void {
  shim(feature).ifaceSetMtu(name, mtu);
}

/**
 * The shim's tapRxBurst, for a queue to keep and call once per burst: reads
 * frames, at most `n`, into the `avail` fresh mbufs at the block's `mbufs`
 * (heads from the front, a larger frame's segments from the back) and puts
 * the heads into the burst at heap offset `burst`; the block's `front` and
 * `back` then say which mbufs were left unused (`mbufs[front..back)`).
 * @returns frames received (0 when the tap has none), or -errno when the
 * first read failed (-EBADFD: the interface is gone). Never throws on the
 * data path; a malformed block or burst is a TypeError (a programming error).
 */
export function tapReader(feature: string): TapRxBurstFn {
  return shim(feature).tapRxBurst;
}

/**
 * The shim's tapTxBurst, for a queue to keep and call once per burst: writes
 * the burst's packets in order from their segments until the tap has no room.
 * @returns packets taken (written, or dropped and counted in the block's
 * `errors`); the rest stay the caller's. The caller frees the taken ones.
 */
export function tapWriter(feature: string): TapTxBurstFn {
  return shim(feature).tapTxBurst;
}
