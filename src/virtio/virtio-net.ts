/**
 * virtio-net as both sides see it (virtio 1.x, 5.1): feature bits and the
 * per-packet header. dpkit requires VIRTIO_F_VERSION_1, so the header is
 * always the 12-byte `virtio_net_hdr` with `num_buffers` (5.1.6), whether or
 * not MRG_RXBUF is negotiated, and every field is little-endian.
 */
import { HDR_NUM_BUFFERS } from './virtio-net-layout.js';

/** Feature bit numbers (virtio 1.x 5.1.3, 6). */
export const Feature = {
  NET_F_CSUM: 0,
  NET_F_MAC: 5,
  NET_F_MRG_RXBUF: 15,
  NET_F_STATUS: 16,
  /** Several queue pairs (5.1.5): a backend with queues > 1 offers it, or DPDK's virtio driver stays at one. */
  NET_F_MQ: 22,
  RING_F_INDIRECT_DESC: 28,
  RING_F_EVENT_IDX: 29,
  F_VERSION_1: 32,
  /** The packed virtqueue layout (2.8) instead of the split one; dpkit's vhost backend offers it. */
  F_RING_PACKED: 34,
  /** Buffers are used in the order they were made available (2.7.9 / 2.8.21.2). */
  F_IN_ORDER: 35,
  /** vhost-user: the backend speaks the protocol-feature extension. */
  F_PROTOCOL_FEATURES: 30,
} as const;

/** A feature set as a bigint bitmask (64 bits). */
export type Features = bigint;

export const bit = (b: number): Features => 1n << BigInt(b);
export const has = (f: Features, b: number): boolean => (f & bit(b)) !== 0n;

/** What dpkit's vhost backend offers and its virtio driver can use. */
export const SUPPORTED_FEATURES: Features =
  bit(Feature.F_VERSION_1) |
  bit(Feature.NET_F_MRG_RXBUF) |
  bit(Feature.RING_F_EVENT_IDX) |
  bit(Feature.RING_F_INDIRECT_DESC) |
  bit(Feature.F_IN_ORDER) |
  bit(Feature.NET_F_MAC) |
  bit(Feature.F_PROTOCOL_FEATURES);

/** The header's size and num_buffers' offset (declared in virtio-net.record.ts). */
export { HDR_NUM_BUFFERS, NET_HDR_SIZE } from './virtio-net-layout.js';

/** The header's last word with num_buffers (its upper half) 1 and nothing else. */
const LAST_WORD = 1 << ((HDR_NUM_BUFFERS - 8) * 8);

/**
 * putRxHeader (net-hdr.as.ts) for the twins: the 12-byte header of a packet
 * in one buffer (no offloads, num_buffers 1) at `dst`, written only where it
 * differs, so the line the guest shares stays unwritten lap after lap.
 */
export function putRxHeader(view: DataView, dst: number): void {
  if ((view.getUint32(dst, true) | view.getUint32(dst + 4, true)) !== 0 || view.getUint32(dst + 8, true) !== LAST_WORD) {
    view.setUint32(dst, 0, true);
    view.setUint32(dst + 4, 0, true);
    view.setUint32(dst + 8, LAST_WORD, true);
  }
}

/** Names of feature bits for messages. */
export function featureNames(f: Features): string {
  const names: string[] = [];
  for (const [k, b] of Object.entries(Feature)) if (has(f, b)) names.push(k);
  return names.join(' | ') || '(none)';
}

/** Virtqueue index of queue pair `q`'s rx (guest receives) and tx rings (5.1.2). */
export const rxVring = (q: number): number => 2 * q;
export const txVring = (q: number): number => 2 * q + 1;

/** Split ring flags the two sides use to suppress notifications (2.7.7, 2.7.10). */
export const VRING_USED_F_NO_NOTIFY = 1;
export const VRING_AVAIL_F_NO_INTERRUPT = 1;

/**
 * vring_need_event (2.7.7.1): with EVENT_IDX, notify when the index moved
 * from `old` to `now` past the other side's `event`.
 */
export function needEvent(event: number, now: number, old: number): boolean {
  return ((now - event - 1) & 0xffff) < ((now - old) & 0xffff);
}
