// rte_pktmbuf_free_bulk's common case in one call per burst (twin:
// Mbufs.freeBulkDirect in mbuf.ts, same signature). The TypeScript side keeps
// chains of clones, debug pools and the reporting (the kernel returns how far
// it got). `lc` is the calling thread's lcore block: its lcore id selects the
// mempool caches, its pending array gathers runs of segments (on the stack
// in DPDK).
import { HEAP_POOL_TABLE, LCORE_PENDING, LCORE_PENDING_COUNT } from '../eal/heap-layout.as';
import {
  MBUF_SHIFT,
  M_BUF_ADDR,
  M_BUF_LEN,
  M_BUF_LEN_POOL,
  M_DATA_LEN,
  M_DATA_OFF,
  M_DATA_OFF_REFCNT,
  M_HASH,
  M_NB_SEGS,
  M_NEXT,
  M_OL_FLAGS,
  M_OL_FLAGS_HI,
  M_PKT_LEN,
  M_PKT_TYPE,
  M_PORT,
  M_REFCNT,
  M_TIMESTAMP,
  M_TSO_VLAN_OUTER,
  M_TX_OFFLOAD,
  M_VLAN_TCI,
  OL_HI_EXTERNAL,
  OL_HI_INDIRECT,
} from './mbuf-layout.as';
import { copyBytes } from './copy.as';
import { CACHE_OBJS, POOL_CACHE_SIZE, POOL_FIRST, POOL_FLAGS, POOL_FLUSH, POOL_F_DEBUG, POOL_N } from './mempool-layout.as';
import { cacheOf, mempoolPutBulk } from './mempool.as';

/** rte_pktmbuf_mtod for the record at byte `r` (`h << MBUF_SHIFT`): the heap offset of its data. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function mtod(r: u32): u32 {
  return load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
}

/**
 * freeBulk's first step, for the common burst: the leading packets that are
 * one direct segment referenced once, of the first packet's pool, go
 * straight onto the lcore's cache in one pass, as many as fit under its
 * flush threshold and at most one run of 64 (what putBulk would do with them
 * without a flush). Returns how many.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function freeSimple(lc: u32, objs: u32, n: u32): u32 {
  const first = load<u32>(objs);
  if (n == 0 || first == 0) return 0;
  const poolId = load<u32>(first << MBUF_SHIFT, M_BUF_LEN_POOL) >>> 16;
  const pool = load<u32>(HEAP_POOL_TABLE + (poolId << 2));
  if (pool == 0 || (load<u32>(pool + POOL_FLAGS) & POOL_F_DEBUG) != 0 || load<u32>(pool + POOL_CACHE_SIZE) == 0) return 0;
  const cache = cacheOf(pool, lc);
  const len = load<u32>(cache);
  const flush = load<u32>(pool + POOL_FLUSH);
  let m = len < flush ? flush - len : 0;
  if (m > n) m = n;
  if (m > LCORE_PENDING_COUNT) m = LCORE_PENDING_COUNT;
  const dst = cache + CACHE_OBJS + (len << 2);
  let i: u32 = 0;
  for (; i < m; i++) {
    const h = load<u32>(objs + (i << 2));
    const r = h << MBUF_SHIFT;
    // data_off, refcnt, nb_segs and port in one load; the five conditions
    // one test (each term is 0 when its condition holds), as V8 compiles an
    // `||` chain to a compare-and-branch a term.
    const w = load<u64>(r, M_DATA_OFF_REFCNT);
    const bad =
      (<u32>(w >> 16) ^ 0x10001) | // refcnt 1, nb_segs 1
      load<u32>(r, M_NEXT) |
      (load<u32>(r, M_OL_FLAGS_HI) & OL_HI_INDIRECT) |
      ((load<u32>(r, M_BUF_LEN_POOL) >>> 16) ^ poolId);
    if (bad != 0) break;
    store<u32>(r, <u32>w & 0xffff, M_DATA_OFF_REFCNT); // refcnt 0: in the pool
    store<u32>(dst + (i << 2), h);
  }
  store<u32>(cache, len + i);
  return i;
}

/** Returned by mbufFreeBulk when a pool's ring refused segments (a double free): the high bit, with the packet index. */
const FREE_REFUSED: u32 = 0x80000000;

/**
 * rte_pktmbuf_free_bulk for packets made of direct mbufs: every segment of
 * every packet, in order, is released as rte_pktmbuf_prefree_seg does (the
 * last reference: unchained, refcnt 0; a shared one: one reference less,
 * atomically) and returned with one putBulk per run of up to 64 segments of
 * one pool, gathered in the lcore block's pending array, after freeSimple
 * took the common leading ones in one pass. NULL packets are skipped. Stops
 * before the first packet with an indirect segment, a segment at refcnt 0,
 * of no pool or of a debug pool: the TypeScript side frees (or reports) the
 * rest. Returns how many packets it freed, or FREE_REFUSED | index on a
 * refused put.
 */
export function mbufFreeBulk(lc: u32, objs: u32, n: u32): u32 {
  const pending = lc + LCORE_PENDING;
  let p = freeSimple(lc, objs, n);
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
      if (mp != pool || nb == LCORE_PENDING_COUNT) {
        if (nb > 0 && mempoolPutBulk(pool, lc, pending, nb) != nb) return FREE_REFUSED | p;
        pool = mp;
        nb = 0;
      }
      store<u32>(pending + (nb << 2), s);
      nb++;
      s = next;
    }
  }
  if (nb > 0 && mempoolPutBulk(pool, lc, pending, nb) != nb) return FREE_REFUSED | p;
  return p;
}

/** Total pktLen of the `n` packets of the burst at `burst`: a queue's byte counter (twin: Mbufs.pktLenSumTs). */
export function mbufPktLenSum(burst: u32, n: u32): u32 {
  let sum: u32 = 0;
  for (let i: u32 = 0; i < n; i++) sum += load<u32>(load<u32>(burst + (i << 2)) << MBUF_SHIFT, M_PKT_LEN);
  return sum;
}

/**
 * rte_pktmbuf_copy over a burst (twin: mbufCopyTwin in mbuf.twin.ts): each
 * packet of `src` (all its segments) into the fresh single-segment mbuf at
 * the same index of `dst` (from rte_pktmbuf_alloc_bulk), with the header
 * fields rte_pktmbuf_copy copies and its ol_flags less INDIRECT and
 * EXTERNAL. Returns n, or the index of the first packet longer than its
 * destination's room (that one and the rest untouched): one segment per copy.
 */
export function mbufCopyBulk(src: u32, dst: u32, n: u32): u32 {
  for (let i: u32 = 0; i < n; i++) {
    const rs = load<u32>(src + (i << 2)) << MBUF_SHIFT;
    const rd = load<u32>(dst + (i << 2)) << MBUF_SHIFT;
    const room = <u32>load<u16>(rd, M_BUF_LEN) - <u32>load<u16>(rd, M_DATA_OFF);
    const len = load<u32>(rs, M_PKT_LEN);
    if (len > room) return i;
    const to = mtod(rd);
    // Segments until pktLen is copied, at most nbSegs of them (a corrupt chain stops early).
    let off: u32 = 0;
    let seg = rs;
    for (let k: u32 = <u32>load<u16>(rs, M_NB_SEGS); k > 0 && off < len; k--) {
      let l = <u32>load<u16>(seg, M_DATA_LEN);
      if (l > len - off) l = len - off;
      copyBytes(to + off, mtod(seg), l);
      off += l;
      const next = load<u32>(seg, M_NEXT);
      if (next == 0) break;
      seg = next << MBUF_SHIFT;
    }
    store<u16>(rd, <u16>load<u16>(rs, M_PORT), M_PORT);
    store<u32>(rd, off, M_PKT_LEN);
    store<u16>(rd, <u16>off, M_DATA_LEN);
    store<u16>(rd, load<u16>(rs, M_VLAN_TCI), M_VLAN_TCI);
    store<u32>(rd, load<u32>(rs, M_OL_FLAGS), M_OL_FLAGS);
    store<u32>(rd, load<u32>(rs, M_OL_FLAGS_HI) & ~(OL_HI_INDIRECT | OL_HI_EXTERNAL), M_OL_FLAGS_HI);
    store<u32>(rd, load<u32>(rs, M_PKT_TYPE), M_PKT_TYPE);
    store<u32>(rd, load<u32>(rs, M_TX_OFFLOAD), M_TX_OFFLOAD);
    store<u32>(rd, load<u32>(rs, M_TSO_VLAN_OUTER), M_TSO_VLAN_OUTER);
    store<u32>(rd, load<u32>(rs, M_HASH), M_HASH);
    store<u64>(rd, load<u64>(rs, M_TIMESTAMP), M_TIMESTAMP);
  }
  return n;
}
