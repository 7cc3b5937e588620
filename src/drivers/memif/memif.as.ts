// net_memif's per-burst work in copy mode, one call per burst (twins:
// memif.twin.ts, same signatures): rx walks a ring's descriptors from the
// peer's region and copies each packet into mbufs (a chain when it does not
// fit one), tx copies each packet (a chain of mbufs) into the ring's buffers
// (several slots flagged NEXT when it does not fit one). `q` is the queue's
// block (memif.record.ts), `lc` the calling thread's lcore block, `burst` a
// burst's heap offset. Every descriptor is the peer's to write: its region,
// offset and length are checked against the region table before any byte
// moves, so a lying peer costs a skipped packet (counted, and the queue's
// `fault` set for the control plane), never a write outside its region.
import { RXQ_STAT_BYTES, RXQ_STAT_NOMBUF, RXQ_STAT_PACKETS, TXQ_STAT_BYTES, TXQ_STAT_ERRORS, TXQ_STAT_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { mbufFreeBulk, mtod } from '../../mem/mbuf.as';
import { MBUF_MAX_NB_SEGS, MBUF_SHIFT, M_DATA_LEN, M_NB_SEGS, M_NEXT, M_PKT_LEN, M_PORT } from '../../mem/mbuf-layout.as';
import { POOL_BUF_LEN, POOL_HEADROOM } from '../../mem/mempool-layout.as';
import { mempoolAllocBulk } from '../../mem/mempool.as';
import {
  MDESC_FLAGS,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MDESC_REGION,
  MEMIF_DESC_FLAG_NEXT,
  MEMIF_REGION_ENTRY,
  MEMIF_RING_FLAG_MASK_INT,
  MEMIF_ZC_REFILL,
  MQ_BAD_DESC,
  MQ_BSIZE,
  MQ_BUFS,
  MQ_CAP,
  MQ_DONE,
  MQ_DONE_CAP,
  MQ_FAULT,
  MQ_FLAGS,
  MQ_F_C2S,
  MQ_HEAD,
  MQ_BUSY,
  MQ_KICK,
  MQ_LAST,
  MQ_MASK,
  MQ_NB_DONE,
  MQ_PEER,
  MQ_POOL,
  MQ_PORT,
  MQ_REGIONS,
  MQ_RING,
  MQ_SEG,
  MQ_SLOTS,
  MQ_STATS,
  MREGS_COUNT,
  MREGS_ENTRIES,
  MRING_DESC,
  MRING_FLAGS,
  MRING_HEAD,
  MRING_TAIL,
} from './memif-layout.as';

/**
 * The heap address of descriptor `d`'s buffer when `len` bytes from its
 * offset lie inside its region, else 0 (no window starts at heap offset 0).
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function bufAt(regions: u32, d: u32, len: u32): u32 {
  const r = <u32>load<u16>(d, MDESC_REGION);
  if (r >= load<u32>(regions, MREGS_COUNT)) return 0;
  const e = regions + MREGS_ENTRIES + r * MEMIF_REGION_ENTRY;
  const off = load<u32>(d, MDESC_OFFSET);
  if (<u64>off + <u64>len > <u64>load<u32>(e, 4)) return 0;
  return load<u32>(e) + off;
}

/** Counts a bad descriptor and flags the queue for the control plane. */
// @ts-ignore: decorator
@inline
function fault(q: u32): void {
  store<f64>(q, load<f64>(q, MQ_BAD_DESC) + 1, MQ_BAD_DESC);
  store<u32>(q, 1, MQ_FAULT);
}

/**
 * Reads the producer's index at `at` (rx: head on C2S, tail on S2C), keeps it
 * as the queue's peer, and returns the slots waiting from `cur`; a peer that
 * moved it past the ring is counted and gives none.
 */
// @ts-ignore: decorator
@inline
function peerAvail(q: u32, at: u32, cur: u32, mask: u32): u32 {
  const peer = <u32>atomic.load<u16>(at);
  store<u32>(q, peer, MQ_PEER);
  const avail = (peer - cur) & 0xffff;
  if (avail <= mask + 1) return avail;
  fault(q); // the peer moved its index past the ring
  return 0;
}

/**
 * eth_memif_rx: up to `n` packets from the ring into mbufs of the queue's
 * pool, stamped with the port; then, on a C2S ring, tail moved past them
 * (release), and on an S2C ring every free slot posted again with the
 * connection's buffer size (head moved, release). A packet whose slots are
 * not all there yet stays for the next call. Returns how many packets.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function rxCopy(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const ring = atomic.load<u32>(q + MQ_RING); // after busy: the control plane parks the queue (ring 0), then waits for busy 0
  if (ring == 0) return 0;
  const mask = load<u32>(q, MQ_MASK);
  const c2s = (load<u32>(q, MQ_FLAGS) & MQ_F_C2S) != 0;
  const regions = load<u32>(q, MQ_REGIONS);
  const descs = ring + MRING_DESC;
  const pool = load<u32>(q, MQ_POOL);
  const cap = load<u32>(pool, POOL_BUF_LEN) - load<u32>(pool, POOL_HEADROOM);
  const port = load<u32>(q, MQ_PORT);
  const stats = load<u32>(q, MQ_STATS);
  let cur = load<u32>(q, MQ_LAST);
  // The producer's index as last read first: read again (a line the peer writes) only when it
  // shows fewer slots than the burst, or when they run out before the burst is done (chains).
  const peerAt = ring + (c2s ? MRING_HEAD : MRING_TAIL);
  let avail = (load<u32>(q, MQ_PEER) - cur) & 0xffff;
  let fresh = avail < n || avail > mask + 1;
  if (fresh) avail = peerAvail(q, peerAt, cur, mask);
  // Heads for the whole burst in one allocation, as DPDK's eth_memif_rx takes
  // them (one pool call a packet was 8 % of the server's time at 1518 B); the
  // unused go back at the end. A pool too low for the burst still gives one.
  const want = avail < n ? avail : n;
  let have: u32 = 0;
  if (want > 0) {
    have = mempoolAllocBulk(pool, lc, burst, want);
    if (have == 0 && want > 1) have = mempoolAllocBulk(pool, lc, burst, 1);
    if (have == 0) store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + 1, RXQ_STAT_NOMBUF);
  }
  let got: u32 = 0;
  let bytes: u64 = 0;
  while (got < have) {
    if (avail == 0) {
      if (fresh) break;
      avail = peerAvail(q, peerAt, cur, mask);
      fresh = true;
      if (avail == 0) break;
    }
    const d0 = descs + ((cur & mask) << 4);
    const len0 = load<u32>(d0, MDESC_LENGTH);
    if ((load<u16>(d0, MDESC_FLAGS) & MEMIF_DESC_FLAG_NEXT) == 0 && len0 <= cap) {
      // The common packet, one slot into one mbuf: its length read once, checked, copied.
      const src = bufAt(regions, d0, len0);
      if (src == 0) {
        fault(q);
        cur++;
        avail--;
        continue;
      }
      const m0 = load<u32>(burst + (got << 2)) << MBUF_SHIFT;
      store<u16>(m0, <u16>port, M_PORT);
      copyBytes(mtod(m0), src, len0);
      store<u16>(m0, <u16>len0, M_DATA_LEN);
      store<u32>(m0, len0, M_PKT_LEN);
      bytes += <u64>len0;
      got++;
      cur++;
      avail--;
      continue;
    }
    // The packet's slots: up to the first without NEXT, each checked.
    let k: u32 = 0;
    let total: u64 = 0;
    let ok = true;
    let more = true;
    while (more && k < avail) {
      const d = descs + (((cur + k) & mask) << 4);
      const len = load<u32>(d, MDESC_LENGTH);
      if (bufAt(regions, d, len) == 0) ok = false;
      total += len;
      more = (load<u16>(d, MDESC_FLAGS) & MEMIF_DESC_FLAG_NEXT) != 0;
      k++;
    }
    if (more) {
      if (avail <= mask) {
        if (fresh) break; // the rest of the chain is not there yet
        avail = peerAvail(q, peerAt, cur, mask); // it may be past the index as last read
        fresh = true;
        continue;
      }
      ok = false; // a chain as long as the ring never ends
    }
    const segs = total == 0 ? 1 : (total + <u64>cap - 1) / <u64>cap;
    if (!ok || segs > <u64>MBUF_MAX_NB_SEGS) {
      fault(q);
      cur += k;
      avail -= k;
      continue;
    }
    const slot = burst + (got << 2);
    const head = load<u32>(slot) << MBUF_SHIFT;
    store<u16>(head, <u16>port, M_PORT);
    let m = head;
    let room = cap;
    let nombuf = false;
    let bad = false;
    let copied: u64 = 0;
    for (let j: u32 = 0; j < k && !nombuf && !bad; j++) {
      const d = descs + (((cur + j) & mask) << 4);
      // The peer may rewrite a descriptor after the check above: check it again, and copy no
      // more than was checked, so the chain never outgrows the segments counted for it.
      let len = load<u32>(d, MDESC_LENGTH);
      if (<u64>len > total - copied) len = <u32>(total - copied);
      let src = bufAt(regions, d, len);
      if (src == 0) {
        bad = true;
        break;
      }
      copied += len;
      while (len > 0) {
        if (room == 0) {
          if (mempoolAllocBulk(pool, lc, q + MQ_SEG, 1) != 1) {
            nombuf = true;
            break;
          }
          const s = load<u32>(q, MQ_SEG);
          store<u32>(m, s, M_NEXT);
          m = s << MBUF_SHIFT;
          store<u16>(m, <u16>port, M_PORT);
          store<u16>(head, load<u16>(head, M_NB_SEGS) + 1, M_NB_SEGS);
          room = cap;
        }
        const dl = <u32>load<u16>(m, M_DATA_LEN);
        const c = len < room ? len : room;
        copyBytes(mtod(m) + dl, src, c);
        store<u16>(m, <u16>(dl + c), M_DATA_LEN);
        src += c;
        len -= c;
        room -= c;
      }
    }
    if (nombuf || bad) {
      // The partial chain goes back; the last unused head takes its place.
      mbufFreeBulk(lc, slot, 1);
      have--;
      store<u32>(slot, load<u32>(burst + (have << 2)));
      if (bad) {
        fault(q);
        cur += k;
        avail -= k;
        continue;
      }
      store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + 1, RXQ_STAT_NOMBUF); // its slots stay for the next call
      break;
    }
    store<u32>(head, <u32>copied, M_PKT_LEN);
    bytes += copied;
    got++;
    cur += k;
    avail -= k;
  }
  if (have > got) mbufFreeBulk(lc, burst + (got << 2), have - got);
  cur &= 0xffff;
  store<u32>(q, cur, MQ_LAST);
  if (c2s) {
    atomic.store<u16>(ring + MRING_TAIL, <u16>cur);
  } else {
    // Post every free slot again: the receiver owns head on S2C.
    let h = <u32>atomic.load<u16>(ring + MRING_HEAD);
    const bsize = load<u32>(q, MQ_BSIZE);
    let free = (mask + 1 - ((h - cur) & 0xffff)) & 0xffff;
    if (free > mask + 1) free = 0; // head moved by someone else: leave it
    for (; free > 0; free--) {
      store<u32>(descs + ((h & mask) << 4), bsize, MDESC_LENGTH);
      h++;
    }
    atomic.store<u16>(ring + MRING_HEAD, <u16>h);
  }
  store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>got, RXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>bytes, RXQ_STAT_BYTES);
  return got;
}

/** Free tx slots: on C2S the ring less what head is ahead of tail, on S2C what head (posted) is ahead of tail. */
// @ts-ignore: decorator
@inline
function txFree(c2s: bool, mask: u32, slot: u32, peer: u32): u32 {
  return c2s ? mask + 1 - ((slot - peer) & 0xffff) : (peer - slot) & 0xffff;
}

/**
 * Reads the consumer's index at `at` (tx: tail on C2S, head on S2C), keeps it
 * as the queue's peer, and returns the free slots from `slot`; a peer that
 * moved it past the ring is counted and gives none.
 */
// @ts-ignore: decorator
@inline
function peerFree(q: u32, at: u32, c2s: bool, mask: u32, slot: u32): u32 {
  const peer = <u32>atomic.load<u16>(at);
  store<u32>(q, peer, MQ_PEER);
  const free = txFree(c2s, mask, slot, peer);
  if (free <= mask + 1) return free;
  fault(q); // the peer moved its index past the ring
  return 0;
}

/**
 * The buffer of tx slot `slot` (descriptor `d`, `cap` bytes): on a ring this
 * side laid out (`own`, the queue's bufs) where it put it, the peer's copy of
 * the offset not read back (on the client's C2S ring that load missed: the
 * server had just read the line; docs/benchmarks.md, memif at 1518 B); else
 * where the descriptor says, checked.
 */
// @ts-ignore: decorator
@inline
function txBuf(own: u32, slot: u32, mask: u32, bsize: u32, regions: u32, d: u32, cap: u32): u32 {
  return own != 0 ? own + (slot & mask) * bsize : bufAt(regions, d, cap);
}

/**
 * eth_memif_tx: copies packets from `burst` into the ring's free slots, a
 * packet longer than a buffer over several slots flagged NEXT, then moves
 * head (C2S) or tail (S2C) past them (release), and sets `kick` when it sent
 * some and the ring's receiver wants an interrupt. Returns how many packets
 * it took (a prefix of the burst); the caller frees them and keeps the rest.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function txCopy(q: u32, lc: u32, burst: u32, n: u32): u32 {
  store<u32>(q, 0, MQ_KICK);
  const ring = atomic.load<u32>(q + MQ_RING); // after busy: the control plane parks the queue (ring 0), then waits for busy 0
  if (ring == 0) return 0;
  const mask = load<u32>(q, MQ_MASK);
  const c2s = (load<u32>(q, MQ_FLAGS) & MQ_F_C2S) != 0;
  const regions = load<u32>(q, MQ_REGIONS);
  const descs = ring + MRING_DESC;
  const bsize = load<u32>(q, MQ_BSIZE);
  const own = load<u32>(q, MQ_BUFS);
  let slot = <u32>atomic.load<u16>(ring + (c2s ? MRING_HEAD : MRING_TAIL));
  // The peer's index as last read first: the ring's copy (a line the peer writes: a miss each
  // time) is read again only when that shows fewer free slots than the burst, or when they run
  // out before the burst is done (chains).
  const peerAt = ring + (c2s ? MRING_TAIL : MRING_HEAD);
  let free = txFree(c2s, mask, slot, load<u32>(q, MQ_PEER));
  let fresh = free < n || free > mask + 1;
  if (fresh) free = peerFree(q, peerAt, c2s, mask, slot);
  let sent: u32 = 0;
  let bytes: u64 = 0;
  let bad = false;
  while (sent < n && !bad) {
    if (free == 0) {
      if (fresh) break;
      free = peerFree(q, peerAt, c2s, mask, slot);
      fresh = true;
      if (free == 0) break;
    }
    const first = slot;
    const firstFree = free;
    let d = descs + ((slot & mask) << 4);
    let cap = c2s ? bsize : load<u32>(d, MDESC_LENGTH);
    let dst = txBuf(own, slot, mask, bsize, regions, d, cap);
    if (dst == 0) {
      bad = true;
      break;
    }
    const h = load<u32>(burst + (sent << 2));
    const m0 = h << MBUF_SHIFT;
    const len0 = <u32>load<u16>(m0, M_DATA_LEN);
    if (load<u32>(m0, M_NEXT) == 0 && len0 <= cap) {
      // The common packet, one segment into one slot: none of the chain's bookkeeping.
      copyBytes(dst, mtod(m0), len0);
      store<u16>(d, 0, MDESC_FLAGS);
      store<u32>(d, len0, MDESC_LENGTH);
      slot++;
      free--;
      bytes += <u64>load<u32>(m0, M_PKT_LEN);
      sent++;
      continue;
    }
    let off: u32 = 0;
    let full = false;
    for (let m = m0; m != 0 && !full && !bad; ) {
      let src = mtod(m);
      let len = <u32>load<u16>(m, M_DATA_LEN);
      while (len > 0) {
        if (off == cap) {
          if (free == 1) {
            full = true; // the packet does not fit the free slots: it stays with the caller
            break;
          }
          store<u16>(d, <u16>MEMIF_DESC_FLAG_NEXT, MDESC_FLAGS);
          store<u32>(d, off, MDESC_LENGTH);
          slot++;
          free--;
          d = descs + ((slot & mask) << 4);
          cap = c2s ? bsize : load<u32>(d, MDESC_LENGTH);
          dst = txBuf(own, slot, mask, bsize, regions, d, cap);
          if (dst == 0) {
            bad = true;
            break;
          }
          off = 0;
        }
        const room = cap - off;
        const c = len < room ? len : room;
        copyBytes(dst + off, src, c);
        off += c;
        src += c;
        len -= c;
      }
      const next = load<u32>(m, M_NEXT);
      m = next << MBUF_SHIFT;
    }
    if (full && !bad && !fresh) {
      // The packet did not fit the slots as last counted: count them again and retry it.
      slot = first;
      free = peerFree(q, peerAt, c2s, mask, slot);
      fresh = true;
      continue;
    }
    if (full || bad) {
      slot = first;
      free = firstFree;
      break;
    }
    store<u16>(d, 0, MDESC_FLAGS);
    store<u32>(d, off, MDESC_LENGTH);
    slot++;
    free--;
    bytes += <u64>load<u32>(h << MBUF_SHIFT, M_PKT_LEN);
    sent++;
  }
  if (bad) fault(q);
  if (c2s) atomic.store<u16>(ring + MRING_HEAD, <u16>slot);
  else atomic.store<u16>(ring + MRING_TAIL, <u16>slot);
  if (sent > 0 && (<u32>load<u16>(ring, MRING_FLAGS) & MEMIF_RING_FLAG_MASK_INT) == 0) store<u32>(q, 1, MQ_KICK);
  const stats = load<u32>(q, MQ_STATS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_PACKETS) + <f64>sent, TXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_BYTES) + <f64>bytes, TXQ_STAT_BYTES);
  return sent;
}

// ---- zero-copy (a client with zero-copy=yes): the ring's buffers are mbufs ----
//
// Region 0 is the prefix of the heap's memfd holding the rings and every pool,
// so a descriptor's offset is an mbuf's data address in the heap. The peer
// (always a server: only a client goes zero-copy, as in DPDK) writes into and
// reads from our mbufs in place; `slots` remembers which mbuf each slot holds.

/**
 * memif_rx_zc's refill: posts a fresh mbuf of the queue's pool in every free
 * slot of the S2C ring (each descriptor: region 0, the mbuf's data address,
 * the data room as its length), once at least MEMIF_ZC_REFILL slots (or half
 * the ring) are free, up to the end of the slot array (the slots after the
 * wrap wait for the next call), then moves head (release). A pool that
 * cannot give them all posts nothing this time (counted as rx_nombuf).
 * Returns how many buffers it posted.
 */
export function memifRefillZc(q: u32, lc: u32): u32 {
  const ring = atomic.load<u32>(q + MQ_RING); // after busy: the control plane parks the queue (ring 0), then waits for busy 0
  if (ring == 0) return 0;
  const mask = load<u32>(q, MQ_MASK);
  const size = mask + 1;
  const slots = load<u32>(q, MQ_SLOTS);
  const descs = ring + MRING_DESC;
  let head = load<u32>(q, MQ_HEAD);
  const free = size - ((head - load<u32>(q, MQ_LAST)) & 0xffff);
  const least = size >>> 1 < MEMIF_ZC_REFILL ? size >>> 1 : MEMIF_ZC_REFILL;
  if (free == 0 || free > size || (free < least && free < size)) return 0;
  const at = head & mask;
  const n = size - at < free ? size - at : free; // up to the end of the slot array; the rest next time
  if (mempoolAllocBulk(load<u32>(q, MQ_POOL), lc, slots + (at << 2), n) != n) {
    const stats = load<u32>(q, MQ_STATS);
    store<f64>(stats, load<f64>(stats, RXQ_STAT_NOMBUF) + 1, RXQ_STAT_NOMBUF);
    return 0;
  }
  const cap = load<u32>(q, MQ_CAP);
  for (let i: u32 = 0; i < n; i++) {
    const s = at + i;
    const d = descs + (s << 4);
    store<u16>(d, 0, MDESC_FLAGS);
    store<u16>(d, 0, MDESC_REGION);
    store<u32>(d, cap, MDESC_LENGTH);
    store<u32>(d, mtod(load<u32>(slots + (s << 2)) << MBUF_SHIFT), MDESC_OFFSET);
  }
  head = (head + n) & 0xffff;
  store<u32>(q, head, MQ_HEAD);
  atomic.store<u16>(ring + MRING_HEAD, <u16>head);
  return n;
}

/**
 * eth_memif_rx_zc: up to `n` packets the server filled (tail moved past
 * them), each the mbufs of its slots chained as they are (data_len from
 * each descriptor, checked against the posted length), stamped with the
 * port; then the ring refilled. A descriptor longer than its buffer, a chain
 * longer than an mbuf chain may be, or a tail moved past what was posted is a
 * fault: reading stops and the control plane disconnects (every mbuf in the
 * ring goes back then). Returns how many packets.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function rxZc(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const ring = atomic.load<u32>(q + MQ_RING); // after busy: the control plane parks the queue (ring 0), then waits for busy 0
  if (ring == 0) return 0;
  const mask = load<u32>(q, MQ_MASK);
  const slots = load<u32>(q, MQ_SLOTS);
  const descs = ring + MRING_DESC;
  const cap = load<u32>(q, MQ_CAP);
  const port = load<u32>(q, MQ_PORT);
  const stats = load<u32>(q, MQ_STATS);
  let cur = load<u32>(q, MQ_LAST);
  const posted = (load<u32>(q, MQ_HEAD) - cur) & 0xffff;
  let avail = (<u32>atomic.load<u16>(ring + MRING_TAIL) - cur) & 0xffff;
  if (avail > posted) {
    fault(q); // the server moved tail past the buffers we posted
    avail = 0;
  }
  let got: u32 = 0;
  let bytes: u64 = 0;
  while (avail > 0 && got < n) {
    let k: u32 = 0;
    let ok = true;
    let more = true;
    while (more && k < avail) {
      const d = descs + (((cur + k) & mask) << 4);
      if (load<u32>(d, MDESC_LENGTH) > cap || load<u32>(slots + (((cur + k) & mask) << 2)) == 0) ok = false;
      more = (load<u16>(d, MDESC_FLAGS) & MEMIF_DESC_FLAG_NEXT) != 0;
      k++;
    }
    if (more) {
      if (avail < posted) break; // the rest of the chain is not there yet
      ok = false; // a chain over every posted buffer never ends
    }
    if (!ok || k > MBUF_MAX_NB_SEGS) {
      fault(q);
      break;
    }
    const head = load<u32>(slots + ((cur & mask) << 2));
    let prev: u32 = 0;
    let sum: u32 = 0;
    for (let j: u32 = 0; j < k; j++) {
      const s = slots + (((cur + j) & mask) << 2);
      const h = load<u32>(s);
      store<u32>(s, 0);
      const m = h << MBUF_SHIFT;
      // Read once more and clamp: the server may rewrite a descriptor after the check above.
      let len = load<u32>(descs + (((cur + j) & mask) << 4), MDESC_LENGTH);
      if (len > cap) len = cap;
      sum += len;
      store<u16>(m, <u16>len, M_DATA_LEN);
      store<u16>(m, <u16>port, M_PORT);
      if (prev != 0) store<u32>(prev, h, M_NEXT);
      prev = m;
    }
    store<u16>(head << MBUF_SHIFT, <u16>k, M_NB_SEGS);
    store<u32>(head << MBUF_SHIFT, sum, M_PKT_LEN);
    store<u32>(burst + (got << 2), head);
    bytes += <u64>sum;
    got++;
    cur += k;
    avail -= k;
  }
  store<u32>(q, cur & 0xffff, MQ_LAST);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>got, RXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>bytes, RXQ_STAT_BYTES);
  memifRefillZc(q, lc);
  return got;
}

/**
 * eth_memif_tx_zc: first the packets the server consumed (tail moved past
 * their last slot) go to `done`; then each packet of `burst` takes one slot
 * per segment (region 0, its data address, its data_len, NEXT but on the
 * last) while its segments fit the free slots, its head remembered at its
 * last slot, and head moves (release); `kick` as memifTx. A packet whose
 * bytes lie outside region 0 (a pool made after the connect) cannot be
 * shared: it is taken, counted as an error and left in `done` too. `nbDone`
 * says how many handles `done` holds: the caller frees them. Returns how many
 * packets it took (a prefix of the burst).
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function txZc(q: u32, lc: u32, burst: u32, n: u32): u32 {
  store<u32>(q, 0, MQ_KICK);
  store<u32>(q, 0, MQ_NB_DONE);
  const ring = atomic.load<u32>(q + MQ_RING); // after busy: the control plane parks the queue (ring 0), then waits for busy 0
  if (ring == 0) return 0;
  const mask = load<u32>(q, MQ_MASK);
  const slots = load<u32>(q, MQ_SLOTS);
  const done = load<u32>(q, MQ_DONE);
  const doneCap = load<u32>(q, MQ_DONE_CAP);
  const descs = ring + MRING_DESC;
  const limit = load<u32>(load<u32>(q, MQ_REGIONS) + MREGS_ENTRIES, 4); // region 0's size
  let head = load<u32>(q, MQ_HEAD);
  let last = load<u32>(q, MQ_LAST);
  let consumed = (<u32>atomic.load<u16>(ring + MRING_TAIL) - last) & 0xffff;
  if (consumed > ((head - last) & 0xffff)) {
    fault(q); // the server moved tail past what we sent
    consumed = 0;
  }
  let nd: u32 = 0;
  for (let i: u32 = 0; i < consumed; i++) {
    const s = slots + (((last + i) & mask) << 2);
    const h = load<u32>(s);
    if (h != 0) {
      store<u32>(done + (nd << 2), h);
      nd++;
      store<u32>(s, 0);
    }
  }
  last = (last + consumed) & 0xffff;
  store<u32>(q, last, MQ_LAST);
  let free = mask + 1 - ((head - last) & 0xffff);
  let sent: u32 = 0;
  let bytes: u64 = 0;
  let errors: u32 = 0;
  while (sent < n) {
    const h = load<u32>(burst + (sent << 2));
    const segs = <u32>load<u16>(h << MBUF_SHIFT, M_NB_SEGS);
    let inside = true;
    for (let m = h << MBUF_SHIFT; m != 0; m = load<u32>(m, M_NEXT) << MBUF_SHIFT) {
      if (<u64>mtod(m) + <u64>load<u16>(m, M_DATA_LEN) > <u64>limit) inside = false;
    }
    if (!inside) {
      if (nd == doneCap) break;
      store<u32>(done + (nd << 2), h);
      nd++;
      errors++;
      sent++;
      continue;
    }
    if (segs > free) break;
    for (let m = h << MBUF_SHIFT; m != 0; ) {
      const next = load<u32>(m, M_NEXT);
      const d = descs + ((head & mask) << 4);
      store<u16>(d, next != 0 ? <u16>MEMIF_DESC_FLAG_NEXT : 0, MDESC_FLAGS);
      store<u16>(d, 0, MDESC_REGION);
      store<u32>(d, <u32>load<u16>(m, M_DATA_LEN), MDESC_LENGTH);
      store<u32>(d, mtod(m), MDESC_OFFSET);
      head++;
      m = next << MBUF_SHIFT;
    }
    store<u32>(slots + (((head - 1) & mask) << 2), h);
    free -= segs;
    bytes += <u64>load<u32>(h << MBUF_SHIFT, M_PKT_LEN);
    sent++;
  }
  head &= 0xffff;
  store<u32>(q, head, MQ_HEAD);
  atomic.store<u16>(ring + MRING_HEAD, <u16>head);
  store<u32>(q, nd, MQ_NB_DONE);
  if (sent > errors && (<u32>load<u16>(ring, MRING_FLAGS) & MEMIF_RING_FLAG_MASK_INT) == 0) store<u32>(q, 1, MQ_KICK);
  const stats = load<u32>(q, MQ_STATS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_PACKETS) + <f64>(sent - errors), TXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_BYTES) + <f64>bytes, TXQ_STAT_BYTES);
  store<f64>(stats, load<f64>(stats, TXQ_STAT_ERRORS) + <f64>errors, TXQ_STAT_ERRORS);
  return sent;
}

/**
 * Every burst runs inside the queue's busy word: the control plane parks a
 * queue (its ring 0) and then waits for busy 0 before it unmaps the regions
 * (memif.ts, teardown), and a burst sets busy before it reads the ring
 * (both sequentially consistent, so one of the two sees the other). Set and
 * cleared here rather than by the caller: two Atomics.store calls from
 * JavaScript cost a burst about 20 ns in builtins.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function busy(q: u32, on: u32): void {
  atomic.store<u32>(q + MQ_BUSY, on);
}

/** eth_memif_rx (rxCopy) inside the busy word. */
export function memifRx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  busy(q, 1);
  const got = rxCopy(q, lc, burst, n);
  busy(q, 0);
  return got;
}

/**
 * eth_memif_tx (txCopy) inside the busy word. When the receiver asked for an
 * interrupt (MQ_KICK) busy stays set: the caller writes the eventfd, whose
 * number is good while busy holds the control plane off, then clears it.
 */
export function memifTx(q: u32, lc: u32, burst: u32, n: u32): u32 {
  busy(q, 1);
  const sent = txCopy(q, lc, burst, n);
  if (load<u32>(q, MQ_KICK) == 0) busy(q, 0);
  return sent;
}

/** eth_memif_rx_zc (rxZc) inside the busy word. */
export function memifRxZc(q: u32, lc: u32, burst: u32, n: u32): u32 {
  busy(q, 1);
  const got = rxZc(q, lc, burst, n);
  busy(q, 0);
  return got;
}

/** eth_memif_tx_zc (txZc) inside the busy word; a kick leaves busy set, as memifTx. */
export function memifTxZc(q: u32, lc: u32, burst: u32, n: u32): u32 {
  busy(q, 1);
  const sent = txZc(q, lc, burst, n);
  if (load<u32>(q, MQ_KICK) == 0) busy(q, 0);
  return sent;
}
