/**
 * The vhost fast path's per-burst work, the wasm kernels (vhost-queue.as.ts)
 * or their TypeScript twins (here, same signatures), chosen once when a
 * VhostQueue is opened (`vhostOps`). Arguments are heap byte offsets: `q` the
 * vring's data-path block (vhost-queue.record.ts), `lc` the calling thread's
 * lcore block (unused: neither allocates), `burst` a burst.
 */
import type { Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import { H_DATA_LEN, H_PORT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_NEXT, W_PKT_LEN } from '../mem/mbuf-layout.js';
import { translateIn } from '../virtio/guest-memory.js';
import { NET_HDR_SIZE, putRxHeader } from '../virtio/virtio-net.js';
import { DESC_SIZE, VRING_DESC_F_WRITE } from '../virtio/vring.js';
import { PackedTwin } from './vhost-packed.twin.js';
import { VQ_F_AVAIL_PER_PACKET, VQ_W_ADDRS, VQ_W_AVAIL, VQ_W_AVAIL_RING, VQ_W_DESC, VQ_W_FLAGS, VQ_W_LAST_AVAIL, VQ_W_MASK, VQ_W_NUM, VQ_W_PORT, VQ_W_SEG_ROOM, VQ_W_TABLE, VQ_W_USED, VQ_W_USED_IDX } from './vhost-queue-layout.js';

export interface VhostOps {
  /** Enqueue's common case for as many packets as take it. @returns how many it enqueued. */
  enqueue(q: number, lc: number, burst: number, n: number): number;
  /** Dequeue's common case into the burst's fresh mbufs. @returns how many it took. */
  dequeue(q: number, lc: number, burst: number, n: number): number;
  /** Enqueue's common case over a packed ring (vhost-packed.as.ts). @returns how many it enqueued. */
  enqueuePacked(q: number, lc: number, burst: number, n: number): number;
  /** Dequeue's common case over a packed ring. @returns how many it took. */
  dequeuePacked(q: number, lc: number, burst: number, n: number): number;
}

/** The kernels when the heap has them, else the twins. */
export function vhostOps(heap: Heap, mb: Mbufs): VhostOps {
  const k = heap.kernels;
  if (k === null) {
    const split = new VhostTwin(heap, mb);
    const packed = new PackedTwin(heap, mb);
    return {
      enqueue: (q, lc, b, n) => split.enqueue(q, lc, b, n),
      dequeue: (q, lc, b, n) => split.dequeue(q, lc, b, n),
      enqueuePacked: (q, lc, b, n) => packed.enqueue(q, lc, b, n),
      dequeuePacked: (q, lc, b, n) => packed.dequeue(q, lc, b, n),
    };
  }
  return { enqueue: k.fn('vhostEnqueue'), dequeue: k.fn('vhostDequeue'), enqueuePacked: k.fn('vhostPackedEnqueue'), dequeuePacked: k.fn('vhostPackedDequeue') };
}

/** The twins: what the kernels do, readable, and their oracle in test/vhost/twins.test.ts. */
class VhostTwin {
  private readonly u8: Uint8Array;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly view: DataView;

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
  ) {
    this.u8 = heap.u8;
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.view = heap.view;
  }

  enqueue(q: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const w = q >>> 2;
    const desc = u32[w + VQ_W_DESC]!;
    const availRing = u32[w + VQ_W_AVAIL_RING]!;
    const usedRing = u32[w + VQ_W_USED]!;
    const mask = u32[w + VQ_W_MASK]!;
    const num = u32[w + VQ_W_NUM]!;
    const table = u32[w + VQ_W_TABLE]! >>> 3;
    const perPacket = (u32[w + VQ_W_FLAGS]! & VQ_F_AVAIL_PER_PACKET) !== 0;
    const lastAvail = u32[w + VQ_W_LAST_AVAIL]!;
    const usedIdx = u32[w + VQ_W_USED_IDX]!;
    let avail = u32[w + VQ_W_AVAIL]!;
    const dsts = u32[w + VQ_W_ADDRS]! >>> 2;
    const b = burst >>> 2;
    let i = 0;
    for (; i < n; i++) {
      if (perPacket) {
        avail = (Atomics.load(u16, (availRing - 2) >>> 1) - lastAvail) & 0xffff;
        if (avail > num) break;
      }
      if (i >= avail) break;
      const m = u32[b + i]!;
      const need = NET_HDR_SIZE + u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      const head = u16[(availRing >>> 1) + ((lastAvail + i) & mask)]!;
      if (head >= num) break;
      const dw = (desc + head * DESC_SIZE) >>> 2;
      if ((u32[dw + 3]! & 0xffff) !== VRING_DESC_F_WRITE || u32[dw + 2]! < need) break;
      const at = translateIn(this.f64, table, u32[dw + 1]! * 4294967296 + u32[dw]!, need);
      if (at < 0) break;
      u32[dsts + i] = at;
      const e = (usedRing + 4 + 8 * ((usedIdx + i) & mask)) >>> 2;
      u32[e] = head;
      u32[e + 1] = need;
    }
    const view = this.view;
    const mb = this.mb;
    for (let k = 0; k < i; k++) {
      const dst = u32[dsts + k]!;
      // The header: all zero but num_buffers = 1 (meaningful with MRG_RXBUF, ignored without).
      putRxHeader(view, dst);
      let p = dst + NET_HDR_SIZE;
      for (let s = u32[b + k]!; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
        const len = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
        const src = mb.mtod(s);
        this.u8.copyWithin(p, src, src + len);
        p += len;
      }
    }
    return i;
  }

  dequeue(q: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const w = q >>> 2;
    const desc = u32[w + VQ_W_DESC]!;
    const availRing = u32[w + VQ_W_AVAIL_RING]!;
    const usedRing = u32[w + VQ_W_USED]!;
    const mask = u32[w + VQ_W_MASK]!;
    const num = u32[w + VQ_W_NUM]!;
    const table = u32[w + VQ_W_TABLE]! >>> 3;
    const port = u32[w + VQ_W_PORT]!;
    const lastAvail = u32[w + VQ_W_LAST_AVAIL]!;
    const usedIdx = u32[w + VQ_W_USED_IDX]!;
    const segRoom = u32[w + VQ_W_SEG_ROOM]!;
    const srcs = u32[w + VQ_W_ADDRS]! >>> 2;
    const b = burst >>> 2;
    let i = 0;
    for (; i < n; i++) {
      const head = u16[(availRing >>> 1) + ((lastAvail + i) & mask)]!;
      if (head >= num) break;
      const dw = (desc + head * DESC_SIZE) >>> 2;
      const total = u32[dw + 2]!;
      if ((u32[dw + 3]! & 0xffff) !== 0 || total <= NET_HDR_SIZE || total - NET_HDR_SIZE > segRoom) break;
      const at = translateIn(this.f64, table, u32[dw + 1]! * 4294967296 + u32[dw]!, total);
      if (at < 0) break;
      const len = total - NET_HDR_SIZE;
      const m = u32[b + i]!;
      u32[srcs + i] = at + NET_HDR_SIZE;
      u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = len;
      u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
      u16[(m << MBUF_HALF_SHIFT) + H_PORT] = port;
      const e = (usedRing + 4 + 8 * ((usedIdx + i) & mask)) >>> 2;
      u32[e] = head;
      u32[e + 1] = 0;
    }
    const mb = this.mb;
    for (let k = 0; k < i; k++) {
      const m = u32[b + k]!;
      const dst = mb.mtod(m);
      const src = u32[srcs + k]!;
      this.u8.copyWithin(dst, src, src + u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]!);
    }
    return i;
  }
}
