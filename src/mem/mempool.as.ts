// The mempool's per-burst kernels (twins: MempoolTwin in mempool.twin.ts, same
// signatures): rte_mempool_get_bulk / put_bulk and rte_pktmbuf_alloc_bulk on
// one lcore's cache, refilled and flushed through the pool's ring, one call
// per burst. `pool` is the pool header's heap offset, `lc` the calling
// thread's lcore block (the lcore id DPDK reads from thread-local storage),
// `objs` a burst's heap offset. Debug pools never come here (their checks
// live in TypeScript).
import { LCORE_ID } from '../eal/heap-layout.as';
import { MBUF_SHIFT, PORT_INVALID } from './mbuf-layout.as';
import { CACHE_OBJS, CACHE_STRIDE, POOL_CACHE_BASE, POOL_CACHE_SIZE, POOL_FLUSH, POOL_HEADROOM, POOL_RING } from './mempool-layout.as';
import { ringDequeueBulk, ringEnqueueBulk } from '../ring/ring.as';

/** Heap offset of lcore block `lc`'s cache of `pool`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function cacheOf(pool: u32, lc: u32): u32 {
  return load<u32>(pool + POOL_CACHE_BASE) + load<u32>(lc, LCORE_ID) * CACHE_STRIDE;
}

/**
 * rte_mempool_get_bulk: `n` handles into `objs`, hot ones first from the
 * lcore's cache; a short cache hands out what it has and is refilled
 * through the pool's ring with its size plus the shortfall, or the shortfall
 * comes from the ring directly. Returns n, or 0 (nothing changed) when the
 * pool holds fewer than n.
 */
export function mempoolGetBulk(pool: u32, lc: u32, objs: u32, n: u32): u32 {
  const size = load<u32>(pool + POOL_CACHE_SIZE);
  const ring = load<u32>(pool + POOL_RING);
  if (size == 0) return ringDequeueBulk(ring, objs, n);
  const cache = cacheOf(pool, lc);
  const cacheObjs = cache + CACHE_OBJS;
  const len = load<u32>(cache);
  const top = cacheObjs + ((len - 1) << 2);
  if (n <= len) {
    for (let i: u32 = 0; i < n; i++) store<u32>(objs + (i << 2), load<u32>(top - (i << 2)));
    store<u32>(cache, len - n);
    return n;
  }
  for (let i: u32 = 0; i < len; i++) store<u32>(objs + (i << 2), load<u32>(top - (i << 2)));
  const remaining = n - len;
  if (remaining <= size) {
    const fill = size + remaining;
    if (ringDequeueBulk(ring, cacheObjs, fill) == fill) {
      const last = cacheObjs + ((fill - 1) << 2);
      for (let i: u32 = 0; i < remaining; i++) store<u32>(objs + ((len + i) << 2), load<u32>(last - (i << 2)));
      store<u32>(cache, size);
      return n;
    }
  }
  if (ringDequeueBulk(ring, objs + (len << 2), remaining) == remaining) {
    store<u32>(cache, 0);
    return n;
  }
  return 0; // the cache's handles were only copied: it is intact
}

/**
 * rte_mempool_put_bulk: onto the lcore's cache, flushing the whole cache to
 * the ring first when `n` more would pass its flush threshold, or straight
 * to the ring when `n` alone passes it (or the pool has no cache). Returns
 * n, or 0 when the ring refused them (more handles than the pool holds: the
 * caller reports the double free); nothing changed then.
 */
export function mempoolPutBulk(pool: u32, lc: u32, objs: u32, n: u32): u32 {
  const ring = load<u32>(pool + POOL_RING);
  const flush = load<u32>(pool + POOL_FLUSH);
  if (load<u32>(pool + POOL_CACHE_SIZE) == 0 || n > flush) return ringEnqueueBulk(ring, objs, n);
  const cache = cacheOf(pool, lc);
  const cacheObjs = cache + CACHE_OBJS;
  let len = load<u32>(cache);
  if (len + n > flush) {
    if (ringEnqueueBulk(ring, cacheObjs, len) != len) return 0;
    len = 0;
  }
  memory.copy(cacheObjs + (len << 2), objs, n << 2);
  store<u32>(cache, len + n);
  return n;
}

/**
 * rte_pktmbuf_alloc_bulk: getBulk, then each handle reset as
 * rte_pktmbuf_alloc does. Returns n, or 0 (nothing changed).
 */
export function mempoolAllocBulk(pool: u32, lc: u32, objs: u32, n: u32): u32 {
  // Words 0..3: dataOff = headroom, refcnt 1, nbSegs 1, port invalid, pktLen 0,
  // dataLen 0, vlanTci 0; words 4..9 all zero.
  const head = i32x4(load<u32>(pool + POOL_HEADROOM) | (1 << 16), 1 | (PORT_INVALID << 16), 0, 0);
  const zero = i32x4.splat(0);
  const size = load<u32>(pool + POOL_CACHE_SIZE);
  const cache = cacheOf(pool, lc);
  const len: u32 = size == 0 ? 0 : load<u32>(cache);
  if (n <= len) {
    // The common case in one pass: pop from the cache and reset.
    const top = cache + CACHE_OBJS + ((len - 1) << 2);
    for (let i: u32 = 0; i < n; i++) {
      const h = load<u32>(top - (i << 2));
      store<u32>(objs + (i << 2), h);
      const r = h << MBUF_SHIFT;
      v128.store(r, head);
      v128.store(r, zero, 16);
      store<u64>(r, 0, 32);
    }
    store<u32>(cache, len - n);
    return n;
  }
  if (mempoolGetBulk(pool, lc, objs, n) != n) return 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    v128.store(r, head);
    v128.store(r, zero, 16);
    store<u64>(r, 0, 32);
  }
  return n;
}
