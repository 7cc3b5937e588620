// net_null's whole per-burst work, one call per burst (twins: nullRxTs and
// nullTxTs in null.twin.ts, same signatures). `q` is the queue's block
// (null.record.ts), `lc` the calling thread's lcore block, `burst` a burst's
// heap offset. The pool get and the free are the memory layer's kernels,
// inlined here: one wasm module holds every kernel.
import { RXQ_STAT_BYTES, RXQ_STAT_NOMBUF, RXQ_STAT_PACKETS, TXQ_STAT_BYTES, TXQ_STAT_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { mbufFreeBulk, mtod } from '../../mem/mbuf.as';
import { MBUF_SHIFT, M_DATA_LEN, M_PKT_LEN, M_PORT } from '../../mem/mbuf-layout.as';
import { mempoolAllocBulk } from '../../mem/mempool.as';
import { NULLQ_DUMMY, NULLQ_FLAGS, NULLQ_F_COPY, NULLQ_F_NO_RX, NULLQ_POOL, NULLQ_PORT, NULLQ_SIZE, NULLQ_STATS } from './null-layout.as';

/**
 * net_null rx: `n` mbufs from the queue's pool (rte_pktmbuf_alloc_bulk), each
 * `size` bytes from `port`, with copy=1 the dummy packet's bytes copied in;
 * the queue's packet and byte counters. Returns n, or 0 and counts rx_nombuf
 * when the pool holds fewer than n; 0 with no-rx=1.
 */
export function nullRx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const flags = load<u32>(q, NULLQ_FLAGS);
  if ((flags & NULLQ_F_NO_RX) != 0) return 0;
  const stats = load<u32>(q, NULLQ_STATS);
  if (mempoolAllocBulk(load<u32>(q, NULLQ_POOL), lc, burst, n) != n) {
    store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + <f64>n, RXQ_STAT_NOMBUF);
    return 0;
  }
  const len = load<u32>(q, NULLQ_SIZE);
  const port = load<u32>(q, NULLQ_PORT);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u16>(r, <u16>port, M_PORT);
  }
  if ((flags & NULLQ_F_COPY) != 0) {
    const src = load<u32>(q, NULLQ_DUMMY);
    for (let i: u32 = 0; i < n; i++) copyBytes(mtod(load<u32>(burst + (i << 2)) << MBUF_SHIFT), src, len);
  }
  store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>n, RXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>n * <f64>len, RXQ_STAT_BYTES);
  return n;
}

/**
 * net_null tx: with copy=1 the first min(dataLen, size) bytes of each packet
 * copied to the dummy packet; the queue's packet and byte counters; then the
 * burst freed as mbufFreeBulk does. Returns mbufFreeBulk's result: the caller
 * frees the packets from there on (clones) or reports a refusal.
 */
export function nullTx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  if ((load<u32>(q, NULLQ_FLAGS) & NULLQ_F_COPY) != 0) {
    const dst = load<u32>(q, NULLQ_DUMMY);
    const size = load<u32>(q, NULLQ_SIZE);
    for (let i: u32 = 0; i < n; i++) {
      const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
      const dl = <u32>load<u16>(r, M_DATA_LEN);
      copyBytes(dst, mtod(r), dl < size ? dl : size);
    }
  }
  let bytes: u32 = 0;
  for (let i: u32 = 0; i < n; i++) bytes += load<u32>(load<u32>(burst + (i << 2)) << MBUF_SHIFT, M_PKT_LEN);
  const stats = load<u32>(q, NULLQ_STATS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_PACKETS) + <f64>n, TXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_BYTES) + <f64>bytes, TXQ_STAT_BYTES);
  return mbufFreeBulk(lc, burst, n);
}
