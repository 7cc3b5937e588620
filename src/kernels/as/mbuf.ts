// Per-burst mbuf bookkeeping: Mempool.allocBulk and the fast part of
// Mbufs.freeBulk, one call per burst, cache refill and flush through the
// pool's ring included. The TypeScript side keeps chains, clones and debug
// pools (the free kernel returns how far it got).
import {
  CACHE_OBJS,
  CACHE_STRIDE,
  HEAP_POOL_TABLE,
  MBUF_SHIFT,
  M_BUF_LEN_POOL,
  M_DATA_OFF_REFCNT,
  M_NB_SEGS_PORT,
  M_NEXT,
  M_OL_FLAGS_HI,
  OL_HI_INDIRECT,
  POOL_CACHE_BASE,
  POOL_CACHE_SIZE,
  POOL_FLAGS,
  POOL_FLUSH,
  POOL_F_DEBUG,
  POOL_HEADROOM,
  PORT_INVALID,
  POOL_RING,
  POOL_FIRST,
  POOL_N,
  M_REFCNT,
  M_NB_SEGS,
  FREE_PENDING_SZ,
  Q_BYTES,
  RING_CAPACITY,
  RING_CONS_HEAD,
  RING_CONS_TAIL,
  RING_MASK,
  RING_PROD_HEAD,
  RING_PROD_TAIL,
  RING_SLOTS,
  Q_PACKETS,
} from './layout';
import { ringDequeueBulk, ringEnqueueBulk } from './ring';

// Exported so tests can check this layout against the TypeScript side.
export const layoutHeapPoolTable: u32 = HEAP_POOL_TABLE;
export const layoutPoolHeadroom: u32 = POOL_HEADROOM;
export const layoutPoolCacheSize: u32 = POOL_CACHE_SIZE;
export const layoutPoolFlush: u32 = POOL_FLUSH;
export const layoutPoolCacheBase: u32 = POOL_CACHE_BASE;
export const layoutPoolFlags: u32 = POOL_FLAGS;
export const layoutPoolFDebug: u32 = POOL_F_DEBUG;
export const layoutCacheStride: u32 = CACHE_STRIDE;
export const layoutCacheObjs: u32 = CACHE_OBJS;
export const layoutMbufShift: u32 = MBUF_SHIFT;
export const layoutMDataOffRefcnt: u32 = M_DATA_OFF_REFCNT;
export const layoutMNbSegsPort: u32 = M_NB_SEGS_PORT;
export const layoutMOlFlagsHi: u32 = M_OL_FLAGS_HI;
export const layoutMNext: u32 = M_NEXT;
export const layoutMBufLenPool: u32 = M_BUF_LEN_POOL;
export const layoutOlHiIndirect: u32 = OL_HI_INDIRECT;
export const layoutPortInvalid: u32 = PORT_INVALID;
export const layoutPoolRing: u32 = POOL_RING;
export const layoutRingMask: u32 = RING_MASK;
export const layoutRingCapacity: u32 = RING_CAPACITY;
export const layoutRingProdHead: u32 = RING_PROD_HEAD;
export const layoutRingProdTail: u32 = RING_PROD_TAIL;
export const layoutRingConsHead: u32 = RING_CONS_HEAD;
export const layoutRingConsTail: u32 = RING_CONS_TAIL;
export const layoutRingSlots: u32 = RING_SLOTS;
export const layoutPoolFirst: u32 = POOL_FIRST;
export const layoutPoolN: u32 = POOL_N;
export const layoutMRefcnt: u32 = M_REFCNT;
export const layoutMNbSegs: u32 = M_NB_SEGS;
export const layoutFreePendingSz: u32 = FREE_PENDING_SZ;

// @ts-ignore: decorator
@inline
function resetAll(pool: u32, objs: u32, n: u32): void {
  // Words 0..3: dataOff = headroom, refcnt 1, nbSegs 1, port invalid, pktLen 0,
  // dataLen 0, vlanTci 0; words 4..9 all zero.
  const head = i32x4(load<u32>(pool + POOL_HEADROOM) | (1 << 16), 1 | (PORT_INVALID << 16), 0, 0);
  const zero = i32x4.splat(0);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    v128.store(r, head);
    v128.store(r, zero, 16);
    store<u64>(r, 0, 32);
  }
}

/**
 * rte_mempool_get_bulk for lcore `lcore` on the pool whose header is at
 * `pool` (twin: Mempool.getBulk): `n` handles into `objs`, hot ones first from
 * the lcore's cache; a short cache hands out what it has and is refilled
 * through the pool's ring with its size plus the shortfall, or the shortfall
 * comes from the ring directly. Returns n, or 0 (nothing changed) when the
 * pool holds fewer than n.
 */
export function getBulk(pool: u32, lcore: u32, objs: u32, n: u32): u32 {
  const size = load<u32>(pool + POOL_CACHE_SIZE);
  const ring = load<u32>(pool + POOL_RING);
  if (size == 0) return ringDequeueBulk(ring, objs, n);
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
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
 * rte_mempool_put_bulk (twin: Mempool.putBulk): onto lcore `lcore`'s cache,
 * flushing the whole cache to the ring first when `n` more would pass its
 * flush threshold, or straight to the ring when `n` alone passes it (or the
 * pool has no cache). Returns n, or 0 when the ring refused them (more
 * handles than the pool holds: the caller reports the double free); nothing
 * changed then.
 */
export function putBulk(pool: u32, lcore: u32, objs: u32, n: u32): u32 {
  const ring = load<u32>(pool + POOL_RING);
  const flush = load<u32>(pool + POOL_FLUSH);
  if (load<u32>(pool + POOL_CACHE_SIZE) == 0 || n > flush) return ringEnqueueBulk(ring, objs, n);
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
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
 * rte_pktmbuf_alloc_bulk (twin: Mempool.allocBulkTs): getBulk, then each
 * handle reset as rte_pktmbuf_alloc does. Returns n, or 0 (nothing changed).
 */
export function allocBulk(pool: u32, lcore: u32, objs: u32, n: u32): u32 {
  // Words 0..3: dataOff = headroom, refcnt 1, nbSegs 1, port invalid, pktLen 0,
  // dataLen 0, vlanTci 0; words 4..9 all zero.
  const head = i32x4(load<u32>(pool + POOL_HEADROOM) | (1 << 16), 1 | (PORT_INVALID << 16), 0, 0);
  const zero = i32x4.splat(0);
  const size = load<u32>(pool + POOL_CACHE_SIZE);
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
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
  if (getBulk(pool, lcore, objs, n) != n) return 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    v128.store(r, head);
    v128.store(r, zero, 16);
    store<u64>(r, 0, 32);
  }
  return n;
}

/**
 * freeBulk's first step, for the common burst: the leading packets that are
 * one direct segment referenced once, of the first packet's pool, go
 * straight onto the lcore's cache in one pass, as many as fit under its
 * flush threshold and at most one run of 64 (what putBulk would do with them
 * without a flush). Returns how many.
 */
// @ts-ignore: decorator
@inline
function freeSimple(objs: u32, n: u32, lcore: u32): u32 {
  const first = load<u32>(objs);
  if (n == 0 || first == 0) return 0;
  const poolId = load<u32>(first << MBUF_SHIFT, M_BUF_LEN_POOL) >>> 16;
  const pool = load<u32>(HEAP_POOL_TABLE + (poolId << 2));
  if (pool == 0 || (load<u32>(pool + POOL_FLAGS) & POOL_F_DEBUG) != 0 || load<u32>(pool + POOL_CACHE_SIZE) == 0) return 0;
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
  const len = load<u32>(cache);
  const flush = load<u32>(pool + POOL_FLUSH);
  let m = len < flush ? flush - len : 0;
  if (m > n) m = n;
  if (m > FREE_PENDING_SZ) m = FREE_PENDING_SZ;
  const dst = cache + CACHE_OBJS + (len << 2);
  let i: u32 = 0;
  for (; i < m; i++) {
    const h = load<u32>(objs + (i << 2));
    const r = h << MBUF_SHIFT;
    const w0 = load<u32>(r, M_DATA_OFF_REFCNT);
    if (
      (w0 >>> 16) != 1 ||
      (load<u32>(r, M_NB_SEGS_PORT) & 0xffff) != 1 ||
      load<u32>(r, M_NEXT) != 0 ||
      (load<u32>(r, M_OL_FLAGS_HI) & OL_HI_INDIRECT) != 0 ||
      (load<u32>(r, M_BUF_LEN_POOL) >>> 16) != poolId
    ) {
      break;
    }
    store<u32>(r, w0 & 0xffff, M_DATA_OFF_REFCNT); // refcnt 0: in the pool
    store<u32>(dst + (i << 2), h);
  }
  store<u32>(cache, len + i);
  return i;
}

/** Returned by freeBulk when a pool's ring refused segments (a double free): the high bit, with the packet index. */
const FREE_REFUSED: u32 = 0x80000000;

/**
 * rte_pktmbuf_free_bulk for packets made of direct mbufs (twin:
 * Mbufs.freeBulkDirect): every segment of every packet, in order, is
 * released as rte_pktmbuf_prefree_seg does (the last reference: unchained,
 * refcnt 0; a shared one: one reference less, atomically) and returned with
 * one putBulk per run of up to 64 segments of one pool, gathered in
 * `pending` (64 handles of scratch), after freeSimple took the common
 * leading ones in one pass. NULL packets are skipped. Stops before
 * the first packet with an indirect segment, a segment at refcnt 0, of no
 * pool or of a debug pool: the TypeScript side frees (or reports) the rest.
 * Returns how many packets it freed, or FREE_REFUSED | index on a refused put.
 */
export function freeBulk(objs: u32, n: u32, lcore: u32, pending: u32): u32 {
  let p = freeSimple(objs, n, lcore);
  let nb: u32 = 0;
  let pool: u32 = 0;
  for (; p < n; p++) {
    const h = load<u32>(objs + (p << 2));
    // Check the whole chain before touching any of it.
    let ok = true;
    for (let s = h; s != 0; s = load<u32>(s << MBUF_SHIFT, M_NEXT)) {
      const r = s << MBUF_SHIFT;
      const mp = load<u32>(HEAP_POOL_TABLE + ((load<u32>(r, M_BUF_LEN_POOL) >>> 16) << 2));
      if (
        (load<u32>(r, M_OL_FLAGS_HI) & OL_HI_INDIRECT) != 0 ||
        (load<u32>(r, M_DATA_OFF_REFCNT) >>> 16) == 0 ||
        mp == 0 ||
        s - load<u32>(mp + POOL_FIRST) >= load<u32>(mp + POOL_N) || // not this pool's: a foreign handle
        (load<u32>(mp + POOL_FLAGS) & POOL_F_DEBUG) != 0
      ) {
        ok = false;
        break;
      }
    }
    if (!ok) break;
    for (let s = h; s != 0; ) {
      const r = s << MBUF_SHIFT;
      const next = load<u32>(r, M_NEXT);
      if (load<u16>(r, M_REFCNT) != 1 && atomic.sub<u16>(r + M_REFCNT, 1) != 1) {
        s = next; // another reference remains
        continue;
      }
      store<u32>(r, 0, M_NEXT);
      store<u16>(r, 1, M_NB_SEGS);
      store<u16>(r, 0, M_REFCNT);
      const mp = load<u32>(HEAP_POOL_TABLE + ((load<u32>(r, M_BUF_LEN_POOL) >>> 16) << 2));
      if (mp != pool || nb == FREE_PENDING_SZ) {
        if (nb > 0 && putBulk(pool, lcore, pending, nb) != nb) return FREE_REFUSED | p;
        pool = mp;
        nb = 0;
      }
      store<u32>(pending + (nb << 2), s);
      nb++;
      s = next;
    }
  }
  if (nb > 0 && putBulk(pool, lcore, pending, nb) != nb) return FREE_REFUSED | p;
  return p;
}

// ---- net_null's whole per-burst work in one call ------------------------
// (twins: NullRxQueue.rxBurst and NullTxQueue.txBurst in src/drivers/null/)

const M_PKT_LEN_B: u32 = 8;
const M_DATA_LEN_B: u32 = 12;
const M_PORT_B: u32 = 6;

/**
 * net_null rx: allocBulk (cache, refilled through the ring when short), then
 * every packet `len` bytes from `port`, then the queue's packet and byte
 * counters at `stats` (a heap byte offset). Returns n, or 0 when the pool
 * holds fewer than n (the caller counts rx_nombuf).
 */
export function nullRx(pool: u32, lcore: u32, objs: u32, n: u32, len: u32, port: u32, stats: u32): u32 {
  if (allocBulk(pool, lcore, objs, n) != n || n == 0) return 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    store<u32>(r, len, M_PKT_LEN_B);
    store<u16>(r, <u16>len, M_DATA_LEN_B);
    store<u16>(r, <u16>port, M_PORT_B);
  }
  store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>n, Q_PACKETS);
  store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>n * <f64>len, Q_BYTES);
  return n;
}

/**
 * net_null tx: counts the burst's packets and bytes into `stats`, then frees
 * it as freeBulk does (`pending`: its scratch). Returns freeBulk's result:
 * the caller frees the packets from there on (clones) or reports a refusal.
 */
export function nullTx(objs: u32, n: u32, lcore: u32, stats: u32, pending: u32): u32 {
  let bytes: u32 = 0;
  for (let i: u32 = 0; i < n; i++) bytes += load<u32>(load<u32>(objs + (i << 2)) << MBUF_SHIFT, M_PKT_LEN_B);
  store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>n, Q_PACKETS);
  store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  return freeBulk(objs, n, lcore, pending);
}
