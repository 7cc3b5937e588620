/**
 * virtio_user's per-burst common case, the wasm kernels (virtio-rxtx.as.ts)
 * or their TypeScript twins (here, same signatures), chosen once when a queue
 * is opened (`virtioOps`). Arguments are heap byte offsets: `s` the queue's
 * block (guest-ring.record.ts), `lc` the calling thread's lcore block (unused:
 * none allocates), `burst` a burst.
 */
import type { Heap } from '../../eal/heap.js';
import { RXQ_BYTES, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import { H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, H_REFCNT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, OlFlagsHi, W_BUF_ADDR, W_OL_FLAGS_HI, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE } from '../../virtio/virtio-net.js';
import { DESC_SIZE, VRING_DESC_F_WRITE } from '../../virtio/vring.js';
import {
  G_AVAIL_IDX,
  G_BAD_USED,
  G_FREE_HEAD,
  G_LAST_USED,
  G_NUM_FREE,
  G_OLDEST,
  VQG_F_IN_ORDER,
  VQG_W_AVAIL_RING,
  VQG_W_CAP,
  VQG_W_DESC,
  VQG_W_FLAGS,
  VQG_W_FREE,
  VQG_W_GPA_HI,
  VQG_W_HEADROOM,
  VQG_W_IDX,
  VQG_W_LIMIT,
  VQG_W_MASK,
  VQG_W_NDESC,
  VQG_W_NEXT_FREE,
  VQG_W_NUM,
  VQG_W_PORT,
  VQG_W_READY,
  VQG_W_STATS,
  VQG_W_SW,
  VQG_W_USED,
} from './guest-ring-layout.js';

export interface VirtioOps {
  /** Rx with MRG_RXBUF: one-buffer packets from the block's `ready` used entries. @returns entries taken (one packet each). */
  rx(s: number, lc: number, burst: number, n: number): number;
  /** Posts the `n` fresh mbufs of `burst` as one-descriptor buffers. @returns the new avail index (not yet published). */
  rxFill(s: number, lc: number, burst: number, n: number): number;
  /** One-segment packets with their header pushed, from the block's `idx`. @returns how many it queued. */
  tx(s: number, lc: number, burst: number, n: number): number;
  /** Takes back the `n` ready used entries, their packets staged in `stage`. @returns how many it staged. */
  txCleanup(s: number, lc: number, stage: number, n: number): number;
}

/** The kernels when the heap has them, else the twins. */
export function virtioOps(heap: Heap): VirtioOps {
  const k = heap.kernels;
  if (k === null) return new VirtioTwin(heap);
  return { rx: k.fn('virtioRx'), rxFill: k.fn('virtioRxFill'), tx: k.fn('virtioTx'), txCleanup: k.fn('virtioTxCleanup') };
}

/** The twins: what the kernels do, readable, and their oracle in test/vhost/twins.test.ts. */
class VirtioTwin implements VirtioOps {
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
    const usedRing = u32[w + VQG_W_USED]!;
    const mask = u32[w + VQG_W_MASK]!;
    const lastUsed = f[st + G_LAST_USED]!;
    const ready = u32[w + VQG_W_READY]!;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const limit = u32[w + VQG_W_LIMIT]!;
    const free = u32[w + VQG_W_FREE]! >>> 1;
    const numFree = f[st + G_NUM_FREE]!;
    const cap = u32[w + VQG_W_CAP]!;
    const port = u32[w + VQG_W_PORT]!;
    const stats = u32[w + VQG_W_STATS]! >>> 3;
    const b = burst >>> 2;
    const max = n < ready ? n : ready;
    let i = 0;
    let bytes = 0;
    for (; i < max; i++) {
      const e = (usedRing + 4 + 8 * ((lastUsed + i) & mask)) >>> 2;
      const id = u32[e]!;
      const len = u32[e + 1]!;
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
    }
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
    const availRing = u32[w + VQG_W_AVAIL_RING]! >>> 1;
    const mask = u32[w + VQG_W_MASK]!;
    const idx = f[st + G_AVAIL_IDX]!;
    const offset = u32[w + VQG_W_HEADROOM]!;
    const cap = u32[w + VQG_W_CAP]!;
    const gpaHi = u32[w + VQG_W_GPA_HI]!;
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const head = u16[free + numFree - n + i]!;
      const m = u32[b + i]!;
      u32[sw + head] = m;
      const d = (desc + head * DESC_SIZE) >>> 2;
      u32[d] = u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + offset;
      u32[d + 1] = gpaHi;
      u32[d + 2] = cap;
      u32[d + 3] = VRING_DESC_F_WRITE | ((head + 1) << 16);
      const slot = availRing + ((idx + i) & mask);
      if (u16[slot] !== head) u16[slot] = head;
    }
    f[st + G_NUM_FREE] = numFree - n;
    return (idx + n) & 0xffff;
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
    const availRing = u32[w + VQG_W_AVAIL_RING]! >>> 1;
    const mask = u32[w + VQG_W_MASK]!;
    const idx = u32[w + VQG_W_IDX]!;
    const gpaHi = u32[w + VQG_W_GPA_HI]!;
    const stats = u32[w + VQG_W_STATS]! >>> 3;
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
      const head = freeHead;
      const next = u16[nextFree + head]!;
      const d = (desc + head * DESC_SIZE) >>> 2;
      u32[d] = hdr;
      u32[d + 1] = gpaHi;
      u32[d + 2] = u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]! + NET_HDR_SIZE;
      u32[d + 3] = next << 16;
      u32[sw + head] = m;
      u16[ndesc + head] = 1;
      const slot = availRing + ((idx + i) & mask);
      if (u16[slot] !== head) u16[slot] = head;
      freeHead = next;
      numFree--;
      bytes += u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    }
    f[st + G_FREE_HEAD] = freeHead;
    f[st + G_NUM_FREE] = numFree;
    if (i > 0) {
      f[stats + TXQ_PACKETS] += i;
      f[stats + TXQ_BYTES] += bytes;
    }
    return i;
  }

  txCleanup(s: number, _lc: number, stage: number, ready: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const w = s >>> 2;
    const st = s >>> 3;
    const lastUsed = f[st + G_LAST_USED]!;
    const sw = u32[w + VQG_W_SW]! >>> 2;
    const nextFree = u32[w + VQG_W_NEXT_FREE]! >>> 1;
    const ndesc = u32[w + VQG_W_NDESC]! >>> 1;
    const out = stage >>> 2;
    if ((u32[w + VQG_W_FLAGS]! & VQG_F_IN_ORDER) !== 0) {
      // In order: the `ready` oldest chains are done, nothing to relink.
      let oldest = f[st + G_OLDEST]!;
      let numFree = f[st + G_NUM_FREE]!;
      let k = 0;
      for (; k < ready; k++) {
        const m = u32[sw + oldest]!;
        if (m === 0) break; // the device claims more than is in flight
        u32[out + k] = m;
        u32[sw + oldest] = 0;
        const nd = u16[ndesc + oldest]!;
        for (let j = 0; j < nd; j++) oldest = u16[nextFree + oldest]!;
        numFree += nd;
      }
      f[st + G_OLDEST] = oldest;
      f[st + G_NUM_FREE] = numFree;
      f[st + G_LAST_USED] = (lastUsed + ready) & 0xffff;
      if (k < ready) f[st + G_BAD_USED] += ready - k;
      return k;
    }
    const usedRing = u32[w + VQG_W_USED]!;
    const mask = u32[w + VQG_W_MASK]!;
    const num = u32[w + VQG_W_NUM]!;
    let freeHead = f[st + G_FREE_HEAD]!;
    let numFree = f[st + G_NUM_FREE]!;
    let bad = 0;
    let k = 0;
    for (let i = 0; i < ready; i++) {
      const id = u32[(usedRing + 4 + 8 * ((lastUsed + i) & mask)) >>> 2]!;
      if (id >= num || u32[sw + id] === 0) {
        bad++;
        continue;
      }
      u32[out + k++] = u32[sw + id]!;
      u32[sw + id] = 0;
      const nd = u16[ndesc + id]!;
      let last = id;
      for (let j = 1; j < nd; j++) last = u16[nextFree + last]!;
      u16[nextFree + last] = freeHead;
      freeHead = id;
      numFree += nd;
    }
    f[st + G_FREE_HEAD] = freeHead;
    f[st + G_NUM_FREE] = numFree;
    f[st + G_LAST_USED] = (lastUsed + ready) & 0xffff;
    if (bad > 0) f[st + G_BAD_USED] += bad;
    return k;
  }
}
