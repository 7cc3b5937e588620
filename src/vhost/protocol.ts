/**
 * The vhost-user protocol as typed messages, and the channel that carries
 * them. The frontend (dpkit's virtio_user, or QEMU, or DPDK's virtio-user)
 * drives the setup sequence; the backend (dpkit's vhost) answers.
 *
 * The setup is the real protocol's: GET_FEATURES, SET_OWNER, SET_FEATURES,
 * SET_MEM_TABLE, then per vring SET_VRING_NUM / ADDR / BASE / KICK / CALL
 * and SET_VRING_ENABLE. Only the channel differs between an in-process peer
 * (a function call) and a unix socket (the wire format plus SCM_RIGHTS), so
 * the socket transport replaces `Channel` and nothing else. Where the socket
 * passes a file descriptor (memory regions, kick and call eventfds), the
 * in-process channel passes the heap offset of what the fd would map.
 */
import type { Features } from '../virtio/virtio-net.js';

/** Request codes (vhost-user spec, "Front-end message types"). */
export const Req = {
  GET_FEATURES: 1,
  SET_FEATURES: 2,
  SET_OWNER: 3,
  RESET_OWNER: 4,
  SET_MEM_TABLE: 5,
  SET_LOG_BASE: 6,
  SET_VRING_NUM: 8,
  SET_VRING_ADDR: 9,
  SET_VRING_BASE: 10,
  GET_VRING_BASE: 11,
  SET_VRING_KICK: 12,
  SET_VRING_CALL: 13,
  SET_VRING_ERR: 14,
  GET_PROTOCOL_FEATURES: 15,
  SET_PROTOCOL_FEATURES: 16,
  GET_QUEUE_NUM: 17,
  SET_VRING_ENABLE: 18,
} as const;

/** One memory region of SET_MEM_TABLE. */
export interface MemRegion {
  /** guest_phys_addr: what descriptors carry. */
  gpa: number;
  size: number;
  /** userspace_addr: the frontend's own address of the region, what SET_VRING_ADDR carries. */
  userAddr: number;
  /** Where the backend finds the bytes: the heap offset in process (the mmap of fd + mmap_offset over a socket). */
  heapOffset: number;
}

/** Where a notification goes: a u32 counter's heap byte offset (an eventfd over a socket), or -1 to poll. */
export type Notifier = number;
export const NO_NOTIFIER: Notifier = -1;

export type VhostUserMsg =
  | { req: typeof Req.GET_FEATURES }
  | { req: typeof Req.SET_FEATURES; features: Features }
  | { req: typeof Req.SET_OWNER }
  | { req: typeof Req.RESET_OWNER }
  | { req: typeof Req.GET_PROTOCOL_FEATURES }
  | { req: typeof Req.SET_PROTOCOL_FEATURES; features: Features }
  | { req: typeof Req.GET_QUEUE_NUM }
  | { req: typeof Req.SET_MEM_TABLE; regions: MemRegion[] }
  | { req: typeof Req.SET_VRING_NUM; index: number; num: number }
  | { req: typeof Req.SET_VRING_ADDR; index: number; desc: number; used: number; avail: number }
  | { req: typeof Req.SET_VRING_BASE; index: number; num: number }
  | { req: typeof Req.GET_VRING_BASE; index: number }
  | { req: typeof Req.SET_VRING_KICK; index: number; notifier: Notifier }
  | { req: typeof Req.SET_VRING_CALL; index: number; notifier: Notifier }
  | { req: typeof Req.SET_VRING_ENABLE; index: number; enable: boolean };

/** A reply: a u64 for GET_* requests, nothing for the others (errors are thrown as VhostError). */
export type VhostUserReply = Features | number | undefined;

/** The frontend's end of a connection to a backend. */
export interface Channel {
  request(msg: VhostUserMsg): VhostUserReply;
  close(): void;
}

/** The backend's side: what a channel delivers to. */
export interface Backend {
  handle(msg: VhostUserMsg): VhostUserReply;
  /** The frontend went away (socket closed, port closed). */
  disconnect(): void;
}

/** Request names for messages. */
export function reqName(req: number): string {
  for (const [k, v] of Object.entries(Req)) if (v === req) return k;
  return `request ${req}`;
}
