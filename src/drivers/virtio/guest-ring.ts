/**
 * The guest's side of a split virtqueue (virtio 1.x 2.7): the three parts in
 * the heap, which the guest (dpkit's virtio_user) writes and the device
 * (vhost) reads through the memory table, and the guest's own bookkeeping.
 *
 * Guest-physical addresses are heap offsets plus `GPA_BASE`, the way
 * virtio-user hands its own virtual addresses to vhost-user: a region table
 * of one region, the whole heap. The base is above 4 GiB so every address
 * has a high word, and a device that forgets to translate is caught.
 */
import type { Heap } from '../../eal/heap.js';
import { PDESC_SIZE } from '../../virtio/packed.js';
import { DESC_SIZE, vringSizes } from '../../virtio/vring.js';
import { VIRTIO_QUEUE_SIZE } from './guest-ring-layout.js';

/** The queue block (guest-ring.record.ts): G_* the f64 slots of its indices and counters, VQG_W_* its u32 words. */
export * from './guest-ring-layout.js';

export const GPA_BASE = 0x1_0000_0000;
/** The high word of every guest-physical address. */
export const GPA_HI = GPA_BASE / 4294967296;

export interface GuestRingLayout {
  num: number;
  /** Heap byte offsets (packed: the descriptor ring, the driver and the device event areas, as SET_VRING_ADDR passes them). */
  desc: number;
  avail: number;
  used: number;
  /** f64 slot of the queue's block (guest-ring.record.ts): the G_* slots from it; its byte offset is what the kernels take. */
  state: number;
  /** Heap byte offset of a u32 per descriptor: the mbuf that descriptor carries (rx: per buffer; tx: per head). */
  sw: number;
}

/** Reserves a ring of `num` entries (split, or `packed`), its state and its software ring, zeroed. */
export function reserveGuestRing(heap: Heap, num: number, packed = false): GuestRingLayout {
  let desc: number;
  let avail: number;
  let used: number;
  if (packed) {
    // The device writes its event area: a cache line of its own, away from the driver's.
    desc = heap.reserve(PDESC_SIZE * num + 128, 4096, 'virtio packed ring');
    avail = desc + PDESC_SIZE * num;
    used = avail + 64;
  } else {
    const s = vringSizes(num);
    const usedAt = (s.desc + s.avail + 63) & ~63;
    desc = heap.reserve(usedAt + s.used, 4096, 'virtio ring');
    avail = desc + s.desc;
    used = desc + usedAt;
  }
  const state = heap.reserve(VIRTIO_QUEUE_SIZE, 64, 'virtio ring state') >>> 3;
  const sw = heap.reserve(num * 4, 64, 'virtio sw ring');
  return { num, desc, avail, used, state, sw };
}

/** Writes descriptor `i` of the table at `table` (a heap offset). */
export function writeDesc(u32: Uint32Array, table: number, i: number, addr: number, len: number, flags: number, next: number): void {
  const w = (table + i * DESC_SIZE) >>> 2;
  u32[w] = addr; // GPA_BASE's low word is 0 and heap offsets are below 4 GiB
  u32[w + 1] = GPA_HI;
  u32[w + 2] = len;
  u32[w + 3] = flags | (next << 16);
}
