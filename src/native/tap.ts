/**
 * TAP devices for net_tap: a queue on /dev/net/tun (IFF_TAP | IFF_NO_PI |
 * IFF_MULTI_QUEUE) and the per-burst read and write loops (native/src/tap.cc).
 * Node cannot ioctl, and a tap gives one frame per read(): a loop in
 * TypeScript would cost one call into the shim per packet, so the shim walks
 * a burst in one call.
 *
 * The frames are a ring in the heap laid out as a TPACKET_V2 ring
 * (drivers/af_packet/af-packet.record.ts); `tapRx` and `tapTx` play the part
 * the kernel plays for net_af_packet's rings.
 *
 * Thread-safety: `tapRx`/`tapTx` may be called from any thread (each lcore on
 * the queues it polls); the rest is control plane.
 */
import { NativeError, requireNative, type NativeShim } from './native.js';
import { CapabilityError } from './packet.js';

/** A ring of frames in the heap, as tapRx and tapTx take it. */
export interface TapRing {
  /** The heap's bytes (the frames and the table are in it). */
  readonly heap: Uint8Array;
  /** Heap offset of the frame table: `count` u32 heap offsets of frames. */
  readonly table: number;
  readonly count: number;
  /** Bytes per frame: a 32-byte header, then the packet. */
  readonly frameSize: number;
}

/** The shim's burst loop: (fd, heap, table, count, start, max, frameSize) → frames done, or -errno. */
export type TapBurstFn = (fd: number, heap: Uint8Array, table: number, count: number, start: number, max: number, frameSize: number) => number;

interface TapShim extends NativeShim {
  tapOpen(name: string): { fd: number; name: string };
  tapName(fd: number): string | null;
  tapRx: TapBurstFn;
  tapTx: TapBurstFn;
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
 * The shim's tapRx, for a queue to keep and call once per burst: reads
 * frames into the ring's free frames from `start` on, at most `max`.
 * @returns frames filled (0 when the tap has none), or -errno when the first
 * read failed (-EBADFD: the interface is gone). Never throws on the data path.
 */
export function tapReader(feature: string): TapBurstFn {
  return shim(feature).tapRx;
}

/**
 * The shim's tapTx, for a queue to keep and call once per burst: writes the
 * frames filled for sending from `start` on, at most `max`, and frees them
 * (a frame refused other than for room is dropped). @returns frames freed.
 */
export function tapWriter(feature: string): TapBurstFn {
  return shim(feature).tapTx;
}
