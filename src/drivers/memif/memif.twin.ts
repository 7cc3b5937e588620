/**
 * net_memif's per-burst work, the wasm kernels (memif.as.ts) or their
 * TypeScript twins (here, same signatures and the same steps in the same
 * order, so two heaps given the same traffic end byte for byte equal),
 * chosen once when a queue is opened (`memifOps`). Arguments are heap byte
 * offsets: `q` the queue's block (memif.record.ts), `lc` the calling thread's
 * lcore block, `burst` a burst.
 */
import type { Heap } from '../../eal/heap.js';
import { queueOps, QueueTwin } from '../../ethdev/queue-ops.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_NB_SEGS, H_PORT, MBUF_HALF_SHIFT, MBUF_MAX_NB_SEGS, MBUF_WORD_SHIFT, W_NEXT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import type { Mempool } from '../../mem/mempool.js';
import {
  MDESC_FLAGS,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MDESC_REGION,
  MEMIF_DESC_FLAG_NEXT,
  MEMIF_REGION_ENTRY,
  MEMIF_RING_FLAG_MASK_INT,
  MEMIF_ZC_REFILL,
  MQ_D_BAD_DESC,
  MQ_F_C2S,
  MQ_SEG,
  MQ_W_BSIZE,
  MQ_W_BUFS,
  MQ_W_BUSY,
  MQ_W_CAP,
  MQ_W_DONE,
  MQ_W_DONE_CAP,
  MQ_W_FAULT,
  MQ_W_FLAGS,
  MQ_W_HEAD,
  MQ_W_KICK,
  MQ_W_LAST,
  MQ_W_MASK,
  MQ_W_NB_DONE,
  MQ_W_PEER,
  MQ_W_PORT,
  MQ_W_REGIONS,
  MQ_W_RING,
  MQ_W_SLOTS,
  MQ_W_STATS,
  MREGS_ENTRIES,
  MREGS_W_ENTRIES,
  MREGS_W_COUNT,
  MRING_DESC,
  MRING_FLAGS,
  MRING_HEAD,
  MRING_TAIL,
} from './memif-layout.js';

export interface MemifOps {
  /** rte_eth_rx_burst on net_memif. @returns packets received (0 while the link is down). */
  rx(q: number, lc: number, burst: number, n: number): number;
  /** rte_eth_tx_burst's copy into the ring, without the free. @returns how many leading packets went (the caller frees them). */
  tx(q: number, lc: number, burst: number, n: number): number;
  /** Zero-copy rx (eth_memif_rx_zc): the ring's own mbufs, then a refill. @returns packets received. */
  rxZc(q: number, lc: number, burst: number, n: number): number;
  /** Zero-copy tx (eth_memif_tx_zc): consumed packets to the queue's `done`, then the burst's mbufs into the ring. @returns how many leading packets it took. */
  txZc(q: number, lc: number, burst: number, n: number): number;
  /** Zero-copy rx's refill: fresh mbufs posted in the ring's free slots. @returns how many. */
  refillZc(q: number, lc: number): number;
}

/** txFree: free tx slots, counted from the peer's index `peer`. */
function txFree(c2s: boolean, mask: number, slot: number, peer: number): number {
  return c2s ? mask + 1 - ((slot - peer) & 0xffff) : (peer - slot) & 0xffff;
}

/**
 * The kernels when the heap has them, else the twins. `mp` is the rx queue's
 * pool (null on a tx queue): a debug pool keeps rx on the twins, whose pool
 * calls do its checks.
 */
export function memifOps(heap: Heap, mb: Mbufs, mp: Mempool | null): MemifOps {
  const copy = queueOps(heap, mp, 'memifRx', 'memifTx', () => new MemifTwin(heap, mb, mp));
  if (copy instanceof MemifTwin) return copy;
  const k = heap.kernels!;
  return { rx: copy.rx, tx: copy.tx, rxZc: k.fn('memifRxZc'), txZc: k.fn('memifTxZc'), refillZc: k.fn('memifRefillZc') };
}

/** The twins: what the kernels do, readable, and their oracle in the tests. */
class MemifTwin extends QueueTwin implements MemifOps {

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
    private readonly mp: Mempool | null,
  ) {
    super(heap);
  }

  // The kernels' busy word (memif.as.ts, busy): set around every burst, left set after a tx that asks for a kick.
  rx(q: number, lc: number, burst: number, n: number): number {
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 1);
    const got = this.rxCopy(q, lc, burst, n);
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 0);
    return got;
  }

  tx(q: number, lc: number, burst: number, n: number): number {
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 1);
    const sent = this.txCopy(q, lc, burst, n);
    if (this.u32[(q >>> 2) + MQ_W_KICK] === 0) Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 0);
    return sent;
  }

  rxZc(q: number, lc: number, burst: number, n: number): number {
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 1);
    const got = this.rxZcBody(q, lc, burst, n);
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 0);
    return got;
  }

  txZc(q: number, lc: number, burst: number, n: number): number {
    Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 1);
    const sent = this.txZcBody(q, lc, burst, n);
    if (this.u32[(q >>> 2) + MQ_W_KICK] === 0) Atomics.store(this.u32, (q >>> 2) + MQ_W_BUSY, 0);
    return sent;
  }

  /** The heap address of descriptor `d`'s buffer when `len` bytes fit its region, else 0. */
  private bufAt(regions: number, d: number, len: number): number {
    const u32 = this.u32;
    const r = this.u16[(d + MDESC_REGION) >>> 1]!;
    if (r >= u32[(regions >>> 2) + MREGS_W_COUNT]!) return 0;
    const e = (regions + MREGS_ENTRIES + r * MEMIF_REGION_ENTRY) >>> 2;
    const off = u32[(d + MDESC_OFFSET) >>> 2]!;
    if (off + len > u32[e + 1]!) return 0;
    return u32[e]! + off;
  }

  /** peerAvail: the producer's index read and kept; the slots waiting from `cur` (0, counted as a fault, past the ring). */
  private peerAvail(q: number, at: number, cur: number, mask: number): number {
    const peer = Atomics.load(this.u16, at >>> 1);
    this.u32[(q >>> 2) + MQ_W_PEER] = peer;
    const avail = (peer - cur) & 0xffff;
    if (avail <= mask + 1) return avail;
    this.fault(q);
    return 0;
  }

  /** peerFree: the consumer's index read and kept; the free slots from `slot` (0, counted as a fault, past the ring). */
  private peerFree(q: number, at: number, c2s: boolean, mask: number, slot: number): number {
    const peer = Atomics.load(this.u16, at >>> 1);
    this.u32[(q >>> 2) + MQ_W_PEER] = peer;
    const free = txFree(c2s, mask, slot, peer);
    if (free >= 0 && free <= mask + 1) return free;
    this.fault(q);
    return 0;
  }

  /** txBuf: slot `slot`'s buffer where this side put it (`own`), else where descriptor `d` says, checked. */
  private txBuf(own: number, slot: number, mask: number, bsize: number, regions: number, d: number, cap: number): number {
    return own !== 0 ? own + (slot & mask) * bsize : this.bufAt(regions, d, cap);
  }

  private fault(q: number): void {
    this.f64[(q >>> 3) + MQ_D_BAD_DESC] += 1;
    this.u32[(q >>> 2) + MQ_W_FAULT] = 1;
  }

  private rxCopy(q: number, lc: number, burst: number, n: number): number {
    const { u16, u32, f64 } = this;
    const w = q >>> 2;
    const ring = Atomics.load(u32, w + MQ_W_RING);
    if (ring === 0) return 0;
    const mask = u32[w + MQ_W_MASK]!;
    const c2s = (u32[w + MQ_W_FLAGS]! & MQ_F_C2S) !== 0;
    const regions = u32[w + MQ_W_REGIONS]!;
    const descs = ring + MRING_DESC;
    const mp = this.mp!;
    const cap = mp.bufLen - mp.headroom;
    const port = u32[w + MQ_W_PORT]!;
    const stats = u32[w + MQ_W_STATS]! >>> 3;
    let cur = u32[w + MQ_W_LAST]!;
    const peerAt = ring + (c2s ? MRING_HEAD : MRING_TAIL);
    let avail = (u32[w + MQ_W_PEER]! - cur) & 0xffff;
    let fresh = avail < n || avail > mask + 1;
    if (fresh) avail = this.peerAvail(q, peerAt, cur, mask);
    // Heads for the whole burst in one allocation, the unused back at the end.
    const want = Math.min(avail, n);
    let have = 0;
    if (want > 0) {
      have = mp.allocBulk(this.words, want, burst >>> 2);
      if (have === 0 && want > 1) have = mp.allocBulk(this.words, 1, burst >>> 2);
      if (have === 0) f64[stats + RXQ_NOMBUF] += 1;
    }
    let got = 0;
    let bytes = 0;
    while (got < have) {
      if (avail === 0) {
        if (fresh) break;
        avail = this.peerAvail(q, peerAt, cur, mask);
        fresh = true;
        if (avail === 0) break;
      }
      let k = 0;
      let total = 0;
      let ok = true;
      let more = true;
      while (more && k < avail) {
        const d = descs + (((cur + k) & mask) << 4);
        const len = u32[(d + MDESC_LENGTH) >>> 2]!;
        if (this.bufAt(regions, d, len) === 0) ok = false;
        total += len;
        more = (u16[(d + MDESC_FLAGS) >>> 1]! & MEMIF_DESC_FLAG_NEXT) !== 0;
        k++;
      }
      if (more) {
        if (avail <= mask) {
          if (fresh) break;
          avail = this.peerAvail(q, peerAt, cur, mask);
          fresh = true;
          continue;
        }
        ok = false;
      }
      const segs = total === 0 ? 1 : Math.ceil(total / cap);
      if (!ok || segs > MBUF_MAX_NB_SEGS) {
        this.fault(q);
        cur += k;
        avail -= k;
        continue;
      }
      const slot = (burst >>> 2) + got;
      const head = u32[slot]!;
      u16[(head << MBUF_HALF_SHIFT) + H_PORT] = port;
      let m = head;
      let room = cap;
      let nombuf = false;
      let bad = false;
      let copied = 0;
      for (let j = 0; j < k && !nombuf && !bad; j++) {
        const d = descs + (((cur + j) & mask) << 4);
        // The peer may rewrite a descriptor after the check above: check again, copy no more than checked.
        let len = Math.min(u32[(d + MDESC_LENGTH) >>> 2]!, total - copied);
        let src = this.bufAt(regions, d, len);
        if (src === 0) {
          bad = true;
          break;
        }
        copied += len;
        while (len > 0) {
          if (room === 0) {
            if (mp.allocBulk(this.words, 1, (q + MQ_SEG) >>> 2) !== 1) {
              nombuf = true;
              break;
            }
            const s = u32[(q + MQ_SEG) >>> 2]!;
            u32[(m << MBUF_WORD_SHIFT) + W_NEXT] = s;
            m = s;
            u16[(m << MBUF_HALF_SHIFT) + H_PORT] = port;
            u16[(head << MBUF_HALF_SHIFT) + H_NB_SEGS]! += 1;
            room = cap;
          }
          const dl = u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
          const c = Math.min(len, room);
          const at = this.mb.mtod(m) + dl;
          this.u8.copyWithin(at, src, src + c);
          u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = dl + c;
          src += c;
          len -= c;
          room -= c;
        }
      }
      if (nombuf || bad) {
        this.mb.freeBulk(this.words, 1, slot);
        have--;
        u32[slot] = u32[(burst >>> 2) + have]!;
        if (bad) {
          this.fault(q);
          cur += k;
          avail -= k;
          continue;
        }
        f64[stats + RXQ_NOMBUF] += 1;
        break;
      }
      u32[(head << MBUF_WORD_SHIFT) + W_PKT_LEN] = copied;
      bytes += copied;
      got++;
      cur += k;
      avail -= k;
    }
    if (have > got) this.mb.freeBulk(this.words, have - got, (burst >>> 2) + got);
    cur &= 0xffff;
    u32[w + MQ_W_LAST] = cur;
    if (c2s) {
      Atomics.store(u16, (ring + MRING_TAIL) >>> 1, cur);
    } else {
      let h = Atomics.load(u16, (ring + MRING_HEAD) >>> 1);
      const bsize = u32[w + MQ_W_BSIZE]!;
      let free = (mask + 1 - ((h - cur) & 0xffff)) & 0xffff;
      if (free > mask + 1) free = 0;
      for (; free > 0; free--) {
        u32[(descs + ((h & mask) << 4) + MDESC_LENGTH) >>> 2] = bsize;
        h++;
      }
      Atomics.store(u16, (ring + MRING_HEAD) >>> 1, h & 0xffff);
    }
    f64[stats + RXQ_PACKETS] += got;
    f64[stats + RXQ_BYTES] += bytes;
    return got;
  }

  private txCopy(q: number, _lc: number, burst: number, n: number): number {
    const { u16, u32, f64 } = this;
    const w = q >>> 2;
    u32[w + MQ_W_KICK] = 0;
    const ring = Atomics.load(u32, w + MQ_W_RING);
    if (ring === 0) return 0;
    const mask = u32[w + MQ_W_MASK]!;
    const c2s = (u32[w + MQ_W_FLAGS]! & MQ_F_C2S) !== 0;
    const regions = u32[w + MQ_W_REGIONS]!;
    const descs = ring + MRING_DESC;
    const bsize = u32[w + MQ_W_BSIZE]!;
    const own = u32[w + MQ_W_BUFS]!;
    let slot = Atomics.load(u16, (ring + (c2s ? MRING_HEAD : MRING_TAIL)) >>> 1);
    const peerAt = ring + (c2s ? MRING_TAIL : MRING_HEAD);
    let free = txFree(c2s, mask, slot, u32[w + MQ_W_PEER]!);
    let fresh = free < n || free > mask + 1; // (a negative count is fewer than n)
    if (fresh) free = this.peerFree(q, peerAt, c2s, mask, slot);
    const b = burst >>> 2;
    let sent = 0;
    let bytes = 0;
    let bad = false;
    while (sent < n && !bad) {
      if (free === 0) {
        if (fresh) break;
        free = this.peerFree(q, peerAt, c2s, mask, slot);
        fresh = true;
        if (free === 0) break;
      }
      const first = slot;
      const firstFree = free;
      let d = descs + ((slot & mask) << 4);
      let cap = c2s ? bsize : u32[(d + MDESC_LENGTH) >>> 2]!;
      let dst = this.txBuf(own, slot, mask, bsize, regions, d, cap);
      if (dst === 0) {
        bad = true;
        break;
      }
      let off = 0;
      let full = false;
      const h = u32[b + sent]!;
      for (let m = h; m !== 0 && !full && !bad; ) {
        let src = this.mb.mtod(m);
        let len = u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
        while (len > 0) {
          if (off === cap) {
            if (free === 1) {
              full = true;
              break;
            }
            u16[(d + MDESC_FLAGS) >>> 1] = MEMIF_DESC_FLAG_NEXT;
            u32[(d + MDESC_LENGTH) >>> 2] = off;
            slot++;
            free--;
            d = descs + ((slot & mask) << 4);
            cap = c2s ? bsize : u32[(d + MDESC_LENGTH) >>> 2]!;
            dst = this.txBuf(own, slot, mask, bsize, regions, d, cap);
            if (dst === 0) {
              bad = true;
              break;
            }
            off = 0;
          }
          const c = Math.min(len, cap - off);
          this.u8.copyWithin(dst + off, src, src + c);
          off += c;
          src += c;
          len -= c;
        }
        m = u32[(m << MBUF_WORD_SHIFT) + W_NEXT]!;
      }
      if (full && !bad && !fresh) {
        slot = first;
        free = this.peerFree(q, peerAt, c2s, mask, slot);
        fresh = true;
        continue;
      }
      if (full || bad) {
        slot = first;
        free = firstFree;
        break;
      }
      u16[(d + MDESC_FLAGS) >>> 1] = 0;
      u32[(d + MDESC_LENGTH) >>> 2] = off;
      slot++;
      free--;
      bytes += u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      sent++;
    }
    if (bad) this.fault(q);
    Atomics.store(u16, ((c2s ? MRING_HEAD : MRING_TAIL) + ring) >>> 1, slot & 0xffff);
    if (sent > 0 && (u16[(ring + MRING_FLAGS) >>> 1]! & MEMIF_RING_FLAG_MASK_INT) === 0) u32[w + MQ_W_KICK] = 1;
    const stats = u32[w + MQ_W_STATS]! >>> 3;
    f64[stats + TXQ_PACKETS] += sent;
    f64[stats + TXQ_BYTES] += bytes;
    return sent;
  }

  // ---- zero-copy: the twins of memifRefillZc, memifRxZc, memifTxZc ----

  refillZc(q: number, _lc: number): number {
    const { u16, u32, f64 } = this;
    const w = q >>> 2;
    const ring = Atomics.load(u32, w + MQ_W_RING);
    if (ring === 0) return 0;
    const mask = u32[w + MQ_W_MASK]!;
    const size = mask + 1;
    const slots = u32[w + MQ_W_SLOTS]!;
    const descs = ring + MRING_DESC;
    let head = u32[w + MQ_W_HEAD]!;
    const free = size - ((head - u32[w + MQ_W_LAST]!) & 0xffff);
    const least = Math.min(size >>> 1, MEMIF_ZC_REFILL);
    if (free === 0 || free > size || (free < least && free < size)) return 0;
    const at = head & mask;
    const n = Math.min(size - at, free);
    if (this.mp!.allocBulk(this.words, n, (slots >>> 2) + at) !== n) {
      f64[(u32[w + MQ_W_STATS]! >>> 3) + RXQ_NOMBUF] += 1;
      return 0;
    }
    const cap = u32[w + MQ_W_CAP]!;
    for (let i = 0; i < n; i++) {
      const d = descs + ((at + i) << 4);
      u16[(d + MDESC_FLAGS) >>> 1] = 0;
      u16[(d + MDESC_REGION) >>> 1] = 0;
      u32[(d + MDESC_LENGTH) >>> 2] = cap;
      u32[(d + MDESC_OFFSET) >>> 2] = this.mb.mtod(u32[(slots >>> 2) + at + i]!);
    }
    head = (head + n) & 0xffff;
    u32[w + MQ_W_HEAD] = head;
    Atomics.store(u16, (ring + MRING_HEAD) >>> 1, head);
    return n;
  }

  private rxZcBody(q: number, lc: number, burst: number, n: number): number {
    const { u16, u32, f64 } = this;
    const w = q >>> 2;
    const ring = Atomics.load(u32, w + MQ_W_RING);
    if (ring === 0) return 0;
    const mask = u32[w + MQ_W_MASK]!;
    const slots = u32[w + MQ_W_SLOTS]! >>> 2;
    const descs = ring + MRING_DESC;
    const cap = u32[w + MQ_W_CAP]!;
    const port = u32[w + MQ_W_PORT]!;
    const stats = u32[w + MQ_W_STATS]! >>> 3;
    let cur = u32[w + MQ_W_LAST]!;
    const posted = (u32[w + MQ_W_HEAD]! - cur) & 0xffff;
    let avail = (Atomics.load(u16, (ring + MRING_TAIL) >>> 1) - cur) & 0xffff;
    if (avail > posted) {
      this.fault(q);
      avail = 0;
    }
    let got = 0;
    let bytes = 0;
    while (avail > 0 && got < n) {
      let k = 0;
      let ok = true;
      let more = true;
      while (more && k < avail) {
        const d = descs + (((cur + k) & mask) << 4);
        if (u32[(d + MDESC_LENGTH) >>> 2]! > cap || u32[slots + ((cur + k) & mask)] === 0) ok = false;
        more = (u16[(d + MDESC_FLAGS) >>> 1]! & MEMIF_DESC_FLAG_NEXT) !== 0;
        k++;
      }
      if (more) {
        if (avail < posted) break;
        ok = false;
      }
      if (!ok || k > MBUF_MAX_NB_SEGS) {
        this.fault(q);
        break;
      }
      const head = u32[slots + (cur & mask)]!;
      let prev = 0;
      let sum = 0;
      for (let j = 0; j < k; j++) {
        const s = slots + ((cur + j) & mask);
        const h = u32[s]!;
        u32[s] = 0;
        // Read once more and clamp: the server may rewrite a descriptor after the check above.
        const len = Math.min(u32[(descs + (((cur + j) & mask) << 4) + MDESC_LENGTH) >>> 2]!, cap);
        sum += len;
        u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = len;
        u16[(h << MBUF_HALF_SHIFT) + H_PORT] = port;
        if (prev !== 0) u32[(prev << MBUF_WORD_SHIFT) + W_NEXT] = h;
        prev = h;
      }
      u16[(head << MBUF_HALF_SHIFT) + H_NB_SEGS] = k;
      u32[(head << MBUF_WORD_SHIFT) + W_PKT_LEN] = sum;
      u32[(burst >>> 2) + got] = head;
      bytes += sum;
      got++;
      cur += k;
      avail -= k;
    }
    u32[w + MQ_W_LAST] = cur & 0xffff;
    f64[stats + RXQ_PACKETS] += got;
    f64[stats + RXQ_BYTES] += bytes;
    this.refillZc(q, lc);
    return got;
  }

  private txZcBody(q: number, _lc: number, burst: number, n: number): number {
    const { u16, u32, f64 } = this;
    const w = q >>> 2;
    u32[w + MQ_W_KICK] = 0;
    u32[w + MQ_W_NB_DONE] = 0;
    const ring = Atomics.load(u32, w + MQ_W_RING);
    if (ring === 0) return 0;
    const mask = u32[w + MQ_W_MASK]!;
    const slots = u32[w + MQ_W_SLOTS]! >>> 2;
    const done = u32[w + MQ_W_DONE]! >>> 2;
    const doneCap = u32[w + MQ_W_DONE_CAP]!;
    const descs = ring + MRING_DESC;
    const limit = u32[(u32[w + MQ_W_REGIONS]! >>> 2) + MREGS_W_ENTRIES + 1]!; // region 0's size
    let head = u32[w + MQ_W_HEAD]!;
    let last = u32[w + MQ_W_LAST]!;
    let consumed = (Atomics.load(u16, (ring + MRING_TAIL) >>> 1) - last) & 0xffff;
    if (consumed > ((head - last) & 0xffff)) {
      this.fault(q);
      consumed = 0;
    }
    let nd = 0;
    for (let i = 0; i < consumed; i++) {
      const s = slots + ((last + i) & mask);
      const h = u32[s]!;
      if (h !== 0) {
        u32[done + nd++] = h;
        u32[s] = 0;
      }
    }
    last = (last + consumed) & 0xffff;
    u32[w + MQ_W_LAST] = last;
    let free = mask + 1 - ((head - last) & 0xffff);
    const b = burst >>> 2;
    let sent = 0;
    let bytes = 0;
    let errors = 0;
    while (sent < n) {
      const h = u32[b + sent]!;
      const segs = u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS]!;
      let inside = true;
      for (let m = h; m !== 0; m = u32[(m << MBUF_WORD_SHIFT) + W_NEXT]!) {
        if (this.mb.mtod(m) + u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]! > limit) inside = false;
      }
      if (!inside) {
        if (nd === doneCap) break;
        u32[done + nd++] = h;
        errors++;
        sent++;
        continue;
      }
      if (segs > free) break;
      for (let m = h; m !== 0; ) {
        const next = u32[(m << MBUF_WORD_SHIFT) + W_NEXT]!;
        const d = descs + ((head & mask) << 4);
        u16[(d + MDESC_FLAGS) >>> 1] = next !== 0 ? MEMIF_DESC_FLAG_NEXT : 0;
        u16[(d + MDESC_REGION) >>> 1] = 0;
        u32[(d + MDESC_LENGTH) >>> 2] = u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
        u32[(d + MDESC_OFFSET) >>> 2] = this.mb.mtod(m);
        head++;
        m = next;
      }
      u32[slots + ((head - 1) & mask)] = h;
      free -= segs;
      bytes += u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      sent++;
    }
    head &= 0xffff;
    u32[w + MQ_W_HEAD] = head;
    Atomics.store(u16, (ring + MRING_HEAD) >>> 1, head);
    u32[w + MQ_W_NB_DONE] = nd;
    if (sent > errors && (u16[(ring + MRING_FLAGS) >>> 1]! & MEMIF_RING_FLAG_MASK_INT) === 0) u32[w + MQ_W_KICK] = 1;
    const stats = u32[w + MQ_W_STATS]! >>> 3;
    f64[stats + TXQ_PACKETS] += sent - errors;
    f64[stats + TXQ_BYTES] += bytes;
    f64[stats + TXQ_ERRORS] += errors;
    return sent;
  }
}
