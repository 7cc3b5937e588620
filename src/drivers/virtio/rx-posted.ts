/**
 * The mbufs an rx virtqueue has posted to the device, whatever the ring's
 * format (split: virtio-rxtx.ts, packed: virtio-packed.ts): which mbuf sits
 * at each buffer id, the free heads, and turning used buffers back into
 * packets — one buffer, a MRG_RXBUF chain of `num_buffers`, or a chain of
 * segsPerBuf descriptors posted together. What differs between the formats
 * is only where the next used element is read and how a buffer is posted;
 * each queue keeps that and hands this its `UsedCursor`.
 *
 * The device is not trusted: an id it was not given, a length past the
 * buffer or a wild num_buffers is counted and dropped here, never followed.
 */
import type { Burst, Heap } from '../../eal/heap.js';
import { RXQ_ERRORS } from '../../ethdev/stats.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_NEXT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { NET_HDR_SIZE } from '../../virtio/virtio-net.js';
import { G_BAD_USED, G_NUM_FREE, VQG_W_CAP, VQG_W_FREE, VQG_W_HEADROOM, VQG_W_LIMIT } from './guest-ring.js';
import type { VirtioRxDesc } from './virtio-rxtx.js';

/** Where a queue reads its used elements: the next one's buffer id and length, the cursor moved past it. */
export interface UsedCursor {
  /** Takes the next used element: its mbuf (0: a bad id, counted) ; its length is then `nextLen`. */
  takeNext(): number;
  readonly nextLen: number;
}

/** The views a queue already holds, shared rather than made again. */
export interface RxViews {
  u16: Uint16Array;
  u32: Uint32Array;
  f64: Float64Array;
  mb: Mbufs;
  /** The queue's block (VQG_W_*) as a u32 index, its state (G_*) and its stats (RXQ_*) as f64 indices. */
  w: number;
  st: number;
  stats: number;
}

export class RxPosted {
  readonly pool: Mempool;
  /** The mbuf posted at each descriptor (by buffer id); 0 where none is. */
  readonly sw: Burst;
  /** The free heads, G_NUM_FREE of them. */
  readonly free: Uint16Array;
  /** allocBulk's scratch, and chained()'s list of a chain's mbufs. */
  readonly refill: Burst;
  readonly heads: number;
  readonly mrg: boolean;
  /** Descriptors per posted buffer (1 with MRG_RXBUF). */
  readonly k: number;
  readonly limit: number;
  readonly rxFreeThresh: number;
  readonly port: number;
  /** Bytes a posted buffer holds, header included. */
  readonly cap: number;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly mb: Mbufs;
  private readonly st: number;
  private readonly stats: number;

  constructor(
    heap: Heap,
    d: VirtioRxDesc,
    v: RxViews,
    private readonly used: UsedCursor,
  ) {
    this.u16 = v.u16;
    this.u32 = v.u32;
    this.f64 = v.f64;
    this.mb = v.mb;
    this.st = v.st;
    this.stats = v.stats;
    this.pool = Mempool.attach(heap, { offset: d.pool });
    this.sw = heap.burstAt(d.ring.sw, d.ring.num);
    this.heads = Math.floor(d.ring.num / d.segsPerBuf);
    this.free = new Uint16Array(heap.buffer, d.freeHeads, this.heads);
    this.refill = heap.scratch('virtio rx refill', d.ring.num);
    this.mrg = d.mrg;
    this.k = d.segsPerBuf;
    this.limit = this.heads * this.k;
    this.port = d.port;
    this.rxFreeThresh = d.rxFreeThresh;
    this.cap = this.pool.bufLen - this.pool.headroom + NET_HDR_SIZE;
    // What the kernels read of the same queue.
    const u32 = this.u32;
    u32[v.w + VQG_W_CAP] = this.cap;
    u32[v.w + VQG_W_LIMIT] = this.limit;
    u32[v.w + VQG_W_FREE] = d.freeHeads;
    u32[v.w + VQG_W_HEADROOM] = this.pool.headroom - NET_HDR_SIZE;
  }

  /** Control plane, before the ring is handed to the device: every head free. */
  freeAll(): void {
    for (let j = 0; j < this.heads; j++) this.free[j] = j * this.k;
    this.f64[this.st + G_NUM_FREE] = this.heads;
  }

  /** The mbuf posted at buffer id `id`, taken back from the ring, or 0 (counted) when the device names one it was not given. */
  take(id: number): number {
    if (id >= this.limit || id % this.k !== 0 || this.sw[id] === 0) {
      this.f64[this.st + G_BAD_USED]++;
      return 0;
    }
    const m = this.sw[id]!;
    this.sw[id] = 0;
    this.free[this.f64[this.st + G_NUM_FREE]!] = id;
    this.f64[this.st + G_NUM_FREE]++;
    return m;
  }

  /** Puts back what take() just took (a packet whose rest is not used yet). */
  untake(id: number, m: number): void {
    this.f64[this.st + G_NUM_FREE]--;
    this.sw[id] = m;
  }

  /**
   * Builds a packet of `nb` used buffers (MRG_RXBUF), the first `m` (of `len`
   * bytes) already taken, the cursor at the second. @returns it, or 0 when dropped.
   */
  mergeable(m: number, len: number, nb: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const room = this.mb.tailroom(m);
    if (nb === 0 || nb > this.heads || len < NET_HDR_SIZE || len > room + NET_HDR_SIZE) {
      this.drop(m, nb >= 1 && nb <= this.heads ? nb - 1 : 0); // the caller saw all nb used
      return 0;
    }
    let pktLen = len - NET_HDR_SIZE;
    u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = pktLen;
    let tail = m;
    for (let b = 1; b < nb; b++) {
      const s = this.used.takeNext();
      const slen = this.used.nextLen;
      if (s === 0 || slen > room + NET_HDR_SIZE) {
        if (s !== 0) this.mb.free(s);
        this.drop(m, nb - b - 1);
        return 0;
      }
      // Only the first buffer holds a header: the others are data from the buffer's start.
      u16[(s << MBUF_HALF_SHIFT) + H_DATA_OFF] -= NET_HDR_SIZE;
      u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN] = slen;
      u32[(tail << MBUF_WORD_SHIFT) + W_NEXT] = s;
      tail = s;
      pktLen += slen;
    }
    u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = pktLen;
    u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS] = nb;
    u16[(m << MBUF_HALF_SHIFT) + H_PORT] = this.port;
    return m;
  }

  /** Frees a bad packet's first buffer and takes back the `more` used buffers that follow it. */
  private drop(m: number, more: number): void {
    this.mb.free(m);
    for (let b = 0; b < more; b++) {
      const s = this.used.takeNext();
      if (s !== 0) this.mb.free(s);
    }
    this.f64[this.stats + RXQ_ERRORS]++;
  }

  /** Without MRG_RXBUF: the used chain of k buffers at `id` (its head `m` taken) becomes a packet. @returns it, or 0 when dropped. */
  chained(id: number, m: number, len: number): number {
    const k = this.k;
    const u16 = this.u16;
    const u32 = this.u32;
    const cap = this.mb.tailroom(m) + NET_HDR_SIZE; // every buffer of the chain is laid out alike
    // The rest of the chain's mbufs, posted with the head.
    for (let s = 1; s < k; s++) {
      this.refill[s] = this.sw[id + s]!;
      this.sw[id + s] = 0;
    }
    if (len <= NET_HDR_SIZE || len > k * cap) {
      this.mb.free(m);
      for (let s = 1; s < k; s++) this.mb.free(this.refill[s]!);
      this.f64[this.stats + RXQ_ERRORS]++;
      return 0;
    }
    let left = len;
    let tail = m;
    let nsegs = 1;
    const first = left < cap ? left : cap;
    u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = first - NET_HDR_SIZE;
    left -= first;
    for (let s = 1; s < k; s++) {
      const seg = this.refill[s]!;
      if (left === 0) {
        this.mb.free(seg);
        continue;
      }
      const c = left < cap ? left : cap;
      u16[(seg << MBUF_HALF_SHIFT) + H_DATA_OFF] -= NET_HDR_SIZE;
      u16[(seg << MBUF_HALF_SHIFT) + H_DATA_LEN] = c;
      u32[(tail << MBUF_WORD_SHIFT) + W_NEXT] = seg;
      tail = seg;
      nsegs++;
      left -= c;
    }
    u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = len - NET_HDR_SIZE;
    u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS] = nsegs;
    u16[(m << MBUF_HALF_SHIFT) + H_PORT] = this.port;
    return m;
  }

  /** Returns every posted mbuf to its pool (the device has stopped). */
  releaseAll(): void {
    for (let i = 0; i < this.sw.length; i++) {
      if (this.sw[i] !== 0) this.mb.free(this.sw[i]!);
      this.sw[i] = 0;
    }
    this.f64[this.st + G_NUM_FREE] = 0;
  }
}
