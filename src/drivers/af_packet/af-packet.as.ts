// net_af_packet's ring walks, one call per burst (twins: af-packet.twin.ts,
// same signatures). `q` is the queue's block (af-packet.record.ts), whose
// frame table points into the heap window where the packet socket's rings
// are mapped; `lc` the calling thread's lcore block; `burst` a burst's heap
// offset. tp_status is the hand-over: an atomic load before a frame's bytes
// are read or written, an atomic store after (wasm atomics are sequentially
// consistent, which gives the acquire and release the kernel expects).
import { RXQ_STAT_BYTES, RXQ_STAT_NOMBUF, RXQ_STAT_PACKETS, TXQ_STAT_BYTES, TXQ_STAT_ERRORS, TXQ_STAT_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { mbufFreeBulk, mtod } from '../../mem/mbuf.as';
import { MBUF_SHIFT, M_BUF_LEN, M_DATA_LEN, M_DATA_OFF, M_NB_SEGS, M_NEXT, M_OL_FLAGS, M_PKT_LEN, M_PORT, M_VLAN_TCI, OL_RX_VLAN, OL_RX_VLAN_STRIPPED } from '../../mem/mbuf-layout.as';
import { mempoolAllocBulk } from '../../mem/mempool.as';
import {
  AFP_TX_DATA,
  AFPQ_COUNT,
  AFPQ_FRAMES,
  AFPQ_FRAME_CAP,
  AFPQ_FREED,
  AFPQ_FULL,
  AFPQ_HEAD,
  AFPQ_POOL,
  AFPQ_PORT,
  AFPQ_SEGS,
  AFPQ_SENT,
  AFPQ_STATS,
  TP2_LEN,
  TP2_MAC,
  TP2_SNAPLEN,
  TP2_STATUS,
  TP2_VLAN_TCI,
  TP_STATUS_AVAILABLE,
  TP_STATUS_CSUMNOTREADY,
  TP_STATUS_KERNEL,
  TP_STATUS_SEND_REQUEST,
  TP_STATUS_USER,
  TP_STATUS_VLAN_VALID,
} from './af-packet-layout.as';

/**
 * Copies `len` bytes from `src` into the fresh mbuf at record `r` and, past
 * its data room, into `extra` more fresh segments taken from the queue
 * block's segs array, chaining them.
 */
// @ts-ignore: decorator
@inline
function fillChain(q: u32, r: u32, src: u32, len: u32, room: u32, extra: u32): void {
  let n = len < room ? len : room;
  copyBytes(mtod(r), src, n);
  store<u16>(r, <u16>n, M_DATA_LEN);
  let done = n;
  let prev = r;
  for (let s: u32 = 0; s < extra; s++) {
    const h = load<u32>(q + AFPQ_SEGS + (s << 2));
    const sr = h << MBUF_SHIFT;
    n = len - done < room ? len - done : room;
    copyBytes(mtod(sr), src + done, n);
    store<u16>(sr, <u16>n, M_DATA_LEN);
    store<u32>(prev, h, M_NEXT);
    prev = sr;
    done += n;
  }
  store<u16>(r, <u16>(1 + extra), M_NB_SEGS);
}

/** A big-endian u16 (network order) at `p`. */
// @ts-ignore: decorator
@inline
function be16(p: u32): u32 {
  return bswap<u16>(load<u16>(p));
}

/**
 * Completes the TCP or UDP checksum of the `len`-byte frame at `p` (Ethernet,
 * one optional VLAN tag, IPv4 or IPv6 without extension headers), which the
 * sender left as the pseudo-header's sum (TP_STATUS_CSUMNOTREADY: checksum
 * offload, as every veth's sender does). The field already holds that sum,
 * so the checksum is the complement of the sum over the L4 bytes as they are.
 * Anything else is left alone. Little-endian words sum to the same ones'
 * complement sum, byte-swapped, so no word is swapped.
 */
function completeL4Csum(p: u32, len: u32): void {
  let l3 = p + 14;
  let type = be16(p + 12);
  if (type == 0x8100) {
    type = be16(p + 16);
    l3 += 4;
  }
  let l4: u32 = 0;
  let end: u32 = 0;
  let proto: u32 = 0;
  if (type == 0x0800) {
    l4 = l3 + ((<u32>load<u8>(l3) & 15) << 2);
    end = l3 + be16(l3 + 2);
    proto = load<u8>(l3, 9);
  } else if (type == 0x86dd) {
    l4 = l3 + 40;
    end = l4 + be16(l3 + 4);
    proto = load<u8>(l3, 6);
  } else {
    return;
  }
  const at: u32 = proto == 6 ? 16 : proto == 17 ? 6 : 0;
  if (at == 0 || end > p + len || l4 + at + 2 > end) return;
  let sum: u64 = 0;
  let q = l4;
  for (; q + 4 <= end; q += 4) sum += <u64>load<u32>(q);
  if (q + 2 <= end) {
    sum += <u64>load<u16>(q);
    q += 2;
  }
  if (q < end) sum += <u64>load<u8>(q);
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffffffff) + (sum >> 32);
  let s = <u32>sum;
  s = (s & 0xffff) + (s >>> 16);
  s = (s & 0xffff) + (s >>> 16);
  let c = ~s & 0xffff;
  if (c == 0 && proto == 17) c = 0xffff; // UDP: 0 means "no checksum"
  store<u16>(l4 + at, <u16>c);
}

/**
 * net_af_packet rx (eth_af_packet_rx): the frames the kernel handed over
 * (TP_STATUS_USER) from the queue's head, at most `n`, each copied into a
 * fresh mbuf (a chain when it is larger than the data room) stamped with its
 * length, the port and a stripped VLAN tag, and handed back (TP_STATUS_KERNEL).
 * Returns how many packets are in `burst`. When the pool is short it takes
 * none (rx_nombuf counts the frames it could not take) and leaves the frames
 * in the ring for the next call.
 */
export function afPacketRx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const frames = load<u32>(q, AFPQ_FRAMES);
  const count = load<u32>(q, AFPQ_COUNT);
  const head = load<u32>(q, AFPQ_HEAD);
  let k: u32 = 0;
  for (let f = head; k < n; k++) {
    if ((atomic.load<u32>(load<u32>(frames + (f << 2)) + TP2_STATUS) & TP_STATUS_USER) == 0) break;
    f = f + 1 == count ? 0 : f + 1;
  }
  if (k == 0) return 0;
  const pool = load<u32>(q, AFPQ_POOL);
  const stats = load<u32>(q, AFPQ_STATS);
  if (mempoolAllocBulk(pool, lc, burst, k) != k) {
    store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + <f64>k, RXQ_STAT_NOMBUF);
    return 0;
  }
  const port = load<u32>(q, AFPQ_PORT);
  let f = head;
  let bytes: u32 = 0;
  let i: u32 = 0;
  for (; i < k; i++) {
    const fr = load<u32>(frames + (f << 2));
    const len = load<u32>(fr, TP2_SNAPLEN);
    const src = fr + <u32>load<u16>(fr, TP2_MAC);
    const status = atomic.load<u32>(fr + TP2_STATUS);
    if ((status & TP_STATUS_CSUMNOTREADY) != 0) completeL4Csum(src, len);
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const room = <u32>load<u16>(r, M_BUF_LEN) - <u32>load<u16>(r, M_DATA_OFF);
    if (len <= room) {
      copyBytes(mtod(r), src, len);
      store<u16>(r, <u16>len, M_DATA_LEN);
    } else {
      const extra = (len - 1) / room;
      if (mempoolAllocBulk(pool, lc, q + AFPQ_SEGS, extra) != extra) {
        store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + 1, RXQ_STAT_NOMBUF);
        mbufFreeBulk(lc, burst + (i << 2), k - i); // fresh single mbufs: the common free takes them all
        break;
      }
      fillChain(q, r, src, len, room, extra);
    }
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>port, M_PORT);
    if ((status & TP_STATUS_VLAN_VALID) != 0) {
      store<u16>(r, load<u16>(fr, TP2_VLAN_TCI), M_VLAN_TCI);
      store<u32>(r, load<u32>(r, M_OL_FLAGS) | OL_RX_VLAN | OL_RX_VLAN_STRIPPED, M_OL_FLAGS);
    }
    atomic.store<u32>(fr + TP2_STATUS, TP_STATUS_KERNEL);
    bytes += len;
    f = f + 1 == count ? 0 : f + 1;
  }
  store<u32>(q, f, AFPQ_HEAD);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>i, RXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>bytes, RXQ_STAT_BYTES);
  return i;
}

/**
 * net_af_packet tx (eth_af_packet_tx): each packet, in order, copied segment
 * by segment into the next free frame (TP_STATUS_AVAILABLE) and handed to the
 * kernel (TP_STATUS_SEND_REQUEST); a packet longer than a frame holds is
 * dropped and counted as an error. Stops at the first frame the kernel still
 * holds. The packets it took are freed (mbufFreeBulk). Returns how many it
 * took; writes into the block how many frames it filled (`sent`: the caller
 * kicks the socket when not 0), whether the ring was full, and the free's result.
 */
export function afPacketTx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const frames = load<u32>(q, AFPQ_FRAMES);
  const count = load<u32>(q, AFPQ_COUNT);
  const cap = load<u32>(q, AFPQ_FRAME_CAP);
  let f = load<u32>(q, AFPQ_HEAD);
  let i: u32 = 0;
  let sent: u32 = 0;
  let bytes: u32 = 0;
  let errors: u32 = 0;
  let full: u32 = 0;
  for (; i < n; i++) {
    const fr = load<u32>(frames + (f << 2));
    if (atomic.load<u32>(fr + TP2_STATUS) != TP_STATUS_AVAILABLE) {
      full = 1;
      break;
    }
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const len = load<u32>(r, M_PKT_LEN);
    if (len > cap) {
      errors++;
      continue;
    }
    let dst = fr + AFP_TX_DATA;
    for (let s = r; s != 0; s = load<u32>(s, M_NEXT) << MBUF_SHIFT) {
      const dl = <u32>load<u16>(s, M_DATA_LEN);
      copyBytes(dst, mtod(s), dl);
      dst += dl;
    }
    store<u32>(fr, len, TP2_LEN);
    atomic.store<u32>(fr + TP2_STATUS, TP_STATUS_SEND_REQUEST);
    sent++;
    bytes += len;
    f = f + 1 == count ? 0 : f + 1;
  }
  store<u32>(q, f, AFPQ_HEAD);
  store<u32>(q, sent, AFPQ_SENT);
  store<u32>(q, full, AFPQ_FULL);
  const stats = load<u32>(q, AFPQ_STATS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_PACKETS) + <f64>sent, TXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_BYTES) + <f64>bytes, TXQ_STAT_BYTES);
  if (errors != 0) store<f64>(stats, load<f64>(stats, TXQ_STAT_ERRORS) + <f64>errors, TXQ_STAT_ERRORS);
  store<u32>(q, mbufFreeBulk(lc, burst, i), AFPQ_FREED);
  return i;
}
