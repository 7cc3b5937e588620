// virtio_user's data path common case, one call per burst (twins in
// virtio-rxtx.twin.ts, same signatures). Each kernel does the packets that
// take the common path and stops at the first that does not; the queue
// (virtio-rxtx.ts) does that one the general way and calls again. `s` is the
// queue's block (guest-ring.record.ts), read into locals at entry; the
// indices a kernel moves are written back before it returns.
import { RXQ_STAT_BYTES as Q_BYTES, RXQ_STAT_PACKETS as Q_PACKETS } from '../../ethdev/stats-layout.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NB_SEGS, M_OL_FLAGS_HI, M_PKT_LEN, M_PORT, M_REFCNT, OL_HI_INDIRECT } from '../../mem/mbuf-layout.as';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE } from '../../virtio/virtio-net-layout.as';
import { DESC_SIZE, VRING_DESC_F_WRITE } from '../../virtio/vring-layout.as';
import {
  VQG_AVAIL_IDX,
  VQG_AVAIL_RING,
  VQG_BAD_USED,
  VQG_CAP,
  VQG_DESC,
  VQG_FLAGS,
  VQG_FREE,
  VQG_FREE_HEAD,
  VQG_F_IN_ORDER,
  VQG_GPA_HI,
  VQG_HEADROOM,
  VQG_IDX,
  VQG_LAST_USED,
  VQG_LIMIT,
  VQG_MASK,
  VQG_NDESC,
  VQG_NEXT_FREE,
  VQG_NUM,
  VQG_NUM_FREE,
  VQG_OLDEST,
  VQG_PORT,
  VQG_READY,
  VQG_STATS,
  VQG_SW,
  VQG_USED,
} from './guest-ring-layout.as';

/**
 * Guest rx with MRG_RXBUF, the common case: of the `ready` used entries after
 * lastUsed, those that are one whole packet in one buffer (num_buffers 1)
 * become packets in `burst` (at most `n`), their descriptors go on the free
 * stack. Counts packets and bytes into the queue's counters.
 * @returns how many used entries it took (one packet each).
 */
export function virtioRx(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const usedRing = load<u32>(s, VQG_USED);
  const mask = load<u32>(s, VQG_MASK);
  const lastUsed = <u32>load<f64>(s, VQG_LAST_USED);
  const ready = load<u32>(s, VQG_READY);
  const sw = load<u32>(s, VQG_SW);
  const limit = load<u32>(s, VQG_LIMIT);
  const free = load<u32>(s, VQG_FREE);
  const numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  const cap = load<u32>(s, VQG_CAP);
  const port = load<u32>(s, VQG_PORT);
  const stats = load<u32>(s, VQG_STATS);
  const max = n < ready ? n : ready;
  let i: u32 = 0;
  let bytes: u32 = 0;
  for (; i < max; i++) {
    const e = usedRing + 4 + (((lastUsed + i) & mask) << 3);
    const id = load<u32>(e);
    const len = load<u32>(e, 4);
    if (id >= limit) break;
    const m = load<u32>(sw + (id << 2));
    if (m == 0 || len <= NET_HDR_SIZE || len > cap) break;
    const r = m << MBUF_SHIFT;
    const hdr = load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF) - NET_HDR_SIZE;
    if (load<u16>(hdr, HDR_NUM_BUFFERS) != 1) break;
    store<u32>(sw + (id << 2), 0);
    store<u16>(free + ((numFree + i) << 1), <u16>id);
    const dataLen = len - NET_HDR_SIZE;
    store<u16>(r, <u16>dataLen, M_DATA_LEN);
    store<u32>(r, dataLen, M_PKT_LEN);
    store<u16>(r, <u16>port, M_PORT);
    store<u32>(burst + (i << 2), m);
    bytes += dataLen;
  }
  store<f64>(s, <f64>(numFree + i), VQG_NUM_FREE);
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

/**
 * Guest rx refill of one-descriptor buffers: pops `n` heads off the free
 * stack, posts the fresh mbufs of `burst` on them and fills the avail ring
 * from the last published index. The heads go out bottom first, in the order
 * the device used them: a device that uses buffers in order then finds each
 * avail entry holding the value it held a lap ago, which is left unwritten
 * (as DPDK's vq_update_avail_ring does), so the host's copy of those lines
 * stays valid instead of crossing back once a burst.
 * @returns the new avail index (not yet published).
 */
export function virtioRxFill(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const free = load<u32>(s, VQG_FREE);
  const numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  const sw = load<u32>(s, VQG_SW);
  const desc = load<u32>(s, VQG_DESC);
  const availRing = load<u32>(s, VQG_AVAIL_RING);
  const mask = load<u32>(s, VQG_MASK);
  const idx = <u32>load<f64>(s, VQG_AVAIL_IDX);
  const offset = load<u32>(s, VQG_HEADROOM);
  const cap = load<u32>(s, VQG_CAP);
  const gpaHi = load<u32>(s, VQG_GPA_HI);
  for (let i: u32 = 0; i < n; i++) {
    const head = <u32>load<u16>(free + ((numFree - n + i) << 1));
    const m = load<u32>(burst + (i << 2));
    store<u32>(sw + (head << 2), m);
    const d = desc + head * DESC_SIZE;
    store<u32>(d, load<u32>(m << MBUF_SHIFT, M_BUF_ADDR) + offset);
    store<u32>(d, gpaHi, 4);
    store<u32>(d, cap, 8);
    store<u32>(d, VRING_DESC_F_WRITE | ((head + 1) << 16), 12);
    const slot = availRing + (((idx + i) & mask) << 1);
    if (<u32>load<u16>(slot) != head) store<u16>(slot, <u16>head);
  }
  store<f64>(s, <f64>(numFree - n), VQG_NUM_FREE);
  return (idx + n) & 0xffff;
}

/**
 * Guest tx, the common case: a one-segment packet the sender owns alone,
 * with room for the header in its headroom, goes out as one descriptor from
 * the free list, header pushed. Counts packets and bytes.
 * @returns how many it queued (avail entries from the block's `idx`, not yet published).
 */
export function virtioTx(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const nextFree = load<u32>(s, VQG_NEXT_FREE);
  const sw = load<u32>(s, VQG_SW);
  const ndesc = load<u32>(s, VQG_NDESC);
  const desc = load<u32>(s, VQG_DESC);
  const availRing = load<u32>(s, VQG_AVAIL_RING);
  const mask = load<u32>(s, VQG_MASK);
  const idx = load<u32>(s, VQG_IDX);
  const gpaHi = load<u32>(s, VQG_GPA_HI);
  const stats = load<u32>(s, VQG_STATS);
  let freeHead = <u32>load<f64>(s, VQG_FREE_HEAD);
  let numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  let i: u32 = 0;
  let bytes: u32 = 0;
  for (; i < n && numFree > 0; i++) {
    const m = load<u32>(burst + (i << 2));
    const r = m << MBUF_SHIFT;
    const dataOff = <u32>load<u16>(r, M_DATA_OFF);
    if (load<u16>(r, M_REFCNT) != 1 || load<u16>(r, M_NB_SEGS) != 1 || (load<u32>(r, M_OL_FLAGS_HI) & OL_HI_INDIRECT) != 0 || dataOff < NET_HDR_SIZE) break;
    const hdr = load<u32>(r, M_BUF_ADDR) + dataOff - NET_HDR_SIZE;
    // Written only when not already zero (a recycled mbuf's headroom usually is): the host
    // read this line, and a store would pull it back across cores for nothing.
    if ((load<u32>(hdr) | load<u32>(hdr, 4) | load<u32>(hdr, 8)) != 0) {
      store<u32>(hdr, 0);
      store<u32>(hdr, 0, 4);
      store<u32>(hdr, 0, 8);
    }
    const head = freeHead;
    const next = <u32>load<u16>(nextFree + (head << 1));
    const len = <u32>load<u16>(r, M_DATA_LEN);
    const d = desc + head * DESC_SIZE;
    store<u32>(d, hdr);
    store<u32>(d, gpaHi, 4);
    store<u32>(d, len + NET_HDR_SIZE, 8);
    store<u32>(d, next << 16, 12);
    store<u32>(sw + (head << 2), m);
    store<u16>(ndesc + (head << 1), 1);
    // In order, an avail entry keeps its value lap after lap: left alone, its line stays shared.
    const slot = availRing + (((idx + i) & mask) << 1);
    if (<u32>load<u16>(slot) != head) store<u16>(slot, <u16>head);
    freeHead = next;
    numFree--;
    bytes += load<u32>(r, M_PKT_LEN);
  }
  store<f64>(s, <f64>freeHead, VQG_FREE_HEAD);
  store<f64>(s, <f64>numFree, VQG_NUM_FREE);
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

/**
 * Guest tx completions: the `n` used entries after lastUsed give their
 * descriptors back to the free list and their packets to `stage` (a burst),
 * for the caller to free in one batch. An entry naming a descriptor that is
 * not in flight is counted and skipped. With IN_ORDER the used entries need
 * not be read at all.
 * @returns how many packets it staged.
 */
export function virtioTxCleanup(s: u32, lc: u32, stage: u32, n: u32): u32 {
  const ready = n;
  const lastUsed = <u32>load<f64>(s, VQG_LAST_USED);
  const sw = load<u32>(s, VQG_SW);
  const nextFree = load<u32>(s, VQG_NEXT_FREE);
  const ndesc = load<u32>(s, VQG_NDESC);
  if ((load<u32>(s, VQG_FLAGS) & VQG_F_IN_ORDER) != 0) return txCleanupInOrder(s, lastUsed, ready, sw, nextFree, ndesc, stage);
  const usedRing = load<u32>(s, VQG_USED);
  const mask = load<u32>(s, VQG_MASK);
  const num = load<u32>(s, VQG_NUM);
  let freeHead = <u32>load<f64>(s, VQG_FREE_HEAD);
  let numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  let bad: u32 = 0;
  let k: u32 = 0;
  for (let i: u32 = 0; i < ready; i++) {
    const id = load<u32>(usedRing + 4 + (((lastUsed + i) & mask) << 3));
    const slot = sw + (id << 2);
    if (id >= num || load<u32>(slot) == 0) {
      bad++;
      continue;
    }
    store<u32>(stage + (k++ << 2), load<u32>(slot));
    store<u32>(slot, 0);
    const nd = <u32>load<u16>(ndesc + (id << 1));
    let last = id;
    for (let j: u32 = 1; j < nd; j++) last = <u32>load<u16>(nextFree + (last << 1));
    store<u16>(nextFree + (last << 1), <u16>freeHead);
    freeHead = id;
    numFree += nd;
  }
  store<f64>(s, <f64>freeHead, VQG_FREE_HEAD);
  store<f64>(s, <f64>numFree, VQG_NUM_FREE);
  store<f64>(s, <f64>((lastUsed + ready) & 0xffff), VQG_LAST_USED);
  if (bad > 0) store<f64>(s, load<f64>(s, VQG_BAD_USED) + <f64>bad, VQG_BAD_USED);
  return k;
}

/**
 * virtioTxCleanup with IN_ORDER: the device used the chains in the order they
 * were made available (and may have written one used entry per batch), so
 * the `ready` oldest chains are done. Descriptors were taken in ring order
 * and `nextFree` is the ring itself, so nothing is relinked: the oldest chain
 * moves on, the next free one stays. A device claiming more than is in
 * flight is counted and the claim cut short.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function txCleanupInOrder(s: u32, lastUsed: u32, ready: u32, sw: u32, nextFree: u32, ndesc: u32, stage: u32): u32 {
  let oldest = <u32>load<f64>(s, VQG_OLDEST);
  let numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  let k: u32 = 0;
  for (; k < ready; k++) {
    const slot = sw + (oldest << 2);
    const m = load<u32>(slot);
    if (m == 0) break;
    store<u32>(stage + (k << 2), m);
    store<u32>(slot, 0);
    const nd = <u32>load<u16>(ndesc + (oldest << 1));
    for (let j: u32 = 0; j < nd; j++) oldest = <u32>load<u16>(nextFree + (oldest << 1));
    numFree += nd;
  }
  store<f64>(s, <f64>oldest, VQG_OLDEST);
  store<f64>(s, <f64>numFree, VQG_NUM_FREE);
  store<f64>(s, <f64>((lastUsed + ready) & 0xffff), VQG_LAST_USED);
  if (k < ready) store<f64>(s, load<f64>(s, VQG_BAD_USED) + <f64>(ready - k), VQG_BAD_USED);
  return k;
}
