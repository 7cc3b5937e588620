/**
 * The mempool's per-burst operations, wasm kernels (mempool.as.ts) or their
 * TypeScript twins (here, same signatures), chosen once when a pool is
 * opened (`mempoolOps`). Arguments are heap byte offsets: `pool` the pool
 * header, `lc` the calling thread's lcore block, `objs` a burst.
 */
import type { Heap } from '../eal/heap.js';
import { LCORE_W_ID } from '../eal/heap-layout.js';
import type { Ring } from '../ring/ring.js';
import { MBUF_SLOT_SHIFT, MBUF_WORD_SHIFT, PORT_INVALID, W_RESET_ZERO, W_DATA_OFF_REFCNT, W_NB_SEGS_PORT } from './mbuf-layout.js';
import { CACHE_STRIDE, CACHE_W_OBJS, P_CACHE_BASE, P_CACHE_SIZE, P_FLUSH, P_HEADROOM } from './mempool-layout.js';

export interface MempoolOps {
  /** rte_mempool_get_bulk: `n` handles into `objs`, hot ones first. @returns n, or 0 (nothing changed) when the pool holds fewer. */
  getBulk(pool: number, lc: number, objs: number, n: number): number;
  /** rte_mempool_put_bulk. @returns n, or 0 (nothing changed) when the ring refused them: more than the pool holds. */
  putBulk(pool: number, lc: number, objs: number, n: number): number;
  /** rte_pktmbuf_alloc_bulk: getBulk, then each mbuf reset. @returns n, or 0 (nothing changed). */
  allocBulk(pool: number, lc: number, objs: number, n: number): number;
}

/**
 * The kernels when the heap has them, else the twins; always the twins for a
 * debug pool (its checks live in TypeScript). `ring` is the pool's ring as
 * this thread opened it, which the twins refill and flush through.
 */
export function mempoolOps(heap: Heap, ring: Ring, debug: boolean): MempoolOps {
  const k = heap.kernels;
  if (k === null || debug) return new MempoolTwin(heap, ring);
  return { getBulk: k.fn('mempoolGetBulk'), putBulk: k.fn('mempoolPutBulk'), allocBulk: k.fn('mempoolAllocBulk') };
}

/** The twins: what the kernels do, readable, and the oracle test/kernels compares them with. */
export class MempoolTwin implements MempoolOps {
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;

  constructor(
    heap: Heap,
    private readonly ring: Ring,
  ) {
    this.u32 = heap.u32;
    this.f64 = heap.f64;
  }

  /** Word index of lcore `lc`'s cache of `pool` (its length; the stack from + CACHE_W_OBJS). */
  private cache(pool: number, lc: number): number {
    return (this.u32[(pool >>> 2) + P_CACHE_BASE]! + this.u32[(lc >>> 2) + LCORE_W_ID]! * CACHE_STRIDE) >>> 2;
  }

  getBulk(pool: number, lc: number, objs: number, n: number): number {
    const u32 = this.u32;
    const size = u32[(pool >>> 2) + P_CACHE_SIZE]!;
    const o = objs >>> 2;
    if (size === 0) return this.ring.dequeueBulk(u32, n, o);
    const cache = this.cache(pool, lc);
    const cacheObjs = cache + CACHE_W_OBJS;
    const len = u32[cache]!;
    const top = cacheObjs + len - 1;
    if (n <= len) {
      for (let i = 0; i < n; i++) u32[o + i] = u32[top - i]!;
      u32[cache] = len - n;
      return n;
    }
    // Short: hand out what the cache has, then take the rest through the ring.
    for (let i = 0; i < len; i++) u32[o + i] = u32[top - i]!;
    const remaining = n - len;
    if (remaining <= size) {
      const fill = size + remaining;
      if (this.ring.dequeueBulk(u32, fill, cacheObjs) === fill) {
        const last = cacheObjs + fill - 1;
        for (let i = 0; i < remaining; i++) u32[o + len + i] = u32[last - i]!;
        u32[cache] = size;
        return n;
      }
    }
    if (this.ring.dequeueBulk(u32, remaining, o + len) === remaining) {
      u32[cache] = 0;
      return n;
    }
    return 0; // the cache's handles were only copied: it is intact
  }

  putBulk(pool: number, lc: number, objs: number, n: number): number {
    const u32 = this.u32;
    const p = pool >>> 2;
    const flush = u32[p + P_FLUSH]!;
    if (u32[p + P_CACHE_SIZE] === 0 || n > flush) return this.ring.enqueueBulk(u32, n, objs >>> 2);
    const cache = this.cache(pool, lc);
    const cacheObjs = cache + CACHE_W_OBJS;
    let len = u32[cache]!;
    if (len + n > flush) {
      if (this.ring.enqueueBulk(u32, len, cacheObjs) !== len) return 0;
      len = 0;
    }
    u32.copyWithin(cacheObjs + len, objs >>> 2, (objs >>> 2) + n);
    u32[cache] = len + n;
    return n;
  }

  allocBulk(pool: number, lc: number, objs: number, n: number): number {
    const u32 = this.u32;
    const p = pool >>> 2;
    const o = objs >>> 2;
    const headroom = u32[p + P_HEADROOM]!;
    const cache = this.cache(pool, lc);
    const len = u32[p + P_CACHE_SIZE] === 0 ? 0 : u32[cache]!;
    if (n <= len) {
      // The common case in one pass: pop from the cache and reset.
      const top = cache + CACHE_W_OBJS + len - 1;
      for (let i = 0; i < n; i++) {
        const h = u32[top - i]!;
        u32[o + i] = h;
        this.reset(h, headroom);
      }
      u32[cache] = len - n;
      return n;
    }
    if (this.getBulk(pool, lc, objs, n) === 0) return 0;
    for (let i = 0; i < n; i++) this.reset(u32[o + i]!, headroom);
    return n;
  }

  /**
   * rte_pktmbuf_reset for a pool mbuf: dataOff = headroom, refcnt 1, one
   * segment, port invalid; words 2..9 are all zero after a reset, so four
   * 8-byte stores of +0.0 clear them. Pool mbufs are direct and own their
   * buffer: no olFlags bit survives.
   */
  private reset(h: number, headroom: number): void {
    const r = h << MBUF_WORD_SHIFT;
    this.u32[r + W_DATA_OFF_REFCNT] = headroom | (1 << 16);
    this.u32[r + W_NB_SEGS_PORT] = 1 | (PORT_INVALID << 16);
    const d = (h << MBUF_SLOT_SHIFT) + (W_RESET_ZERO >> 1);
    const f64 = this.f64;
    f64[d] = 0;
    f64[d + 1] = 0;
    f64[d + 2] = 0;
    f64[d + 3] = 0;
  }
}
