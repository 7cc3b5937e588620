/**
 * virtio_user's per-burst common case over a packed ring: the wasm kernels
 * (virtio-packed.as.ts) or their TypeScript twins (here, same signatures),
 * chosen once when a queue is opened (`virtioPackedOps`). Arguments are heap
 * byte offsets: `s` the queue's block (guest-ring.record.ts), `lc` the
 * calling thread's lcore block (unused: none allocates), `burst` a burst.
 */
import type { Heap } from '../../eal/heap.js';
import { RXQ_BYTES, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import { H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, H_REFCNT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, OlFlagsHi, W_BUF_ADDR, W_OL_FLAGS_HI, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from '../../virtio/packed.js';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE } from '../../virtio/virtio-net.js';
import { VRING_DESC_F_WRITE } from '../../virtio/vring.js';
import {
  G_AVAIL_IDX,
  G_AVAIL_WRAP,
  G_BAD_USED,
  G_FREE_HEAD,
  G_LAST_USED,
  G_NUM_FREE,
  G_OLDEST,
  G_USED_WRAP,
  VQG_F_IN_ORDER,
  VQG_W_CAP,
  VQG_W_DESC,
  VQG_W_FLAGS,
  VQG_W_FREE,
  VQG_W_GPA_HI,
  VQG_W_HEADROOM,
  VQG_W_LIMIT,
  VQG_W_NDESC,
  VQG_W_NEXT_FREE,
  VQG_W_NUM,
  VQG_W_PORT,
  VQG_W_STATS,
  VQG_W_SW,
} from './guest-ring-layout.js';

export interface VirtioPackedOps {
  /** Rx with MRG_RXBUF: one-buffer packets from the used elements at lastUsed. @returns how many it took (one position each). */
  rx(s: number, lc: number, burst: number, n: number): number;
  /** Makes the `n` fresh mbufs of `burst` available as one-descriptor buffers. @returns `n`. */
  rxFill(s: number, lc: number, burst: number, n: number): number;
  /** One-segment packets with their header pushed, one descriptor each. @returns how many it made available. */
  tx(s: number, lc: number, burst: number, n: number): number;
  /** Takes back the used chains, their packets staged in `stage` (`n`: its room, the ring size). @returns how many it staged. */
  txCleanup(s: number, lc: number, stage: number, n: number): number;
}

/** The kernels when the heap has them, else the twins. */
export function virtioPackedOps(heap: Heap): VirtioPackedOps {
  const k = heap.kernels;
  if (k === null) return new VirtioPackedTwin(heap);
  return { rx: k.fn('virtioPackedRx'), rxFill: k.fn('virtioPackedRxFill'), tx: k.fn('virtioPackedTx'), txCleanup: k.fn('virtioPackedTxCleanup') };
}

const AVAIL_USED = VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED;

/** The AVAIL and USED bits of a descriptor the driver makes available under wrap counter `w`. */
export const availBits = (w: number): number => (w !== 0 ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED);

/** Whether `flags` mark a used element under wrap counter `w`: AVAIL and USED both equal to it. */
export const isUsed = (flags: number, w: number): boolean => (flags & AVAIL_USED) === (w !== 0 ? AVAIL_USED : 0);

/** The twins: what the kernels do, readable, and their oracle in test/vhost/twins.test.ts. */
class VirtioPackedTwin implements VirtioPackedOps {
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly view: DataView;

  constructor(heap: Heap) {
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.view = heap.view;
  }

  rx(s: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const w = s >>> 2;
    const st = s >>> 3;
    const desc = u32[w + VQG_W_DESC]!;
    const num = u32[w + VQG_W_NUM]!;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const limit = u32[w + VQG_W_LIMIT]!;
    const free = u32[w + VQG_W_FREE]! >>> 1;
    const numFree = f[st + G_NUM_FREE]!;
    const cap = u32[w + VQG_W_CAP]!;
    const port = u32[w + VQG_W_PORT]!;
    const stats = u32[w + VQG_W_STATS]! >>> 3;
    const b = burst >>> 2;
    let pos = f[st + G_LAST_USED]!;
    let wrap = f[st + G_USED_WRAP]!;
    let i = 0;
    let bytes = 0;
    for (; i < n; i++) {
      const d = desc + pos * PDESC_SIZE;
      if (!isUsed(Atomics.load(u16, (d + 14) >>> 1), wrap)) break;
      const id = u16[(d + 12) >>> 1]!;
      const len = u32[(d + 8) >>> 2]!;
      if (id >= limit) break;
      const m = u32[sw + id]!;
      if (m === 0 || len <= NET_HDR_SIZE || len > cap) break;
      const hdr = u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(m << MBUF_HALF_SHIFT) + H_DATA_OFF]! - NET_HDR_SIZE;
      if (this.view.getUint16(hdr + HDR_NUM_BUFFERS, true) !== 1) break;
      u32[sw + id] = 0;
      u16[free + numFree + i] = id;
      const dataLen = len - NET_HDR_SIZE;
      u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = dataLen;
      u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = dataLen;
      u16[(m << MBUF_HALF_SHIFT) + H_PORT] = port;
      u32[b + i] = m;
      bytes += dataLen;
      if (++pos === num) {
        pos = 0;
        wrap ^= 1;
      }
    }
    f[st + G_LAST_USED] = pos;
    f[st + G_USED_WRAP] = wrap;
    f[st + G_NUM_FREE] = numFree + i;
    if (i > 0) {
      f[stats + RXQ_PACKETS] += i;
      f[stats + RXQ_BYTES] += bytes;
    }
    return i;
  }

  rxFill(s: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const w = s >>> 2;
    const st = s >>> 3;
    const free = u32[w + VQG_W_FREE]! >>> 1;
    const numFree = f[st + G_NUM_FREE]!;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const desc = u32[w + VQG_W_DESC]!;
    const num = u32[w + VQG_W_NUM]!;
    const offset = u32[w + VQG_W_HEADROOM]!;
    const cap = u32[w + VQG_W_CAP]!;
    const gpaHi = u32[w + VQG_W_GPA_HI]!;
    const b = burst >>> 2;
    let pos = f[st + G_AVAIL_IDX]!;
    let wrap = f[st + G_AVAIL_WRAP]!;
    for (let i = 0; i < n; i++) {
      const id = u16[free + numFree - 1 - i]!;
      const m = u32[b + i]!;
      u32[sw + id] = m;
      const d = desc + pos * PDESC_SIZE;
      u32[d >>> 2] = u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + offset;
      u32[(d >>> 2) + 1] = gpaHi;
      u32[(d >>> 2) + 2] = cap;
      u16[(d >>> 1) + 6] = id;
      Atomics.store(u16, (d >>> 1) + 7, VRING_DESC_F_WRITE | availBits(wrap));
      if (++pos === num) {
        pos = 0;
        wrap ^= 1;
      }
    }
    f[st + G_AVAIL_IDX] = pos;
    f[st + G_AVAIL_WRAP] = wrap;
    f[st + G_NUM_FREE] = numFree - n;
    return n;
  }

  tx(s: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const view = this.view;
    const w = s >>> 2;
    const st = s >>> 3;
    const nextFree = u32[w + VQG_W_NEXT_FREE]! >>> 1;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const ndesc = u32[w + VQG_W_NDESC]! >>> 1;
    const desc = u32[w + VQG_W_DESC]!;
    const num = u32[w + VQG_W_NUM]!;
    const gpaHi = u32[w + VQG_W_GPA_HI]!;
    const stats = u32[w + VQG_W_STATS]! >>> 3;
    let pos = f[st + G_AVAIL_IDX]!;
    let wrap = f[st + G_AVAIL_WRAP]!;
    let freeHead = f[st + G_FREE_HEAD]!;
    let numFree = f[st + G_NUM_FREE]!;
    const b = burst >>> 2;
    let i = 0;
    let bytes = 0;
    for (; i < n && numFree > 0; i++) {
      const m = u32[b + i]!;
      const dataOff = u16[(m << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
      if (u16[(m << MBUF_HALF_SHIFT) + H_REFCNT] !== 1 || u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS] !== 1 || (u32[(m << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI]! & OlFlagsHi.INDIRECT) !== 0 || dataOff < NET_HDR_SIZE) break;
      const hdr = u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + dataOff - NET_HDR_SIZE;
      // Written only when not already zero: the host read this line last time round.
      if ((view.getUint32(hdr, true) | view.getUint32(hdr + 4, true) | view.getUint32(hdr + 8, true)) !== 0) {
        view.setUint32(hdr, 0, true);
        view.setUint32(hdr + 4, 0, true);
        view.setUint32(hdr + 8, 0, true);
      }
      const id = freeHead;
      const d = desc + pos * PDESC_SIZE;
      u32[d >>> 2] = hdr;
      u32[(d >>> 2) + 1] = gpaHi;
      u32[(d >>> 2) + 2] = u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]! + NET_HDR_SIZE;
      u16[(d >>> 1) + 6] = id;
      u32[sw + id] = m;
      u16[ndesc + id] = 1;
      Atomics.store(u16, (d >>> 1) + 7, availBits(wrap));
      if (++pos === num) {
        pos = 0;
        wrap ^= 1;
      }
      freeHead = u16[nextFree + id]!;
      numFree--;
      bytes += u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    }
    f[st + G_AVAIL_IDX] = pos;
    f[st + G_AVAIL_WRAP] = wrap;
    f[st + G_FREE_HEAD] = freeHead;
    f[st + G_NUM_FREE] = numFree;
    if (i > 0) {
      f[stats + TXQ_PACKETS] += i;
      f[stats + TXQ_BYTES] += bytes;
    }
    return i;
  }

  txCleanup(s: number, _lc: number, stage: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const w = s >>> 2;
    const st = s >>> 3;
    const desc = u32[w + VQG_W_DESC]!;
    const num = u32[w + VQG_W_NUM]!;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const nextFree = u32[w + VQG_W_NEXT_FREE]! >>> 1;
    const ndesc = u32[w + VQG_W_NDESC]! >>> 1;
    const inOrder = (u32[w + VQG_W_FLAGS]! & VQG_F_IN_ORDER) !== 0;
    const out = stage >>> 2;
    let pos = f[st + G_LAST_USED]!;
    let wrap = f[st + G_USED_WRAP]!;
    let freeHead = f[st + G_FREE_HEAD]!;
    let numFree = f[st + G_NUM_FREE]!;
    let oldest = f[st + G_OLDEST]!;
    let bad = 0;
    let k = 0;
    while (k < n) {
      const d = desc + pos * PDESC_SIZE;
      if (!isUsed(Atomics.load(u16, (d + 14) >>> 1), wrap)) break;
      const id = u16[(d + 12) >>> 1]!;
      let adv = 0;
      if (id >= num || u32[sw + id] === 0) {
        bad++; // not in flight: skip the element
        adv = 1;
      } else if (inOrder) {
        // The element may stand for a batch: every chain from the oldest through `id` is done.
        for (;;) {
          u32[out + k++] = u32[sw + oldest]!;
          u32[sw + oldest] = 0;
          adv += u16[ndesc + oldest]!;
          const done = oldest === id;
          oldest = u16[nextFree + oldest]!;
          if (done) break;
        }
      } else {
        u32[out + k++] = u32[sw + id]!;
        u32[sw + id] = 0;
        adv = u16[ndesc + id]!;
        u16[nextFree + id] = freeHead;
        freeHead = id;
      }
      numFree += adv;
      pos += adv;
      if (pos >= num) {
        pos -= num;
        wrap ^= 1;
      }
    }
    f[st + G_LAST_USED] = pos;
    f[st + G_USED_WRAP] = wrap;
    f[st + G_FREE_HEAD] = freeHead;
    f[st + G_NUM_FREE] = numFree;
    f[st + G_OLDEST] = oldest;
    if (bad > 0) f[st + G_BAD_USED] += bad;
    return k;
  }
}
