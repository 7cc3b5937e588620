// net_af_xdp's ring walks, one call per burst (twins: af-xdp.twin.ts, same
// signatures). `q` is the queue's block (af-xdp.record.ts), whose ring
// pointers lead into the heap windows where the XDP socket's rings are
// mapped; `lc` the calling thread's lcore block; `burst` a burst's heap
// offset. A ring's index the kernel writes is read with an atomic load before
// the entries it covers; the index dpkit writes is stored atomically after
// the entries (wasm atomics are sequentially consistent, which gives the
// acquire and release the kernel's rings expect). The UMEM is the pool's
// arena, so rx hands up the mbufs the kernel filled and tx hands the kernel
// the mbufs themselves: no packet byte is copied unless a packet comes from
// another pool.
import { RXQ_STAT_BYTES, RXQ_STAT_NOMBUF, RXQ_STAT_PACKETS, TXQ_STAT_BYTES, TXQ_STAT_ERRORS, TXQ_STAT_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { mbufFreeBulk, mtod } from '../../mem/mbuf.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NB_SEGS, M_NEXT, M_PKT_LEN, M_PORT, M_REFCNT } from '../../mem/mbuf-layout.as';
import { mempoolAllocBulk } from '../../mem/mempool.as';
import {
  AFXQ_A_CONS,
  AFXQ_A_DESCS,
  AFXQ_A_FLAGS,
  AFXQ_A_MASK,
  AFXQ_A_PROD,
  AFXQ_ARENA,
  AFXQ_ARENA_END,
  AFXQ_B_CONS,
  AFXQ_B_DESCS,
  AFXQ_B_FLAGS,
  AFXQ_B_MASK,
  AFXQ_B_PROD,
  AFXQ_BUSY,
  AFXQ_FIRST,
  AFXQ_FRAME_CAP,
  AFXQ_FREED,
  AFXQ_FRONT,
  AFXQ_HELD,
  AFXQ_KICK,
  AFXQ_OWNED,
  AFXQ_POOL,
  AFXQ_PORT,
  AFXQ_SCRATCH,
  AFXQ_SCRATCH_COUNT,
  AFXQ_SG,
  AFXQ_STATS,
  AFXQ_STRIDE,
  AFXQ_TARGET,
  AFXQ_UMEM,
  XDP_PKT_CONTD,
  XDP_RING_NEED_WAKEUP,
  XDPD_ADDR_HI,
  XDPD_ADDR_LO,
  XDPD_LEN,
  XDPD_OPTIONS,
  XSK_OFFSET_SHIFT,
} from './af-xdp-layout.as';

/**
 * Hands the kernel fresh mbufs' buffers through the fill ring until it holds
 * `target` (at most the scratch array's worth per call), marking each owned.
 * When the pool is short it hands none and counts them as rx_nombuf.
 */
function refill(q: u32, lc: u32): void {
  const held = load<u32>(q, AFXQ_HELD);
  let want = load<u32>(q, AFXQ_TARGET) - held;
  const cap = load<u32>(q, AFXQ_SCRATCH_COUNT);
  if (want > cap) want = cap;
  if (want == 0) return;
  const scratch = load<u32>(q, AFXQ_SCRATCH);
  if (mempoolAllocBulk(load<u32>(q, AFXQ_POOL), lc, scratch, want) != want) {
    const stats = load<u32>(q, AFXQ_STATS);
    store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + <f64>want, RXQ_STAT_NOMBUF);
    return;
  }
  const umem = load<u32>(q, AFXQ_UMEM);
  const arena = load<u32>(q, AFXQ_ARENA);
  const stride = load<u32>(q, AFXQ_STRIDE);
  const owned = load<u32>(q, AFXQ_OWNED);
  const prodAt = load<u32>(q, AFXQ_B_PROD);
  const descs = load<u32>(q, AFXQ_B_DESCS);
  const mask = load<u32>(q, AFXQ_B_MASK);
  const prod = load<u32>(prodAt);
  for (let j: u32 = 0; j < want; j++) {
    const buf = load<u32>(load<u32>(scratch + (j << 2)) << MBUF_SHIFT, M_BUF_ADDR);
    store<u8>(owned + (buf - arena) / stride, 1);
    const e = descs + (((prod + j) & mask) << 3);
    store<u32>(e, buf - umem);
    store<u32>(e, 0, 4);
  }
  atomic.store<u32>(prodAt, prod + want);
  store<u32>(q, held + want, AFXQ_HELD);
}

/**
 * net_af_xdp rx (af_xdp_rx_zc): the packets the kernel filled, at most `n`,
 * each descriptor naming the buffer of the mbuf it goes up in: that mbuf gets
 * the data offset and length, without a copy. A multi-buffer packet (every
 * descriptor but its last marked XDP_PKT_CONTD) becomes a chain of those
 * mbufs; the head gets the packet's length, segment count and the port. Only
 * whole packets are taken. Then the fill ring is topped up from the pool.
 * Returns how many packets are in `burst`; sets the block's `kick` when
 * nothing came and the kernel wants a wake-up (or busy polling is on). A
 * descriptor outside the arena is skipped.
 */
export function afXdpRx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const consAt = load<u32>(q, AFXQ_A_CONS);
  const cons = load<u32>(consAt);
  const avail = atomic.load<u32>(load<u32>(q, AFXQ_A_PROD)) - cons;
  const descs = load<u32>(q, AFXQ_A_DESCS);
  const mask = load<u32>(q, AFXQ_A_MASK);
  let i: u32 = 0;
  let got: u32 = 0;
  if (avail != 0) {
    const umem = load<u32>(q, AFXQ_UMEM);
    const arena = load<u32>(q, AFXQ_ARENA);
    const arenaEnd = load<u32>(q, AFXQ_ARENA_END);
    const stride = load<u32>(q, AFXQ_STRIDE);
    const first = load<u32>(q, AFXQ_FIRST);
    const owned = load<u32>(q, AFXQ_OWNED);
    const port = load<u32>(q, AFXQ_PORT);
    let bytes: u32 = 0;
    while (got < n && i < avail) {
      let end = i;
      while (end < avail && (load<u32>(descs + (((cons + end) & mask) << 4), XDPD_OPTIONS) & XDP_PKT_CONTD) != 0) end++;
      if (end == avail) break; // the packet's last fragment is not there yet
      let head: u32 = 0;
      let prev: u32 = 0;
      let total: u32 = 0;
      let segs: u32 = 0;
      for (; i <= end; i++) {
        const d = descs + (((cons + i) & mask) << 4);
        const at = umem + load<u32>(d, XDPD_ADDR_LO);
        if (at < arena || at >= arenaEnd) continue;
        const idx = (at - arena) / stride;
        const len = load<u32>(d, XDPD_LEN);
        const h = first + idx;
        const r = h << MBUF_SHIFT;
        store<u8>(owned + idx, 0);
        store<u16>(r, <u16>(at + (load<u32>(d, XDPD_ADDR_HI) >>> XSK_OFFSET_SHIFT) - load<u32>(r, M_BUF_ADDR)), M_DATA_OFF);
        store<u16>(r, <u16>len, M_DATA_LEN);
        if (head == 0) head = h;
        else store<u32>(prev << MBUF_SHIFT, h, M_NEXT);
        prev = h;
        total += len;
        segs++;
      }
      if (head == 0) continue;
      const r = head << MBUF_SHIFT;
      store<u32>(r, total, M_PKT_LEN);
      store<u16>(r, <u16>segs, M_NB_SEGS);
      store<u16>(r, <u16>port, M_PORT);
      store<u32>(burst + (got << 2), head);
      got++;
      bytes += total;
    }
    atomic.store<u32>(consAt, cons + i);
    store<u32>(q, load<u32>(q, AFXQ_HELD) - i, AFXQ_HELD);
    const stats = load<u32>(q, AFXQ_STATS);
    store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>got, RXQ_STAT_PACKETS);
    store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>bytes, RXQ_STAT_BYTES);
  }
  refill(q, lc);
  const wake = i == 0 && (load<u32>(q, AFXQ_BUSY) != 0 || (atomic.load<u32>(load<u32>(q, AFXQ_B_FLAGS)) & XDP_RING_NEED_WAKEUP) != 0);
  store<u32>(q, wake ? 1 : 0, AFXQ_KICK);
  return got;
}

/**
 * Frees the mbufs whose buffers the completion ring says the kernel has
 * sent, in scratch-sized runs (mbufFreeBulk), and clears their owned bytes.
 */
function reap(q: u32, lc: u32): void {
  const consAt = load<u32>(q, AFXQ_B_CONS);
  let cons = load<u32>(consAt);
  let m = atomic.load<u32>(load<u32>(q, AFXQ_B_PROD)) - cons;
  if (m == 0) return;
  const descs = load<u32>(q, AFXQ_B_DESCS);
  const mask = load<u32>(q, AFXQ_B_MASK);
  const umem = load<u32>(q, AFXQ_UMEM);
  const arena = load<u32>(q, AFXQ_ARENA);
  const arenaEnd = load<u32>(q, AFXQ_ARENA_END);
  const stride = load<u32>(q, AFXQ_STRIDE);
  const first = load<u32>(q, AFXQ_FIRST);
  const owned = load<u32>(q, AFXQ_OWNED);
  const scratch = load<u32>(q, AFXQ_SCRATCH);
  const cap = load<u32>(q, AFXQ_SCRATCH_COUNT);
  while (m != 0) {
    const run = m < cap ? m : cap;
    let c: u32 = 0;
    for (let j: u32 = 0; j < run; j++) {
      const at = umem + load<u32>(descs + (((cons + j) & mask) << 3));
      if (at < arena || at >= arenaEnd) continue;
      const idx = (at - arena) / stride;
      store<u8>(owned + idx, 0);
      store<u32>(scratch + (c << 2), first + idx);
      c++;
    }
    mbufFreeBulk(lc, scratch, c);
    cons += run;
    m -= run;
  }
  atomic.store<u32>(consAt, cons);
}

/**
 * net_af_xdp tx (af_xdp_tx_zc): reaps the completion ring, then puts each
 * packet, in order, on the tx ring while it has room: an mbuf of the UMEM's
 * pool (not shared; a chain only when the socket has XDP_USE_SG, one
 * descriptor per segment, each segment unlinked to complete alone) goes as
 * it is, its buffers now the kernel's;
 * any other is copied into a fresh mbuf of that pool (a chain gathered), and
 * the original moves to the front of `burst` to be freed, as does a packet
 * longer than `frameCap` (dropped, counted as an error). Stops early when the
 * ring is full or the pool is empty. Returns how many it took; writes into
 * the block how many it moved to the front (`front`), the free's result
 * for them (`freed`), and whether the kernel wants a wake-up (`kick`).
 */
export function afXdpTx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  reap(q, lc);
  const prodAt = load<u32>(q, AFXQ_A_PROD);
  const consAt = load<u32>(q, AFXQ_A_CONS);
  const prod = load<u32>(prodAt);
  const mask = load<u32>(q, AFXQ_A_MASK);
  const room = mask + 1 - (prod - atomic.load<u32>(consAt));
  const descs = load<u32>(q, AFXQ_A_DESCS);
  const umem = load<u32>(q, AFXQ_UMEM);
  const arena = load<u32>(q, AFXQ_ARENA);
  const arenaEnd = load<u32>(q, AFXQ_ARENA_END);
  const stride = load<u32>(q, AFXQ_STRIDE);
  const first = load<u32>(q, AFXQ_FIRST);
  const owned = load<u32>(q, AFXQ_OWNED);
  const cap = load<u32>(q, AFXQ_FRAME_CAP);
  const pool = load<u32>(q, AFXQ_POOL);
  const scratch = load<u32>(q, AFXQ_SCRATCH);
  const sg = load<u32>(q, AFXQ_SG);
  let i: u32 = 0;
  let sent: u32 = 0;
  let pkts: u32 = 0;
  let bytes: u32 = 0;
  let errors: u32 = 0;
  let front: u32 = 0;
  for (; i < n && sent < room; i++) {
    const h = load<u32>(burst + (i << 2));
    const r = h << MBUF_SHIFT;
    const len = load<u32>(r, M_PKT_LEN);
    // Zero-copy when every segment is an mbuf of the arena with its own buffer, not shared (a chain only with sg).
    let segs: u32 = 0;
    for (let s = h; s != 0; s = load<u32>(s << MBUF_SHIFT, M_NEXT)) {
      const sr = s << MBUF_SHIFT;
      const sb = load<u32>(sr, M_BUF_ADDR);
      if (sb < arena || sb >= arenaEnd || first + (sb - arena) / stride != s || load<u16>(sr, M_REFCNT) != 1) {
        segs = 0;
        break;
      }
      segs++;
    }
    if (segs > 1 && sg == 0) segs = 0;
    if (segs != 0) {
      if (segs > room - sent) break; // not all its fragments fit: the caller keeps it
      for (let s = h; s != 0; ) {
        const sr = s << MBUF_SHIFT;
        const next = load<u32>(sr, M_NEXT);
        const sb = load<u32>(sr, M_BUF_ADDR);
        store<u8>(owned + (sb - arena) / stride, 1);
        const d = descs + (((prod + sent) & mask) << 4);
        store<u32>(d, sb + <u32>load<u16>(sr, M_DATA_OFF) - umem, XDPD_ADDR_LO);
        store<u32>(d, 0, XDPD_ADDR_HI);
        store<u32>(d, <u32>load<u16>(sr, M_DATA_LEN), XDPD_LEN);
        store<u32>(d, next != 0 ? XDP_PKT_CONTD : 0, XDPD_OPTIONS);
        if (next != 0) {
          // Each segment comes back on its own from the completion ring and is freed alone.
          store<u32>(sr, 0, M_NEXT);
          store<u16>(sr, 1, M_NB_SEGS);
        }
        sent++;
        s = next;
      }
    } else {
      if (len > cap) {
        errors++;
        store<u32>(burst + (front << 2), h);
        front++;
        continue;
      }
      if (mempoolAllocBulk(pool, lc, scratch, 1) != 1) break;
      const cr = load<u32>(scratch) << MBUF_SHIFT;
      let dst = mtod(cr);
      const addr = dst;
      for (let s = r; s != 0; s = load<u32>(s, M_NEXT) << MBUF_SHIFT) {
        const dl = <u32>load<u16>(s, M_DATA_LEN);
        copyBytes(dst, mtod(s), dl);
        dst += dl;
      }
      store<u8>(owned + (load<u32>(cr, M_BUF_ADDR) - arena) / stride, 1);
      store<u32>(burst + (front << 2), h);
      front++;
      const d = descs + (((prod + sent) & mask) << 4);
      store<u32>(d, addr - umem, XDPD_ADDR_LO);
      store<u32>(d, 0, XDPD_ADDR_HI);
      store<u32>(d, len, XDPD_LEN);
      store<u32>(d, 0, XDPD_OPTIONS);
      sent++;
    }
    pkts++;
    bytes += len;
  }
  atomic.store<u32>(prodAt, prod + sent);
  const waiting = prod + sent != atomic.load<u32>(consAt);
  store<u32>(q, waiting && (atomic.load<u32>(load<u32>(q, AFXQ_A_FLAGS)) & XDP_RING_NEED_WAKEUP) != 0 ? 1 : 0, AFXQ_KICK);
  const stats = load<u32>(q, AFXQ_STATS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_PACKETS) + <f64>pkts, TXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_BYTES) + <f64>bytes, TXQ_STAT_BYTES);
  if (errors != 0) store<f64>(stats, load<f64>(stats, TXQ_STAT_ERRORS) + <f64>errors, TXQ_STAT_ERRORS);
  store<u32>(q, front, AFXQ_FRONT);
  store<u32>(q, mbufFreeBulk(lc, burst, front), AFXQ_FREED);
  return i;
}
