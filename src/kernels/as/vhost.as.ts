// The virtio data path's common case, one call per burst, on both sides of
// the link. Each kernel does the packets that take the common path and stops
// at the first that does not; TypeScript (the twins named below) does that
// one the general way, checks and all, and calls again.
import { RXQ_STAT_BYTES as Q_BYTES, RXQ_STAT_PACKETS as Q_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NB_SEGS, M_NEXT, M_OL_FLAGS_HI, M_PKT_LEN, M_PORT, M_REFCNT, OL_HI_INDIRECT } from '../../mem/mbuf-layout.as';

/** virtio-net header bytes (VERSION_1) and where num_buffers sits in it. */
const NET_HDR_SIZE: u32 = 12;
const HDR_NUM_BUFFERS: u32 = 10;
const DESC_SIZE: u32 = 16;
const VRING_DESC_F_WRITE: u32 = 2;
/** GuestMemory's table: f64 words, the count then (gpa, size, heap offset) per region. */
const T_REGIONS: u32 = 8;
const REGION_BYTES: u32 = 24;

export const layoutNetHdrSize: u32 = NET_HDR_SIZE;
export const layoutGuestRegionBytes: u32 = REGION_BYTES;
export const layoutGuestTableRegions: u32 = T_REGIONS;

/** GuestMemory.translate: the heap offset of [gpa, gpa + len) when one region holds it whole, else -1. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function translate(table: u32, gpa: f64, len: u32): i32 {
  const n = <u32>load<f64>(table);
  const flen = <f64>len;
  for (let i: u32 = 0, w = table + T_REGIONS; i < n; i++, w += REGION_BYTES) {
    const off = gpa - load<f64>(w);
    const size = load<f64>(w, 8);
    if (off >= 0 && off < size && flen <= size - off) return <i32>(load<f64>(w, 16) + off);
  }
  return -1;
}

/**
 * Host enqueue, the common case (twin: the first branch of
 * VhostQueue.enqueueBurst): each packet into the next avail entry when that
 * is one device-writable descriptor in guest memory big enough for header
 * and packet. `avail` entries are available after `lastAvail` (re-read
 * before each packet when `perPacket`). Two passes, as dequeueFast: the
 * descriptors (each packet's place noted at `dsts`), then the bytes.
 * @returns how many packets it enqueued (each took one avail and one used entry).
 */
export function enqueueFast(mbufs: u32, n: u32, desc: u32, availRing: u32, usedRing: u32, mask: u32, num: u32, lastAvail: u32, usedIdx: u32, avail: u32, table: u32, perPacket: u32, dsts: u32): u32 {
  let i: u32 = 0;
  for (; i < n; i++) {
    // The vhost enqueue study's other arm (avail_per_packet=1) reads the guest's avail index before every packet.
    if (perPacket) {
      avail = (<u32>atomic.load<u16>(availRing - 2) - lastAvail) & 0xffff;
      if (avail > num) break;
    }
    if (i >= avail) break;
    const m = load<u32>(mbufs + (i << 2));
    const r = m << MBUF_SHIFT;
    const need = NET_HDR_SIZE + load<u32>(r, M_PKT_LEN);
    const head = <u32>load<u16>(availRing + (((lastAvail + i) & mask) << 1));
    if (head >= num) break;
    const d = desc + head * DESC_SIZE;
    if ((<u32>load<u16>(d, 12)) != VRING_DESC_F_WRITE || load<u32>(d, 8) < need) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = translate(table, gpa, need);
    if (at < 0) break;
    store<u32>(dsts + (i << 2), <u32>at);
    const e = usedRing + 4 + (((usedIdx + i) & mask) << 3);
    store<u32>(e, head);
    store<u32>(e, need, 4);
  }
  for (let k: u32 = 0; k < i; k++) {
    const dst = load<u32>(dsts + (k << 2));
    store<u32>(dst, 0);
    store<u32>(dst, 0, 4);
    store<u32>(dst, 1 << 16, 8); // num_buffers = 1
    let p = dst + NET_HDR_SIZE;
    for (let s = load<u32>(mbufs + (k << 2)); s != 0; s = load<u32>(s << MBUF_SHIFT, M_NEXT)) {
      const sr = s << MBUF_SHIFT;
      const len = <u32>load<u16>(sr, M_DATA_LEN);
      copyBytes(p, load<u32>(sr, M_BUF_ADDR) + <u32>load<u16>(sr, M_DATA_OFF), len);
      p += len;
    }
  }
  return i;
}

/**
 * Guest rx with MRG_RXBUF, the common case (twin: the first branch of
 * VirtioRxQueue.rxBurst): used entries that are one whole packet in one
 * buffer (num_buffers 1) become packets, their descriptors go on the free
 * stack. Counts packets and bytes into the queue's counters (`stats`, a heap
 * byte offset).
 * @returns how many used entries it took (one packet each).
 */
export function rxFast(burst: u32, n: u32, usedRing: u32, mask: u32, lastUsed: u32, ready: u32, sw: u32, limit: u32, free: u32, numFree: u32, cap: u32, port: u32, stats: u32): u32 {
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
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

/**
 * Guest rx refill of one-descriptor buffers (twin: VirtioRxQueue.fill with
 * one segment per buffer): pops `count` heads off the free stack, posts
 * fresh mbufs from `mbufs` on them and fills the avail ring from `idx`.
 * @returns the new avail index (not yet published).
 */
export function fillOne(mbufs: u32, count: u32, free: u32, numFree: u32, sw: u32, desc: u32, availRing: u32, mask: u32, idx: u32, offset: u32, cap: u32, gpaHi: u32): u32 {
  for (let i: u32 = 0; i < count; i++) {
    const head = <u32>load<u16>(free + ((numFree - 1 - i) << 1));
    const m = load<u32>(mbufs + (i << 2));
    store<u32>(sw + (head << 2), m);
    const d = desc + head * DESC_SIZE;
    store<u32>(d, load<u32>(m << MBUF_SHIFT, M_BUF_ADDR) + offset);
    store<u32>(d, gpaHi, 4);
    store<u32>(d, cap, 8);
    store<u32>(d, VRING_DESC_F_WRITE | ((head + 1) << 16), 12);
    store<u16>(availRing + (((idx + i) & mask) << 1), <u16>head);
  }
  return (idx + count) & 0xffff;
}

/**
 * Host dequeue, the common case (twin: the first branch of
 * VhostQueue.dequeueBurst): each avail entry that is one device-readable
 * descriptor in guest memory holding a header and at most `segRoom` bytes of
 * packet goes into the next of the burst's fresh mbufs. Two passes, as
 * DPDK's batched copies: the descriptors first (where each packet is, noted
 * at `srcs`), then the bytes, so the guest's cache lines are fetched many at
 * a time instead of one packet after the other. The second pass takes
 * addresses and lengths only from what the first checked: no descriptor is
 * fetched twice, so a guest rewriting one meanwhile changes nothing.
 * @returns how many packets it took (each one avail and one used entry).
 */
export function dequeueFast(mbufs: u32, n: u32, desc: u32, availRing: u32, usedRing: u32, mask: u32, num: u32, lastAvail: u32, usedIdx: u32, table: u32, segRoom: u32, port: u32, srcs: u32): u32 {
  let i: u32 = 0;
  for (; i < n; i++) {
    const head = <u32>load<u16>(availRing + (((lastAvail + i) & mask) << 1));
    if (head >= num) break;
    const d = desc + head * DESC_SIZE;
    const total = load<u32>(d, 8);
    if (load<u16>(d, 12) != 0 || total <= NET_HDR_SIZE || total - NET_HDR_SIZE > segRoom) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = translate(table, gpa, total);
    if (at < 0) break;
    const len = total - NET_HDR_SIZE;
    const r = load<u32>(mbufs + (i << 2)) << MBUF_SHIFT;
    store<u32>(srcs + (i << 2), <u32>at + NET_HDR_SIZE);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>port, M_PORT);
    const e = usedRing + 4 + (((usedIdx + i) & mask) << 3);
    store<u32>(e, head);
    store<u32>(e, 0, 4);
  }
  for (let k: u32 = 0; k < i; k++) {
    const r = load<u32>(mbufs + (k << 2)) << MBUF_SHIFT;
    copyBytes(load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF), load<u32>(srcs + (k << 2)), <u32>load<u16>(r, M_DATA_LEN));
  }
  return i;
}

/** The guest tx queue's free-list state: f64 slots G_FREE_HEAD and G_NUM_FREE of guest-ring.ts, as byte offsets. */
const G_FREE_HEAD: u32 = 3 * 8;
const G_NUM_FREE: u32 = 2 * 8;
export const layoutGFreeHead: u32 = G_FREE_HEAD;
export const layoutGNumFree: u32 = G_NUM_FREE;

/**
 * Guest tx, the common case (twin: the first branch of VirtioTxQueue.txBurst):
 * a one-segment packet the sender owns alone, with room for the header in
 * its headroom, goes out as one descriptor from the free list, header
 * pushed. Counts packets and bytes into `stats`.
 * @returns how many it queued (avail entries from `idx`, not yet published).
 */
export function txFast(burst: u32, n: u32, state: u32, nextFree: u32, sw: u32, ndesc: u32, desc: u32, availRing: u32, mask: u32, idx: u32, gpaHi: u32, stats: u32): u32 {
  let freeHead = <u32>load<f64>(state, G_FREE_HEAD);
  let numFree = <u32>load<f64>(state, G_NUM_FREE);
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
  store<f64>(state, <f64>freeHead, G_FREE_HEAD);
  store<f64>(state, <f64>numFree, G_NUM_FREE);
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

const G_LAST_USED: u32 = 1 * 8;
const G_BAD_USED: u32 = 5 * 8;
const G_OLDEST: u32 = 6 * 8;
export const layoutGLastUsed: u32 = G_LAST_USED;
export const layoutGBadUsed: u32 = G_BAD_USED;
export const layoutGOldest: u32 = G_OLDEST;

/**
 * Guest tx completions (twin: VirtioTxQueue.cleanup): the `ready` used
 * entries after the last one seen give their descriptors back to the free
 * list and their packets to `stage`, for the caller to free in one batch.
 * An entry naming a descriptor that is not in flight is counted and skipped.
 * With IN_ORDER (`inOrder`) the used entries need not be read at all.
 * @returns how many packets it staged.
 */
export function txCleanup(usedRing: u32, mask: u32, ready: u32, num: u32, state: u32, sw: u32, nextFree: u32, ndesc: u32, stage: u32, inOrder: u32): u32 {
  const lastUsed = <u32>load<f64>(state, G_LAST_USED);
  if (inOrder) return txCleanupInOrder(lastUsed, ready, state, sw, nextFree, ndesc, stage);
  let freeHead = <u32>load<f64>(state, G_FREE_HEAD);
  let numFree = <u32>load<f64>(state, G_NUM_FREE);
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
  store<f64>(state, <f64>freeHead, G_FREE_HEAD);
  store<f64>(state, <f64>numFree, G_NUM_FREE);
  store<f64>(state, <f64>((lastUsed + ready) & 0xffff), G_LAST_USED);
  if (bad > 0) store<f64>(state, load<f64>(state, G_BAD_USED) + <f64>bad, G_BAD_USED);
  return k;
}

/**
 * txCleanup with IN_ORDER: the device used the chains in the order they were
 * made available (and may have written one used entry per batch), so the
 * `ready` oldest chains are done. Descriptors were taken in ring order and
 * `nextFree` is the ring itself, so nothing is relinked: the oldest chain
 * moves on, the next free one stays. A device claiming more than is in flight
 * is counted and the claim cut short.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function txCleanupInOrder(lastUsed: u32, ready: u32, state: u32, sw: u32, nextFree: u32, ndesc: u32, stage: u32): u32 {
  let oldest = <u32>load<f64>(state, G_OLDEST);
  let numFree = <u32>load<f64>(state, G_NUM_FREE);
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
  store<f64>(state, <f64>oldest, G_OLDEST);
  store<f64>(state, <f64>numFree, G_NUM_FREE);
  store<f64>(state, <f64>((lastUsed + ready) & 0xffff), G_LAST_USED);
  if (k < ready) store<f64>(state, load<f64>(state, G_BAD_USED) + <f64>(ready - k), G_BAD_USED);
  return k;
}
