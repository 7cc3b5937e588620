// Per-burst mbuf bookkeeping: the fast paths of Mempool.allocBulk and
// Mbufs.freeBulk, one call per burst. Each handles the common case in full
// and returns how far it got; the TypeScript twin does the rest (cache
// refill and flush through the ring, chains, clones, debug pools).
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
  Q_BYTES,
  Q_PACKETS,
} from './layout';

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

/**
 * Pops `n` handles from lcore `lcore`'s cache of the pool whose header is at
 * `pool` into the burst at `objs`, resetting each as rte_pktmbuf_alloc does.
 * Returns n, or 0 (nothing changed) when the cache holds fewer than n.
 */
export function allocBulk(pool: u32, lcore: u32, objs: u32, n: u32): u32 {
  if (load<u32>(pool + POOL_CACHE_SIZE) == 0) return 0;
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
  const len = load<u32>(cache);
  if (n > len) return 0;
  // Words 0..3: dataOff = headroom, refcnt 1, nbSegs 1, port invalid, pktLen 0,
  // dataLen 0, vlanTci 0; words 4..9 all zero.
  const head = i32x4(load<u32>(pool + POOL_HEADROOM) | (1 << 16), 1 | (PORT_INVALID << 16), 0, 0);
  const zero = i32x4.splat(0);
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

/**
 * Frees the leading mbufs of the burst that are direct, single-segment,
 * referenced once and of the first mbuf's pool, pushing them onto lcore
 * `lcore`'s cache while it stays under its flush threshold.
 * Returns how many it freed; the caller frees the rest.
 */
export function freeBulk(objs: u32, n: u32, lcore: u32): u32 {
  const first = load<u32>(objs);
  if (n == 0 || first == 0) return 0; // NULL handles take the general path, which skips them
  const poolId = load<u32>(first << MBUF_SHIFT, M_BUF_LEN_POOL) >>> 16;
  const pool = load<u32>(HEAP_POOL_TABLE + (poolId << 2));
  if ((load<u32>(pool + POOL_FLAGS) & POOL_F_DEBUG) != 0) return 0;
  if (load<u32>(pool + POOL_CACHE_SIZE) == 0) return 0;
  const cache = load<u32>(pool + POOL_CACHE_BASE) + lcore * CACHE_STRIDE;
  const len = load<u32>(cache);
  const flush = load<u32>(pool + POOL_FLUSH);
  const room = len < flush ? flush - len : 0;
  const m = n < room ? n : room;
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

// ---- net_null's whole per-burst work in one call ------------------------
// (twins: NullRxQueue.rxBurst and NullTxQueue.txBurst in src/drivers/null/)

const M_PKT_LEN_B: u32 = 8;
const M_DATA_LEN_B: u32 = 12;
const M_PORT_B: u32 = 6;
/** Queue counters (ethdev/stats.ts): Float64 slots from the block's start. */

/**
 * net_null rx: allocBulk from the lcore cache, then every packet `len`
 * bytes from `port`, then the queue's packet and byte counters at `stats`
 * (a heap byte offset). Returns n, or 0 when the cache is short (the caller
 * takes the TypeScript path, which refills through the ring).
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
 * what the fast path can. Returns how many it freed; the caller frees the
 * rest (chains, clones, a full cache).
 */
export function nullTx(objs: u32, n: u32, lcore: u32, stats: u32): u32 {
  let bytes: u32 = 0;
  for (let i: u32 = 0; i < n; i++) bytes += load<u32>(load<u32>(objs + (i << 2)) << MBUF_SHIFT, M_PKT_LEN_B);
  store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>n, Q_PACKETS);
  store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  return freeBulk(objs, n, lcore);
}
