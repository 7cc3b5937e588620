/**
 * The TypeScript twins of the packed-ring kernels (vhost-packed.as.ts), same
 * signatures: what they do, readable, and their oracle in
 * test/vhost/packed.test.ts. `q` is the vring's data-path block
 * (vhost-queue.record.ts), with lastAvail and usedIdx as ring positions and
 * their wrap counters in `wrap`.
 */
import type { Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import { H_DATA_LEN, H_PORT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_NEXT, W_PKT_LEN } from '../mem/mbuf-layout.js';
import { translateIn } from '../virtio/guest-memory.js';
import { PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from '../virtio/packed-layout.js';
import { NET_HDR_SIZE, putRxHeader } from '../virtio/virtio-net.js';
import { VRING_DESC_F_WRITE } from '../virtio/vring.js';
import { VQ_WRAP_AVAIL, VQ_WRAP_USED, VQ_W_ADDRS, VQ_W_DESC, VQ_W_LAST_AVAIL, VQ_W_NUM, VQ_W_PORT, VQ_W_SEG_ROOM, VQ_W_TABLE, VQ_W_USED_IDX, VQ_W_WRAP } from './vhost-queue-layout.js';

const availBits = (w: number): number => (w !== 0 ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED);
const usedBits = (w: number): number => (w !== 0 ? VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED : 0);

export class PackedTwin {
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

  /** Writes the flags of `count` used elements from position `pos` under wrap counter `w`, in ring order. */
  private handBack(desc: number, num: number, pos: number, w: number, count: number, extra: number): void {
    for (let k = 0; k < count; k++) {
      Atomics.store(this.u16, (desc + pos * PDESC_SIZE + 14) >>> 1, usedBits(w) | extra);
      if (++pos === num) {
        pos = 0;
        w ^= 1;
      }
    }
  }

  enqueue(q: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const w = q >>> 2;
    const desc = u32[w + VQ_W_DESC]!;
    const num = u32[w + VQ_W_NUM]!;
    const table = u32[w + VQ_W_TABLE]! >>> 3;
    const wrap = u32[w + VQ_W_WRAP]!;
    const dsts = u32[w + VQ_W_ADDRS]! >>> 2;
    let pa = u32[w + VQ_W_LAST_AVAIL]!;
    let wa = (wrap & VQ_WRAP_AVAIL) !== 0 ? 1 : 0;
    let pu = u32[w + VQ_W_USED_IDX]!;
    let wu = (wrap & VQ_WRAP_USED) !== 0 ? 1 : 0;
    const pu0 = pu;
    const wu0 = wu;
    const b = burst >>> 2;
    let i = 0;
    for (; i < n; i++) {
      const d = desc + pa * PDESC_SIZE;
      const flags = Atomics.load(u16, (d + 14) >>> 1);
      if (flags !== (availBits(wa) | VRING_DESC_F_WRITE)) break; // not available, or chained, indirect, read-only
      const m = u32[b + i]!;
      const need = NET_HDR_SIZE + u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      if (u32[(d >>> 2) + 2]! < need) break;
      const at = translateIn(this.f64, table, u32[(d >>> 2) + 1]! * 4294967296 + u32[d >>> 2]!, need);
      if (at < 0) break;
      const id = u16[(d >>> 1) + 6]!;
      u32[dsts + i] = at;
      const u = desc + pu * PDESC_SIZE;
      u32[(u >>> 2) + 2] = need;
      u16[(u >>> 1) + 6] = id;
      if (++pa === num) {
        pa = 0;
        wa ^= 1;
      }
      if (++pu === num) {
        pu = 0;
        wu ^= 1;
      }
    }
    const view = this.view;
    const mb = this.mb;
    for (let k = 0; k < i; k++) {
      const dst = u32[dsts + k]!;
      putRxHeader(view, dst); // num_buffers = 1
      let p = dst + NET_HDR_SIZE;
      for (let s = u32[b + k]!; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
        const len = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
        const src = mb.mtod(s);
        this.u8.copyWithin(p, src, src + len);
        p += len;
      }
    }
    this.handBack(desc, num, pu0, wu0, i, VRING_DESC_F_WRITE);
    return i;
  }

  dequeue(q: number, _lc: number, burst: number, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const w = q >>> 2;
    const desc = u32[w + VQ_W_DESC]!;
    const num = u32[w + VQ_W_NUM]!;
    const table = u32[w + VQ_W_TABLE]! >>> 3;
    const port = u32[w + VQ_W_PORT]!;
    const segRoom = u32[w + VQ_W_SEG_ROOM]!;
    const wrap = u32[w + VQ_W_WRAP]!;
    const srcs = u32[w + VQ_W_ADDRS]! >>> 2;
    let pa = u32[w + VQ_W_LAST_AVAIL]!;
    let wa = (wrap & VQ_WRAP_AVAIL) !== 0 ? 1 : 0;
    let pu = u32[w + VQ_W_USED_IDX]!;
    let wu = (wrap & VQ_WRAP_USED) !== 0 ? 1 : 0;
    const pu0 = pu;
    const wu0 = wu;
    const b = burst >>> 2;
    let i = 0;
    for (; i < n; i++) {
      const d = desc + pa * PDESC_SIZE;
      if (Atomics.load(u16, (d + 14) >>> 1) !== availBits(wa)) break; // not available, or chained, indirect, writable
      const total = u32[(d >>> 2) + 2]!;
      if (total <= NET_HDR_SIZE || total - NET_HDR_SIZE > segRoom) break;
      const at = translateIn(this.f64, table, u32[(d >>> 2) + 1]! * 4294967296 + u32[d >>> 2]!, total);
      if (at < 0) break;
      const id = u16[(d >>> 1) + 6]!;
      const len = total - NET_HDR_SIZE;
      const m = u32[b + i]!;
      u32[srcs + i] = at + NET_HDR_SIZE;
      u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = len;
      u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
      u16[(m << MBUF_HALF_SHIFT) + H_PORT] = port;
      const u = desc + pu * PDESC_SIZE;
      u32[(u >>> 2) + 2] = 0;
      u16[(u >>> 1) + 6] = id;
      if (++pa === num) {
        pa = 0;
        wa ^= 1;
      }
      if (++pu === num) {
        pu = 0;
        wu ^= 1;
      }
    }
    const mb = this.mb;
    for (let k = 0; k < i; k++) {
      const m = u32[b + k]!;
      const dst = mb.mtod(m);
      const src = u32[srcs + k]!;
      this.u8.copyWithin(dst, src, src + u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]!);
    }
    this.handBack(desc, num, pu0, wu0, i, 0);
    return i;
  }
}
