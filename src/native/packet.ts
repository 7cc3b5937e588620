/**
 * Linux interfaces for net_af_packet: an interface's facts
 * (index, flags, MTU, MAC) and an AF_PACKET socket with TPACKET_V2 rx and tx
 * rings. Node has no raw sockets and no ioctl. The rings are mapped into the
 * heap with mapWindow (memory.ts), which takes the packet socket's fd as any
 * other: the kernel checks that the window is exactly the rings' size.
 *
 * Thread-safety: `packetKick` may be called from any thread (lcore workers
 * kick the tx queues they poll); the rest is control plane.
 */
import { DpkitError } from '../errors.js';
import { NativeError, requireNative, type NativeShim } from './native.js';

/** IFF_UP: the administrator brought the interface up. */
export const IFF_UP = 0x1;
/** IFF_RUNNING: the interface has carrier (operationally up). */
export const IFF_RUNNING = 0x40;

/** What ifaceInfo tells of an interface. */
export interface IfaceInfo {
  readonly name: string;
  readonly ifindex: number;
  /** IFF_* bits (SIOCGIFFLAGS). */
  readonly flags: number;
  readonly mtu: number;
  readonly mac: Uint8Array;
}

/** An open packet socket: its rings are `mapLength` bytes, the rx ring first, then the tx ring. */
export interface PacketSocket {
  readonly fd: number;
  readonly ifindex: number;
  readonly mapLength: number;
}

/** How a packet socket's rings are cut (PACKET_RX_RING / PACKET_TX_RING, the same for both). */
export interface PacketRing {
  /** tp_block_size: a multiple of the page size, holding whole frames. */
  readonly blockSize: number;
  readonly blockCount: number;
  /** tp_frame_size: a multiple of 16 (TPACKET_ALIGNMENT). */
  readonly frameSize: number;
  /** PACKET_QDISC_BYPASS: tx skips the interface's queueing discipline. */
  readonly qdiscBypass: boolean;
  /** PACKET_FANOUT's argument (fanoutArg): sockets of one port share the interface's flows; 0 for none. */
  readonly fanout: number;
  /** Receive what the host sends out of the interface too (a capture's in-and-out); default: not. */
  readonly receiveOutgoing?: boolean;
}

/** A packet socket was refused for want of a capability: the message names it. */
export class CapabilityError extends DpkitError {
  constructor(message: string) {
    super('EPERM', message);
  }
}

interface PacketShim extends NativeShim {
  ifaceInfo(nameOrIndex: string | number): IfaceInfo | null;
  packetOpen(iface: string, blockSize: number, blockCount: number, frameSize: number, qdiscBypass: boolean, fanout: number, receiveOutgoing: boolean): PacketSocket;
  packetKick(fd: number): number;
  socketError(fd: number): number;
  linkEventsOpen(): number;
  drainFd(fd: number): number;
}

function shim(feature: string): PacketShim {
  return requireNative(feature) as PacketShim;
}

/**
 * The interface called `name` (or with index `ifindex`) as it is now, or null
 * when there is none (deleted, or never was).
 * @throws NativeError when an ioctl fails for another reason.
 */
export function ifaceInfo(nameOrIndex: string | number, feature = 'interface'): IfaceInfo | null {
  return shim(feature).ifaceInfo(nameOrIndex);
}

/**
 * A non-blocking, close-on-exec AF_PACKET socket bound to `iface` for every
 * protocol, TPACKET_V2, with rx and tx rings cut as `ring`, promiscuous while
 * it lives, not receiving what the host sends out of the interface
 * (PACKET_IGNORE_OUTGOING) unless `ring.receiveOutgoing`, and joined to a fanout group by `ring.fanout`
 * (PACKET_FANOUT's argument, fanoutArg) when it is not 0. The caller maps the rings (mapWindow, fd offset 0,
 * `mapLength` bytes) and closes the fd (closeFd).
 * @throws CapabilityError without CAP_NET_RAW; NativeError naming the step
 * (`setsockopt veth0 PACKET_RX_RING: Invalid argument (EINVAL)`, `if_nametoindex veth9: No such device`).
 */
export function packetOpen(feature: string, iface: string, ring: PacketRing): PacketSocket {
  try {
    return shim(feature).packetOpen(iface, ring.blockSize, ring.blockCount, ring.frameSize, ring.qdiscBypass, ring.fanout, ring.receiveOutgoing ?? false);
  } catch (e) {
    if (e instanceof NativeError && e.syscall === 'socket' && (e.code === 'EPERM' || e.code === 'EACCES')) {
      throw new CapabilityError(`${feature}: iface=${iface}: an AF_PACKET socket needs CAP_NET_RAW (run as root or grant the capability)`);
    }
    throw e;
  }
}

/** sendto(fd, NULL, 0, MSG_DONTWAIT): sends what the tx ring holds. @returns 0, or the errno (never throws: data path). */
export function packetKick(fd: number): number {
  return shim('af_packet tx').packetKick(fd);
}

/** The socket's pending error (SO_ERROR, which clears it): ENETDOWN when its interface went down; 0 when none. */
export function socketError(fd: number): number {
  return shim('af_packet').socketError(fd);
}

/**
 * A socket that turns readable whenever any interface changes (a NETLINK_ROUTE
 * socket in RTMGRP_LINK), for a port to watch instead of its own socket.
 * @throws NativeError when netlink is refused.
 */
export function linkEventsOpen(feature: string): number {
  return shim(feature).linkEventsOpen();
}

/** Reads `fd` until it would block; @returns the bytes read. */
export function drainFd(fd: number, feature: string): number {
  return shim(feature).drainFd(fd);
}

/** The shim's packetKick, for a queue to keep and call once per burst without a lookup. */
export function packetKicker(feature: string): (fd: number) => number {
  return shim(feature).packetKick;
}
