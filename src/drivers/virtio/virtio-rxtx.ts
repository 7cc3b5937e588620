/**
 * virtio-net's data path on the guest side (DPDK's virtio_rxtx.c, split
 * rings): rx posts mbufs as device-writable buffers with room for the
 * virtio-net header in their headroom, reads used entries and assembles
 * mergeable buffers into chains; tx puts the header in the headroom when the
 * mbuf is its own (else in a per-slot header area), one descriptor per
 * segment or one indirect table, and reclaims completed packets in batches
 * through the shared TxReclaim (bulk puts, as the i40e study found best) once free descriptors fall below
 * txFreeThresh.
 *
 * The device is checked too: a used entry naming a descriptor the guest did
 * not post, or a length beyond the buffer, is counted (G_BAD_USED) and
 * skipped, never followed.
 *
 * The common case of each (one-buffer rx, the refill, one-segment tx, the
 * tx completions) is one call per burst to virtio-rxtx.as.ts's kernels or
 * their twins (virtio-rxtx.twin.ts), which read the queue's block
 * (guest-ring.record.ts); this file does the rest.
 */
import type { QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { pktStatsOp, type PktStatsOp } from '../../ethdev/pkt-stats.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats.js';
import { TxReclaim, type TxFreeMode } from '../../ethdev/tx-reclaim.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, H_REFCNT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_NEXT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE } from '../../virtio/vring.js';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE, VRING_USED_F_NO_NOTIFY, needEvent } from '../../virtio/virtio-net.js';
import {
  GPA_HI,
  G_AVAIL_IDX,
  G_BAD_USED,
  G_FREE_HEAD,
  G_KICKS,
  G_LAST_USED,
  G_NUM_FREE,
  G_OLDEST,
  VQG_F_IN_ORDER,
  VQG_W_AVAIL_RING,
  VQG_W_DESC,
  VQG_W_FLAGS,
  VQG_W_GPA_HI,
  VQG_W_IDX,
  VQG_W_MASK,
  VQG_W_NDESC,
  VQG_W_NEXT_FREE,
  VQG_W_NUM,
  VQG_W_PORT,
  VQG_W_READY,
  VQG_W_STATS,
  VQG_W_SW,
  VQG_W_USED,
  writeDesc,
  type GuestRingLayout,
} from './guest-ring.js';
import { RxPosted } from './rx-posted.js';
import { virtioOps, type VirtioOps } from './virtio-rxtx.twin.js';

/** Most descriptors in one indirect table (DPDK's VIRTIO_MAX_TX_INDIRECT). */
export const IND_MAX = 8;

export interface CommonDesc extends QueueDescriptor {
  driver: 'virtio_user';
  ring: GuestRingLayout;
  /** VIRTIO_F_RING_PACKED: the ring is a packed one (virtio-packed.ts runs it). */
  packed: boolean;
  port: number;
  stats: number;
  eventIdx: boolean;
  /** Heap byte offset of the kick counter the device may be woken through, or -1. */
  kick: number;
  /** net_stats=1: heap offset of the queue's pktStats block (ethdev/stats.record.ts), counted per packet as DPDK's virtio PMD does; 0 without. */
  pktStats: number;
  /** Packed: heap byte offset of the port's link state word (odd while no backend has the rings; virtio-packed.ts). */
  linkState: number;
}

export interface VirtioRxDesc extends CommonDesc {
  kind: 'rx';
  pool: number;
  mrg: boolean;
  /** Descriptors per posted buffer chain without MRG_RXBUF (enough for the MTU). */
  segsPerBuf: number;
  rxFreeThresh: number;
  /** Heap byte offset of the free-heads stack (u16 per head). */
  freeHeads: number;
}

export interface VirtioTxDesc extends CommonDesc {
  kind: 'tx';
  indirect: boolean;
  /** VIRTIO_F_IN_ORDER: descriptors taken in ring order, completions counted, not looked up. */
  inOrder: boolean;
  txFreeThresh: number;
  txFreeMode: TxFreeMode;
  /** Heap byte offsets: u16 free-list link per descriptor, u16 descriptor count per head, 16-byte header slot per head, indirect table per head. */
  nextFree: number;
  ndesc: number;
  hdrArea: number;
  indArea: number;
}

/**
 * What both queue kinds share: heap views and the ring's numbers, copied out
 * of the descriptor once (a field load each on the data path instead of a
 * chain through the descriptor), the kernels or twins, and publishing the
 * avail index. The ring's part of the queue's block mirrors the descriptor:
 * written when the queue is opened (at setup, and again with the same values
 * when a worker opens it), before any burst.
 */
export abstract class GuestQueue {
  protected readonly u16: Uint16Array;
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  protected readonly mb: Mbufs;
  /** net_stats=1's per-packet count, chosen once. */
  protected readonly countPkts: PktStatsOp;
  protected readonly ops: VirtioOps;
  /** The queue's block: byte offset (what the kernels take) and u32 index. */
  protected readonly s: number;
  protected readonly w: number;
  protected readonly lc: number;
  /** Heap byte offsets of the ring's parts, its size, and the f64 slots of its state and counters. */
  protected readonly desc: number;
  protected readonly avail: number;
  protected readonly used: number;
  protected readonly num: number;
  protected readonly mask: number;
  protected readonly st: number;
  protected readonly stats: number;
  protected readonly kick: number;
  private readonly eventIdx: boolean;

  constructor(
    protected readonly heap: Heap,
    d: CommonDesc,
  ) {
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.f64 = heap.f64;
    this.mb = new Mbufs(heap);
    this.countPkts = pktStatsOp(heap);
    this.ops = virtioOps(heap);
    this.desc = d.ring.desc;
    this.avail = d.ring.avail;
    this.used = d.ring.used;
    this.num = d.ring.num;
    this.mask = d.ring.num - 1;
    this.st = d.ring.state;
    this.stats = d.stats;
    this.kick = d.kick;
    this.eventIdx = d.eventIdx;
    this.s = d.ring.state * 8;
    this.w = this.s >>> 2;
    this.lc = heap.lcore;
    const u32 = this.u32;
    const w = this.w;
    u32[w + VQG_W_DESC] = d.ring.desc;
    u32[w + VQG_W_AVAIL_RING] = d.ring.avail + 4;
    u32[w + VQG_W_USED] = d.ring.used;
    u32[w + VQG_W_MASK] = d.ring.num - 1;
    u32[w + VQG_W_NUM] = d.ring.num;
    u32[w + VQG_W_SW] = d.ring.sw;
    u32[w + VQG_W_STATS] = d.stats * 8;
    u32[w + VQG_W_PORT] = d.port;
    u32[w + VQG_W_GPA_HI] = GPA_HI;
  }

  /** Publishes a new avail index, then wakes the device if it asked to be (event idx, or no NO_NOTIFY flag). */
  protected publishAvail(idx: number, old: number): void {
    Atomics.store(this.u16, (this.avail + 2) >>> 1, idx);
    this.f64[this.st + G_AVAIL_IDX] = idx;
    if (this.kick < 0) return;
    const want = this.eventIdx ? needEvent(Atomics.load(this.u16, (this.used + 4 + 8 * this.num) >>> 1), idx, old) : (Atomics.load(this.u16, this.used >>> 1) & VRING_USED_F_NO_NOTIFY) === 0;
    if (want) {
      Atomics.add(this.i32, this.kick >>> 2, 1);
      Atomics.notify(this.i32, this.kick >>> 2);
      this.f64[this.st + G_KICKS]++;
    }
  }
}

export class VirtioRxQueue extends GuestQueue implements RxQueue {
  /** The posted mbufs, and the packets they become (shared with the packed ring). */
  private readonly rx: RxPosted;
  /** Used index of the next element a mergeable packet takes (takeNext). */
  private cursor = 0;
  nextLen = 0;

  constructor(
    heap: Heap,
    readonly d: VirtioRxDesc,
  ) {
    super(heap, d);
    this.rx = new RxPosted(heap, d, { u16: this.u16, u32: this.u32, f64: this.f64, mb: this.mb, w: this.w, st: this.st, stats: this.stats }, this);
  }

  /** Control plane, before the ring is handed to the device: every head free, then posted. */
  init(): void {
    this.rx.freeAll();
    this.fill(1);
  }

  rxBurst(burst: Burst, n: number): number {
    const rx = this.rx;
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const st = this.st;
    const used = this.used;
    let lastUsed = f[st + G_LAST_USED]!;
    const ready = (Atomics.load(u16, (used + 2) >>> 1) - lastUsed) & 0xffff;
    if (ready > rx.heads) {
      f[st + G_BAD_USED]++; // the device claims more than was posted: wait for it to make sense
      return 0;
    }
    let got = 0;
    let bytes = 0;
    let i = 0;
    const mask = this.mask;
    if (rx.mrg) {
      // One-buffer packets in one call (virtioRx, which counts them), until the first that is not.
      u32[this.w + VQG_W_READY] = ready;
      got = i = this.ops.rx(this.s, this.lc, burst.heapOffset, n);
    }
    const counted = got;
    while (i < ready && got < n) {
      const e = (used + 4 + 8 * ((lastUsed + i) & mask)) >>> 2;
      const id = u32[e]!;
      const len = u32[e + 1]!;
      if (rx.mrg && id < rx.limit) {
        // The common case in one pass, as virtioRx: one buffer, one packet.
        const m = rx.sw[id]!;
        const hdr = u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(m << MBUF_HALF_SHIFT) + H_DATA_OFF]! - NET_HDR_SIZE;
        if (m !== 0 && len > NET_HDR_SIZE && len <= rx.cap && u16[(hdr + HDR_NUM_BUFFERS) >>> 1] === 1) {
          rx.sw[id] = 0;
          rx.free[f[st + G_NUM_FREE]!] = id;
          f[st + G_NUM_FREE]++;
          const dataLen = len - NET_HDR_SIZE;
          u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = dataLen;
          u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = dataLen;
          u16[(m << MBUF_HALF_SHIFT) + H_PORT] = rx.port;
          burst[got++] = m;
          bytes += dataLen;
          i++;
          continue;
        }
      }
      const m = rx.take(id);
      if (m === 0) {
        i++;
        continue;
      }
      if (rx.mrg) {
        const nb = len >= NET_HDR_SIZE ? u16[(this.mb.mtod(m) - NET_HDR_SIZE + HDR_NUM_BUFFERS) >>> 1]! : 0;
        if (nb > 1 && nb <= rx.heads && i + nb > ready) {
          rx.untake(id, m); // the rest of the packet is not used yet: next burst
          break;
        }
        this.cursor = lastUsed + i + 1;
        const pkt = rx.mergeable(m, len, nb);
        i += nb >= 1 && nb <= rx.heads && i + nb <= ready ? nb : 1; // a wild num_buffers: only this entry is known
        if (pkt === 0) continue;
        burst[got++] = pkt;
        bytes += u32[(pkt << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      } else {
        i++;
        const pkt = rx.chained(id, m, len);
        if (pkt === 0) continue;
        burst[got++] = pkt;
        bytes += u32[(pkt << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      }
    }
    lastUsed = (lastUsed + i) & 0xffff;
    f[st + G_LAST_USED] = lastUsed;
    if (f[st + G_NUM_FREE]! >= rx.rxFreeThresh) this.fill(rx.rxFreeThresh);
    if (got > counted) {
      f[this.stats + RXQ_PACKETS] += got - counted;
      f[this.stats + RXQ_BYTES] += bytes;
    }
    if (this.d.pktStats && got > 0) this.countPkts(burst, got, this.d.pktStats);
    return got;
  }

  /** The used element at the cursor, taken (UsedCursor: RxPosted's mergeable packets). */
  takeNext(): number {
    const e = (this.used + 4 + 8 * (this.cursor++ & this.mask)) >>> 2;
    this.nextLen = this.u32[e + 1]!;
    return this.rx.take(this.u32[e]!);
  }

  /** Posts fresh mbufs on every free head, in one allocBulk, once at least `min` heads are free. */
  private fill(min: number): void {
    const f = this.f64;
    const st = this.st;
    const k = this.rx.k;
    let nfree = f[st + G_NUM_FREE]!;
    if (nfree < min || nfree === 0) return;
    if (this.rx.pool.allocBulk(this.rx.refill, nfree * k) === 0) {
      f[this.stats + RXQ_NOMBUF] += nfree * k;
      return;
    }
    const table = this.desc;
    const availRing = (this.avail + 4) >>> 1;
    const old = f[st + G_AVAIL_IDX]!;
    let idx = old;
    let r = 0;
    const u32 = this.u32;
    const headroom = this.rx.pool.headroom - NET_HDR_SIZE; // fresh mbufs: data at the headroom, header just before
    const cap = this.rx.cap;
    if (k === 1) {
      idx = this.ops.rxFill(this.s, this.lc, this.rx.refill.heapOffset, nfree);
      nfree = 0;
    }
    // Bottom first, as virtioRxFill: the heads in the order the device used them.
    for (let j = 0; j < nfree; j++) {
      const head = this.rx.free[j]!;
      for (let s = 0; s < k; s++) {
        const m = this.rx.refill[r++]!;
        this.rx.sw[head + s] = m;
        const flags = VRING_DESC_F_WRITE | (s < k - 1 ? VRING_DESC_F_NEXT : 0);
        writeDesc(u32, table, head + s, u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + headroom, cap, flags, head + s + 1);
      }
      const slot = availRing + (idx & this.mask);
      if (this.u16[slot] !== head) this.u16[slot] = head;
      idx = (idx + 1) & 0xffff;
    }
    f[st + G_NUM_FREE] = 0;
    this.publishAvail(idx, old);
  }

  /** Returns every posted mbuf to its pool (the device has stopped). */
  releaseAll(): void {
    this.rx.releaseAll();
  }

  descriptor(): VirtioRxDesc {
    return this.d;
  }
}

export class VirtioTxQueue extends GuestQueue implements TxQueue {
  private readonly sw: Burst;
  private readonly nextFree: Uint16Array;
  private readonly ndesc: Uint16Array;
  private readonly stage: Burst;
  private readonly reclaim: TxReclaim;
  private readonly txFreeThresh: number;
  private readonly indirect: boolean;
  private readonly inOrder: boolean;
  private readonly hdrArea: number;
  private readonly indArea: number;

  constructor(
    heap: Heap,
    readonly d: VirtioTxDesc,
  ) {
    super(heap, d);
    const num = d.ring.num;
    this.sw = heap.burstAt(d.ring.sw, num);
    this.nextFree = new Uint16Array(heap.buffer, d.nextFree, num);
    this.ndesc = new Uint16Array(heap.buffer, d.ndesc, num);
    this.stage = heap.scratch('virtio tx reclaim', num);
    this.reclaim = new TxReclaim(heap, d.txFreeMode, false);
    this.txFreeThresh = d.txFreeThresh;
    this.indirect = d.indirect;
    this.inOrder = d.inOrder;
    this.hdrArea = d.hdrArea;
    this.indArea = d.indArea;
    const u32 = this.u32;
    u32[this.w + VQG_W_NEXT_FREE] = d.nextFree;
    u32[this.w + VQG_W_NDESC] = d.ndesc;
    u32[this.w + VQG_W_FLAGS] = d.inOrder ? VQG_F_IN_ORDER : 0;
  }

  /** Control plane: every descriptor on the free list. */
  init(): void {
    const num = this.num;
    // In order, the free list is the ring itself: the last descriptor leads back to the first.
    for (let i = 0; i < num; i++) this.nextFree[i] = this.inOrder ? (i + 1) & this.mask : i + 1;
    this.f64[this.st + G_FREE_HEAD] = 0;
    this.f64[this.st + G_NUM_FREE] = num;
    this.f64[this.st + G_OLDEST] = 0;
  }

  txBurst(burst: Burst, n: number): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const st = this.st;
    const mb = this.mb;
    if (f[st + G_NUM_FREE]! < this.txFreeThresh) this.cleanup();
    const availRing = (this.avail + 4) >>> 1;
    const old = f[st + G_AVAIL_IDX]!;
    let idx = old;
    let sent = 0;
    let bytes = 0;
    // One-segment packets with their header pushed, in one call (virtioTx, which counts them), until
    // the first that is not; each time the ring runs out, again after taking completions back.
    for (;;) {
      u32[this.w + VQG_W_IDX] = idx;
      const took = this.ops.tx(this.s, this.lc, burst.heapOffset + 4 * sent, n - sent);
      sent += took;
      idx = (idx + took) & 0xffff;
      if (sent === n || f[st + G_NUM_FREE]! > 0) break;
      this.cleanup();
      if (f[st + G_NUM_FREE] === 0) {
        n = sent; // the ring is full: the rest stays with the caller
        break;
      }
    }
    const counted = sent;
    for (; sent < n; sent++) {
      const m = burst[sent]!;
      const segs = u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS]!;
      const canPush = u16[(m << MBUF_HALF_SHIFT) + H_REFCNT] === 1 && mb.isDirect(m) && mb.headroom(m) >= NET_HDR_SIZE;
      const bufs = segs + (canPush ? 0 : 1);
      const ind = this.indirect && bufs > 1 && bufs <= IND_MAX;
      const need = ind ? 1 : bufs;
      if (f[st + G_NUM_FREE]! < need) {
        this.cleanup();
        if (f[st + G_NUM_FREE]! < need) break;
      }
      const head = f[st + G_FREE_HEAD]!;
      // Pop `need` descriptors: the free list's links become the chain's.
      let last = head;
      for (let i = 1; i < need; i++) last = this.nextFree[last]!;
      f[st + G_FREE_HEAD] = this.nextFree[last]!;
      f[st + G_NUM_FREE] -= need;
      this.writeChain(m, head, canPush, ind, bufs);
      this.sw[head] = m;
      this.ndesc[head] = need;
      if (u16[availRing + (idx & this.mask)] !== head) u16[availRing + (idx & this.mask)] = head; // as txFast: unchanged entries stay shared
      idx = (idx + 1) & 0xffff;
      bytes += u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    }
    if (sent > 0) {
      this.publishAvail(idx, old);
      f[this.stats + TXQ_PACKETS] += sent - counted;
      f[this.stats + TXQ_BYTES] += bytes;
    }
    // The sent mbufs are the ring's until a later reclaim: still readable here.
    if (this.d.pktStats && sent > 0) this.countPkts(burst, sent, this.d.pktStats);
    return sent;
  }

  /** The header (in the headroom, or the head's slot) then each segment, in the ring or in the head's indirect table. */
  private writeChain(m: number, head: number, canPush: boolean, ind: boolean, bufs: number): void {
    const heap = this.heap;
    const mb = this.mb;
    const u16 = this.u16;
    const u32 = this.u32;
    const view = heap.view;
    let table = this.desc;
    let slot = head;
    if (ind) {
      table = this.indArea + head * IND_MAX * DESC_SIZE;
      writeDesc(heap.u32, this.desc, head, table, bufs * DESC_SIZE, VRING_DESC_F_INDIRECT, 0);
      slot = 0;
    }
    let b = 0;
    if (!canPush) {
      const h = this.hdrArea + head * 16;
      u32[h >>> 2] = 0;
      u32[(h >>> 2) + 1] = 0;
      u32[(h >>> 2) + 2] = 0;
      const next = ind ? slot + 1 : this.nextFree[slot]!;
      writeDesc(heap.u32, table, slot, h, NET_HDR_SIZE, b + 1 < bufs ? VRING_DESC_F_NEXT : 0, next);
      slot = next;
      b++;
    }
    for (let s = m; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
      let addr = mb.mtod(s);
      let len = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
      if (canPush && s === m) {
        addr -= NET_HDR_SIZE;
        len += NET_HDR_SIZE;
        // Data may start at any offset: DataView at any alignment. Written only when not
        // already zero, as the txFast kernel: the host read this line last time round.
        if ((view.getUint32(addr, true) | view.getUint32(addr + 4, true) | view.getUint32(addr + 8, true)) !== 0) {
          view.setUint32(addr, 0, true);
          view.setUint32(addr + 4, 0, true);
          view.setUint32(addr + 8, 0, true);
        }
      }
      const next = ind ? slot + 1 : this.nextFree[slot]!;
      writeDesc(heap.u32, table, slot, addr, len, b + 1 < bufs ? VRING_DESC_F_NEXT : 0, next);
      slot = next;
      b++;
    }
  }

  /** Takes back completed chains: descriptors to the free list (virtioTxCleanup), mbufs freed in one batch (TxReclaim). */
  private cleanup(): void {
    const f = this.f64;
    const st = this.st;
    const ready = (Atomics.load(this.u16, (this.used + 2) >>> 1) - f[st + G_LAST_USED]!) & 0xffff;
    if (ready === 0) return;
    if (ready > this.num) {
      f[st + G_BAD_USED]++;
      return;
    }
    this.reclaim.packets(this.stage, 0, this.ops.txCleanup(this.s, this.lc, this.stage.heapOffset, ready));
  }

  /** Frees every packet still on the ring (the device has stopped). */
  releaseAll(): void {
    for (let i = 0; i < this.num; i++) {
      if (this.sw[i] !== 0) this.mb.free(this.sw[i]!);
      this.sw[i] = 0;
    }
  }

  descriptor(): VirtioTxDesc {
    return this.d;
  }
}
