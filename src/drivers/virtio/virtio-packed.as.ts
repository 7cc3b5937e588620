// virtio_user's data path common case over a packed ring (VIRTIO_F_RING_PACKED),
// one call per burst (twins in virtio-packed.twin.ts, same signatures). As the
// split kernels (virtio-rxtx.as.ts): each does the packets that take the common
// path, one descriptor each, and stops at the first that does not; the queue
// (virtio-packed.ts) does that one the general way and calls again. `s` is the
// queue's block (guest-ring.record.ts): availIdx and lastUsed are ring
// positions, their wrap counters in availWrap and usedWrap. A descriptor's
// flags are written last and atomically: they hand it to the device, and a
// used element's flags hand it back, so they are read first, atomically.
import { RXQ_STAT_BYTES as Q_BYTES, RXQ_STAT_PACKETS as Q_PACKETS } from '../../ethdev/stats-layout.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NB_SEGS, M_OL_FLAGS_HI, M_PKT_LEN, M_PORT, M_REFCNT, OL_HI_INDIRECT } from '../../mem/mbuf-layout.as';
import { PDESC_FLAGS, PDESC_ID, PDESC_LEN, PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from '../../virtio/packed-layout.as';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE } from '../../virtio/virtio-net-layout.as';
import { VRING_DESC_F_WRITE } from '../../virtio/vring-layout.as';
import {
  VQG_AVAIL_IDX,
  VQG_AVAIL_WRAP,
  VQG_BAD_USED,
  VQG_CAP,
  VQG_DESC,
  VQG_FLAGS,
  VQG_FREE,
  VQG_FREE_HEAD,
  VQG_F_IN_ORDER,
  VQG_GPA_HI,
  VQG_HEADROOM,
  VQG_LAST_USED,
  VQG_LIMIT,
  VQG_NDESC,
  VQG_NEXT_FREE,
  VQG_NUM,
  VQG_NUM_FREE,
  VQG_OLDEST,
  VQG_PORT,
  VQG_STATS,
  VQG_SW,
  VQG_USED_WRAP,
} from './guest-ring-layout.as';

/** The AVAIL and USED bits of a descriptor the driver makes available under wrap counter `w`. */
// @ts-ignore: decorator
@inline
function availBits(w: u32): u32 {
  return w != 0 ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED;
}

/** Whether `flags` mark a used element under wrap counter `w`: AVAIL and USED both equal to it. */
// @ts-ignore: decorator
@inline
function isUsed(flags: u32, w: u32): bool {
  return (flags & (VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED)) == (w != 0 ? VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED : 0);
}

/**
 * Guest rx over a packed ring with MRG_RXBUF, the common case: the used
 * elements from lastUsed that are one whole packet in one buffer (num_buffers
 * 1) become packets in `burst` (at most `n`), their buffer ids go on the free
 * stack. Counts packets and bytes.
 * @returns how many it took (one packet, one ring position each).
 */
export function virtioPackedRx(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const desc = load<u32>(s, VQG_DESC);
  const num = load<u32>(s, VQG_NUM);
  const sw = load<u32>(s, VQG_SW);
  const limit = load<u32>(s, VQG_LIMIT);
  const free = load<u32>(s, VQG_FREE);
  const numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  const cap = load<u32>(s, VQG_CAP);
  const port = load<u32>(s, VQG_PORT);
  const stats = load<u32>(s, VQG_STATS);
  let pos = <u32>load<f64>(s, VQG_LAST_USED);
  let w = <u32>load<f64>(s, VQG_USED_WRAP);
  let i: u32 = 0;
  let bytes: u32 = 0;
  for (; i < n; i++) {
    const d = desc + pos * PDESC_SIZE;
    if (!isUsed(<u32>atomic.load<u16>(d, PDESC_FLAGS), w)) break;
    const id = <u32>load<u16>(d, PDESC_ID);
    const len = load<u32>(d, PDESC_LEN);
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
    if (++pos == num) {
      pos = 0;
      w ^= 1;
    }
  }
  store<f64>(s, <f64>pos, VQG_LAST_USED);
  store<f64>(s, <f64>w, VQG_USED_WRAP);
  store<f64>(s, <f64>(numFree + i), VQG_NUM_FREE);
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

/**
 * Guest rx refill of one-descriptor buffers over a packed ring: pops `n`
 * buffer ids off the free stack and makes the fresh mbufs of `burst`
 * available on them from availIdx, each descriptor's flags last.
 * @returns `n`.
 */
export function virtioPackedRxFill(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const free = load<u32>(s, VQG_FREE);
  const numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  const sw = load<u32>(s, VQG_SW);
  const desc = load<u32>(s, VQG_DESC);
  const num = load<u32>(s, VQG_NUM);
  const offset = load<u32>(s, VQG_HEADROOM);
  const cap = load<u32>(s, VQG_CAP);
  const gpaHi = load<u32>(s, VQG_GPA_HI);
  let pos = <u32>load<f64>(s, VQG_AVAIL_IDX);
  let w = <u32>load<f64>(s, VQG_AVAIL_WRAP);
  for (let i: u32 = 0; i < n; i++) {
    const id = <u32>load<u16>(free + ((numFree - 1 - i) << 1));
    const m = load<u32>(burst + (i << 2));
    store<u32>(sw + (id << 2), m);
    const d = desc + pos * PDESC_SIZE;
    store<u32>(d, load<u32>(m << MBUF_SHIFT, M_BUF_ADDR) + offset);
    store<u32>(d, gpaHi, 4);
    store<u32>(d, cap, PDESC_LEN);
    store<u16>(d, <u16>id, PDESC_ID);
    atomic.store<u16>(d, <u16>(VRING_DESC_F_WRITE | availBits(w)), PDESC_FLAGS);
    if (++pos == num) {
      pos = 0;
      w ^= 1;
    }
  }
  store<f64>(s, <f64>pos, VQG_AVAIL_IDX);
  store<f64>(s, <f64>w, VQG_AVAIL_WRAP);
  store<f64>(s, <f64>(numFree - n), VQG_NUM_FREE);
  return n;
}

/**
 * Guest tx over a packed ring, the common case: a one-segment packet the
 * sender owns alone, with room for the header in its headroom, goes out as
 * one descriptor at availIdx with a buffer id from the free list, header
 * pushed. Counts packets and bytes.
 * @returns how many it made available.
 */
export function virtioPackedTx(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const nextFree = load<u32>(s, VQG_NEXT_FREE);
  const sw = load<u32>(s, VQG_SW);
  const ndesc = load<u32>(s, VQG_NDESC);
  const desc = load<u32>(s, VQG_DESC);
  const num = load<u32>(s, VQG_NUM);
  const gpaHi = load<u32>(s, VQG_GPA_HI);
  const stats = load<u32>(s, VQG_STATS);
  let pos = <u32>load<f64>(s, VQG_AVAIL_IDX);
  let w = <u32>load<f64>(s, VQG_AVAIL_WRAP);
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
    // Written only when not already zero, as the split kernel: the host read this line last time round.
    if ((load<u32>(hdr) | load<u32>(hdr, 4) | load<u32>(hdr, 8)) != 0) {
      store<u32>(hdr, 0);
      store<u32>(hdr, 0, 4);
      store<u32>(hdr, 0, 8);
    }
    const id = freeHead;
    const d = desc + pos * PDESC_SIZE;
    store<u32>(d, hdr);
    store<u32>(d, gpaHi, 4);
    store<u32>(d, <u32>load<u16>(r, M_DATA_LEN) + NET_HDR_SIZE, PDESC_LEN);
    store<u16>(d, <u16>id, PDESC_ID);
    store<u32>(sw + (id << 2), m);
    store<u16>(ndesc + (id << 1), 1);
    atomic.store<u16>(d, <u16>availBits(w), PDESC_FLAGS);
    if (++pos == num) {
      pos = 0;
      w ^= 1;
    }
    freeHead = <u32>load<u16>(nextFree + (id << 1));
    numFree--;
    bytes += load<u32>(r, M_PKT_LEN);
  }
  store<f64>(s, <f64>pos, VQG_AVAIL_IDX);
  store<f64>(s, <f64>w, VQG_AVAIL_WRAP);
  store<f64>(s, <f64>freeHead, VQG_FREE_HEAD);
  store<f64>(s, <f64>numFree, VQG_NUM_FREE);
  if (i > 0) {
    store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
    store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  }
  return i;
}

/**
 * Guest tx completions over a packed ring: the used elements from lastUsed
 * give their chains' descriptors back (lastUsed moves on by each chain's
 * length) and their packets to `stage`, for the caller to free in one
 * batch; `n` is the stage's room, the ring size (never fewer than the chains
 * in flight, so a batch is never cut in two). Without IN_ORDER each element names its buffer id, which
 * goes back on the free list; with it, an element may stand for a batch
 * (DPDK's vhost writes one for the last buffer of each), so every chain from
 * the oldest in flight up to the id it names is done (DPDK's
 * virtio_xmit_cleanup_inorder_packed). An element naming an id that is not
 * in flight is counted and skipped.
 * @returns how many packets it staged.
 */
export function virtioPackedTxCleanup(s: u32, lc: u32, stage: u32, n: u32): u32 {
  const desc = load<u32>(s, VQG_DESC);
  const num = load<u32>(s, VQG_NUM);
  const sw = load<u32>(s, VQG_SW);
  const nextFree = load<u32>(s, VQG_NEXT_FREE);
  const ndesc = load<u32>(s, VQG_NDESC);
  const inOrder = (load<u32>(s, VQG_FLAGS) & VQG_F_IN_ORDER) != 0;
  let pos = <u32>load<f64>(s, VQG_LAST_USED);
  let w = <u32>load<f64>(s, VQG_USED_WRAP);
  let freeHead = <u32>load<f64>(s, VQG_FREE_HEAD);
  let numFree = <u32>load<f64>(s, VQG_NUM_FREE);
  let oldest = <u32>load<f64>(s, VQG_OLDEST);
  let bad: u32 = 0;
  let k: u32 = 0;
  while (k < n) {
    const d = desc + pos * PDESC_SIZE;
    if (!isUsed(<u32>atomic.load<u16>(d, PDESC_FLAGS), w)) break;
    const id = <u32>load<u16>(d, PDESC_ID);
    let adv: u32 = 0;
    if (id >= num || load<u32>(sw + (id << 2)) == 0) {
      bad++;
      adv = 1;
    } else if (inOrder) {
      // Every chain from the oldest through `id`: in flight, so the walk ends at `id` within the ring.
      for (;;) {
        const slot = sw + (oldest << 2);
        store<u32>(stage + (k++ << 2), load<u32>(slot));
        store<u32>(slot, 0);
        adv += <u32>load<u16>(ndesc + (oldest << 1));
        const done = oldest == id;
        oldest = <u32>load<u16>(nextFree + (oldest << 1));
        if (done) break;
      }
    } else {
      const slot = sw + (id << 2);
      store<u32>(stage + (k++ << 2), load<u32>(slot));
      store<u32>(slot, 0);
      adv = <u32>load<u16>(ndesc + (id << 1));
      store<u16>(nextFree + (id << 1), <u16>freeHead);
      freeHead = id;
    }
    numFree += adv;
    pos += adv;
    if (pos >= num) {
      pos -= num;
      w ^= 1;
    }
  }
  store<f64>(s, <f64>pos, VQG_LAST_USED);
  store<f64>(s, <f64>w, VQG_USED_WRAP);
  store<f64>(s, <f64>freeHead, VQG_FREE_HEAD);
  store<f64>(s, <f64>numFree, VQG_NUM_FREE);
  store<f64>(s, <f64>oldest, VQG_OLDEST);
  if (bad > 0) store<f64>(s, load<f64>(s, VQG_BAD_USED) + <f64>bad, VQG_BAD_USED);
  return k;
}
