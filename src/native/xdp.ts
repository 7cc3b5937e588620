/**
 * AF_XDP for net_af_xdp: an XDP socket whose UMEM is a range of the heap's
 * own pages, and the XDP program (libxdp's default redirect program, or the
 * user's object file) that steers an interface queue's packets to it. Node
 * has neither AF_XDP nor BPF. The socket's four rings are mapped into the
 * heap with mapWindow (memory.ts) at the XDP_PGOFF_* offsets below.
 *
 * The shim has these functions only when it was built with libxdp and libbpf
 * (libxdp-dev, libbpf-dev): `xdpUnavailable` says so in one line otherwise.
 *
 * Thread-safety: `xdpWakeRx` may be called from any thread (lcore workers
 * wake the rx queues they poll; the tx wake-up is packet.ts' packetKick, the
 * same sendto); the rest is control plane.
 */
import { CapabilityError } from './packet.js';
import { ArgError } from '../errors.js';
import { MapRefusedError, NativeError, NativeUnavailableError, requireNative, type NativeShim } from './native.js';

/** mmap offsets of an XDP socket's rings (linux/if_xdp.h). */
export const XDP_PGOFF_RX_RING = 0;
export const XDP_PGOFF_TX_RING = 0x80000000;
export const XDP_UMEM_PGOFF_FILL_RING = 0x100000000;
export const XDP_UMEM_PGOFF_COMPLETION_RING = 0x180000000;
/** XDP_PACKET_HEADROOM: the kernel puts a received frame this far into its UMEM chunk (with no UMEM headroom). */
export const XDP_PACKET_HEADROOM = 256;

/** Where a ring's parts are in its mapping (struct xdp_ring_offset). */
export interface XdpRingOffsets {
  readonly producer: number;
  readonly consumer: number;
  readonly flags: number;
  readonly desc: number;
}

/** An open XDP socket, bound and in the program's xsks_map. */
export interface XdpSocket {
  readonly fd: number;
  /** XDP_OPTIONS_ZEROCOPY: the driver DMAs into the UMEM (false on veth: the kernel copies). */
  readonly zeroCopy: boolean;
  readonly rx: XdpRingOffsets;
  readonly tx: XdpRingOffsets;
  readonly fill: XdpRingOffsets;
  readonly comp: XdpRingOffsets;
}

/** What xdpSocketOpen makes: the queue, the UMEM (a page-aligned heap range) and the ring sizes (powers of two). */
export interface XdpSocketOptions {
  readonly ifindex: number;
  readonly queue: number;
  /** The xsks_map the socket goes into at `queue`. */
  readonly mapFd: number;
  readonly umemOffset: number;
  readonly umemLength: number;
  /** The UMEM's chunk size: the pool's stride (unaligned chunks). */
  readonly chunkSize: number;
  readonly rxSize: number;
  readonly txSize: number;
  readonly fillSize: number;
  readonly compSize: number;
  /** Another socket's fd whose UMEM this one shares (XDP_SHARED_UMEM), or -1. */
  readonly sharedFd: number;
  /** SO_BUSY_POLL_BUDGET (with SO_PREFER_BUSY_POLL); 0: no busy polling. */
  readonly busyBudget: number;
  /** XDP_USE_SG: packets may span several UMEM buffers (multi-buffer, kernel 6.6 and later). */
  readonly sg: boolean;
}

/** An attached XDP program. */
export interface XdpProgram {
  readonly handle: number;
  /** Its xsks_map; valid until xdpProgramDetach. */
  readonly mapFd: number;
  /** 'native' (the driver's XDP), or 'skb' (generic XDP, for a driver without). */
  readonly mode: 'native' | 'skb';
}

/** The kernel's AF_XDP counters for one socket (struct xdp_statistics). */
export interface XdpStatistics {
  readonly rxDropped: number;
  readonly rxInvalidDescs: number;
  readonly txInvalidDescs: number;
  readonly rxRingFull: number;
  readonly rxFillRingEmpty: number;
  readonly txRingEmpty: number;
}

interface XdpShim extends NativeShim {
  xdpProgramAttach?(ifindex: number, file: string, entries: number, frags: boolean): XdpProgram;
  xdpProgramDetach(handle: number): void;
  xdpSocketOpen(buffer: SharedArrayBuffer, opts: XdpSocketOptions): XdpSocket;
  xdpSocketClose(fd: number, mapFd: number, queue: number): void;
  xdpWakeRx(fd: number): number;
  xdpStatistics(fd: number): XdpStatistics;
}

/**
 * The shim with its AF_XDP part, for `feature`.
 * @throws NativeUnavailableError with one line: no shim, or a shim built without libxdp.
 */
function shim(feature: string): Required<XdpShim> {
  const s = requireNative(feature) as XdpShim;
  if (!s.xdpProgramAttach) throw new NativeUnavailableError(`${feature}: needs AF_XDP support in the native shim, which was built without libxdp (install libxdp-dev and libbpf-dev, then npm install)`);
  return s as Required<XdpShim>;
}

/** Why AF_XDP is unavailable here (no shim, or no libxdp in it), or undefined when it is available. */
export function xdpUnavailable(): string | undefined {
  try {
    shim('net_af_xdp');
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** EPERM / EACCES from a step that needs a capability, as one line naming it. */
function capability(e: unknown, feature: string, iface: string, what: string, cap: string): unknown {
  if (e instanceof NativeError && (e.code === 'EPERM' || e.code === 'EACCES')) {
    return new CapabilityError(`${feature}: iface=${iface}: ${what} needs ${cap} (run as root or grant the capability)`);
  }
  return e;
}

/**
 * Loads the XDP program from `file` ('' for libxdp's xsk_def_xdp_prog.o,
 * which redirects each rx queue to the socket in xsks_map at that queue's
 * id, passing packets of queues without one to the stack) and attaches it to
 * `ifindex` through libxdp (its dispatcher, so other programs may stay),
 * native mode first, generic when the driver has no XDP. The default
 * program's map is sized for `entries` queue ids. With `frags` the program is
 * loaded as taking multi-buffer packets (BPF_F_XDP_HAS_FRAGS), which an
 * XDP_USE_SG socket and a veth above one page of MTU need.
 * @throws CapabilityError naming CAP_BPF / CAP_NET_ADMIN; ArgError naming
 * `xdp_prog=FILE` when the file cannot be opened or loaded or has no XSKMAP
 * named xsks_map; MapRefusedError when the interface has a program already;
 * NativeError naming the step otherwise.
 */
export function xdpProgramAttach(feature: string, iface: string, ifindex: number, file: string, entries: number, frags: boolean): XdpProgram {
  try {
    return shim(feature).xdpProgramAttach(ifindex, file, entries, frags);
  } catch (e) {
    const c = capability(e, feature, iface, 'loading and attaching an XDP program', 'CAP_BPF and CAP_NET_ADMIN');
    // A file that is not there, not an XDP object, or has no xsks_map: the devarg is what is wrong.
    if (c === e && file !== '' && (e instanceof MapRefusedError || (e instanceof NativeError && e.syscall !== 'bpf_xdp_attach'))) {
      throw new ArgError(`${feature}: xdp_prog=${file}: ${(e as Error).message.replace(` ${file}: `, ': ').replace(/^mapWindow: |^xdpProgramAttach: /, '')}`);
    }
    throw c;
  }
}

/** Detaches and frees a program xdpProgramAttach attached (an interface that has gone is fine). @throws NativeError. */
export function xdpProgramDetach(feature: string, handle: number): void {
  shim(feature).xdpProgramDetach(handle);
}

/**
 * An XDP socket on `opts.queue` of `opts.ifindex`, its UMEM registered over
 * heap bytes [umemOffset, umemOffset + umemLength) of `memory` (or shared
 * with `opts.sharedFd`'s), its rings sized, bound with XDP_USE_NEED_WAKEUP,
 * and put into the program's xsks_map. The shim holds the memory while the
 * socket lives. The caller maps the rings and closes with xdpSocketClose.
 * @throws CapabilityError without CAP_NET_RAW; NativeError naming the step.
 */
export function xdpSocketOpen(feature: string, iface: string, memory: WebAssembly.Memory, opts: XdpSocketOptions): XdpSocket {
  try {
    return shim(feature).xdpSocketOpen(memory.buffer as unknown as SharedArrayBuffer, opts);
  } catch (e) {
    throw capability(e, feature, iface, 'an AF_XDP socket', 'CAP_NET_RAW');
  }
}

/** Takes the socket out of xsks_map (`mapFd` -1: the program is gone already) and closes it. */
export function xdpSocketClose(feature: string, fd: number, mapFd: number, queue: number): void {
  shim(feature).xdpSocketClose(fd, mapFd, queue);
}

/** The shim's xdpWakeRx (recvfrom MSG_DONTWAIT: 0 or the errno), for an rx queue to keep and call without a lookup. */
export function xdpRxWaker(feature: string): (fd: number) => number {
  return shim(feature).xdpWakeRx;
}

/** The kernel's counters for the socket. @throws NativeError. */
export function xdpStatistics(feature: string, fd: number): XdpStatistics {
  return shim(feature).xdpStatistics(fd);
}
