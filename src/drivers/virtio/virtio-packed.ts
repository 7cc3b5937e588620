/**
 * virtio-net's data path on the guest side over a packed ring
 * (VIRTIO_F_RING_PACKED, virtio 1.1 2.8; DPDK's virtio_rxtx.c *_packed):
 * one ring of descriptors that the driver makes available at its position
 * (flags written last, AVAIL equal to its wrap counter, USED the opposite) and
 * the device overwrites with used elements (buffer id, length; AVAIL and USED
 * both its wrap counter), each side going round with its own counter.
 *
 * Ring positions and buffer ids are apart: positions are used in ring order
 * (a used element skips the chain's length), ids come from the split queue's
 * structures, the rx free stack (a head per posted buffer) and the tx free
 * list (one id per chain; with IN_ORDER the list is the ring itself, so ids
 * go out and come back in order, and one used element may stand for a batch,
 * as DPDK's vhost writes it). A tx chain is consecutive descriptors, the
 * header in its own when it cannot be pushed; with INDIRECT_DESC, a chain of
 * up to IND_MAX buffers is one ring descriptor naming its id's table of packed
 * descriptors instead (2.8.19), as DPDK's packed xmit does, so a ring of
 * chained packets holds as many packets as a ring of one-segment ones.
 *
 * Notifications as DPDK's virtio PMD for a polling driver: the driver event
 * area says DISABLE (no calls wanted, written by the driver when the ring is
 * handed over), and a kick goes only when the device event area does not say
 * DISABLE (virtqueue_kick_prepare_packed); dpkit's and DPDK's vhost poll and
 * say it.
 *
 * A backend that goes away takes the rings' mbufs back to their pools, as
 * DPDK resets a packed ring on reconnect: the lcore polling a queue empties
 * it at its next burst, following the port's link state word (followLink),
 * and sets it up afresh when a new backend has it (virtio-user.ts waits for
 * the first before handing the rings over).
 *
 * The common case of each (one-buffer rx, the refill, one-segment tx, the tx
 * completions) is one call per burst to virtio-packed.as.ts's kernels or
 * their twins (virtio-packed.twin.ts); this file does the rest. A used
 * element naming an id the driver did not post is counted (G_BAD_USED) and
 * skipped, never followed.
 */
import type { Heap, Burst } from '../../eal/heap.js';
import type { RxQueue, TxQueue } from '../../ethdev/driver.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats.js';
import { TxReclaim } from '../../ethdev/tx-reclaim.js';
import { H_DATA_LEN, H_NB_SEGS, H_REFCNT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_NEXT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { PACKED_EVENT_FLAGS, PDESC_SIZE, RING_EVENT_FLAGS_DISABLE } from '../../virtio/packed.js';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE } from '../../virtio/virtio-net.js';
import { VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE } from '../../virtio/vring.js';
import {
  GPA_HI,
  G_AVAIL_IDX,
  G_AVAIL_WRAP,
  G_FREE_HEAD,
  G_KICKS,
  G_LAST_USED,
  G_NUM_FREE,
  G_OLDEST,
  G_USED_WRAP,
  VQG_F_IN_ORDER,
  VQG_W_FLAGS,
  VQG_W_LINK_STATE,
  VQG_W_NDESC,
  VQG_W_NEXT_FREE,
} from './guest-ring.js';
import { GuestQueue, IND_MAX, type VirtioRxDesc, type VirtioTxDesc } from './virtio-rxtx.js';
import { RxPosted } from './rx-posted.js';
import { availBits, isUsed, virtioPackedOps, type VirtioPackedOps } from './virtio-packed.twin.js';

/**
 * What both packed queues add to GuestQueue: the ring walk (positions with
 * their wrap counters in the queue's block) and the kick. The ring's `avail`
 * and `used` are the driver and device event areas.
 */
abstract class PackedQueue extends GuestQueue {
  protected readonly pops: VirtioPackedOps;
  /** i32 index of the port's link state word, and the value this queue last followed (its block's linkState). */
  private readonly linkWord: number;
  private seen: number;

  constructor(heap: Heap, d: VirtioRxDesc | VirtioTxDesc) {
    super(heap, d);
    this.pops = virtioPackedOps(heap);
    this.linkWord = d.linkState >>> 2;
    this.seen = Atomics.load(this.u32, this.w + VQG_W_LINK_STATE);
  }

  /**
   * Follows the port's link state, at the top of every burst (DPDK's virtio
   * bursts check hw->started): the lcore polling a queue owns its ring, so it
   * is the one that empties it when the backend went away and sets it up
   * afresh when a new one has it, as DPDK resets a packed ring on reconnect.
   * The control thread calls it only for a port no lcore polls (stopped).
   * @returns whether the ring may be used.
   */
  followLink(): boolean {
    const state = Atomics.load(this.i32, this.linkWord);
    if (state === this.seen) return (state & 1) === 0;
    if ((state & 1) !== 0) {
      this.releaseAll();
      // No descriptor may look available to the next backend before the ring is set up again.
      for (let p = 0; p < this.num; p++) this.u16[(this.desc + p * PDESC_SIZE + 14) >>> 1] = 0;
    } else this.init();
    this.seen = state;
    Atomics.store(this.u32, this.w + VQG_W_LINK_STATE, state); // the control thread waits for this
    return (state & 1) === 0;
  }

  /** The link state this queue last followed (the control thread waits for an odd one before a new backend gets the rings). */
  linkFollowed(): number {
    return Atomics.load(this.u32, this.w + VQG_W_LINK_STATE);
  }

  /** Control plane: the ring set up afresh (positions, ids, and for rx the buffers posted). */
  abstract init(): void;

  /** Returns every mbuf on the ring to its pool. */
  abstract releaseAll(): void;

  /** Control plane: both wrap counters start at 1, both positions at 0 (virtio 1.1 2.8.1). */
  protected resetRing(): void {
    const f = this.f64;
    f[this.st + G_AVAIL_IDX] = 0;
    f[this.st + G_AVAIL_WRAP] = 1;
    f[this.st + G_LAST_USED] = 0;
    f[this.st + G_USED_WRAP] = 1;
  }

  /** Flags of the descriptor at `pos`, read first (acquire: the device writes them last). */
  protected flagsAt(pos: number): number {
    return Atomics.load(this.u16, (this.desc + pos * PDESC_SIZE + 14) >>> 1);
  }

  /** Moves lastUsed on by `c` positions, turning the wrap counter at the ring's end. */
  protected advanceUsed(c: number): void {
    const f = this.f64;
    let pos = f[this.st + G_LAST_USED]! + c;
    if (pos >= this.num) {
      pos -= this.num;
      f[this.st + G_USED_WRAP] = f[this.st + G_USED_WRAP]! ^ 1;
    }
    f[this.st + G_LAST_USED] = pos;
  }

  /**
   * Writes the descriptor at availIdx and moves availIdx on. The flags of a
   * chain's first descriptor are written last (by the caller, `head`): they
   * make the whole chain available at once. @returns the flags to write for
   * it when `head`, else 0 (written here).
   */
  protected putDesc(addr: number, len: number, id: number, flags: number, head: boolean): number {
    const f = this.f64;
    const pos = f[this.st + G_AVAIL_IDX]!;
    const d = this.desc + pos * PDESC_SIZE;
    const u32 = this.u32;
    u32[d >>> 2] = addr; // GPA_BASE's low word is 0 and heap offsets are below 4 GiB
    u32[(d >>> 2) + 1] = GPA_HI;
    u32[(d >>> 2) + 2] = len;
    this.u16[(d >>> 1) + 6] = id;
    const all = flags | availBits(f[this.st + G_AVAIL_WRAP]!);
    if (!head) Atomics.store(this.u16, (d >>> 1) + 7, all);
    if (pos + 1 === this.num) {
      f[this.st + G_AVAIL_IDX] = 0;
      f[this.st + G_AVAIL_WRAP] = f[this.st + G_AVAIL_WRAP]! ^ 1;
    } else f[this.st + G_AVAIL_IDX] = pos + 1;
    return head ? all : 0;
  }

  /** Makes the chain whose first descriptor is at `pos` available: its flags, written last. */
  protected publishHead(pos: number, flags: number): void {
    Atomics.store(this.u16, (this.desc + pos * PDESC_SIZE + 14) >>> 1, flags);
  }

  /** Wakes the device unless its event area says DISABLE (DPDK's virtqueue_kick_prepare_packed). */
  protected kickIfWanted(): void {
    if (this.kick < 0) return;
    if (Atomics.load(this.u16, (this.used + PACKED_EVENT_FLAGS) >>> 1) === RING_EVENT_FLAGS_DISABLE) return;
    Atomics.add(this.i32, this.kick >>> 2, 1);
    Atomics.notify(this.i32, this.kick >>> 2);
    this.f64[this.st + G_KICKS]++;
  }
}

export class PackedRxQueue extends PackedQueue implements RxQueue {
  /** The posted mbufs, and the packets they become (shared with the split ring). */
  private readonly rx: RxPosted;
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
    this.resetRing();
    this.rx.freeAll();
    this.fill(1);
  }

  rxBurst(burst: Burst, n: number): number {
    if (!this.followLink()) return 0;
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const st = this.st;
    let got = 0;
    // One-buffer packets in one call (virtioPackedRx, which counts them), until the first that is not.
    if (this.rx.mrg) got = this.pops.rx(this.s, this.lc, burst.heapOffset, n);
    const counted = got;
    let bytes = 0;
    while (got < n) {
      const pos = f[st + G_LAST_USED]!;
      if (!isUsed(this.flagsAt(pos), f[st + G_USED_WRAP]!)) break;
      const d = this.desc + pos * PDESC_SIZE;
      const id = u16[(d + 12) >>> 1]!;
      const len = u32[(d + 8) >>> 2]!;
      const m = this.rx.take(id);
      if (m === 0) {
        this.advanceUsed(this.rx.k);
        continue;
      }
      let pkt: number;
      if (this.rx.mrg) {
        const nb = len >= NET_HDR_SIZE ? u16[(this.mb.mtod(m) - NET_HDR_SIZE + HDR_NUM_BUFFERS) >>> 1]! : 0;
        if (nb > 1 && nb <= this.rx.heads && !this.usedAhead(nb)) {
          this.rx.untake(id, m); // the rest of the packet is not used yet: next burst
          break;
        }
        this.advanceUsed(1);
        pkt = this.rx.mergeable(m, len, nb);
      } else {
        this.advanceUsed(this.rx.k);
        pkt = this.rx.chained(id, m, len);
      }
      if (pkt === 0) continue;
      burst[got++] = pkt;
      bytes += u32[(pkt << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    }
    if (f[st + G_NUM_FREE]! >= this.rx.rxFreeThresh) this.fill(this.rx.rxFreeThresh);
    if (got > counted) {
      f[this.stats + RXQ_PACKETS] += got - counted;
      f[this.stats + RXQ_BYTES] += bytes;
    }
    if (this.d.pktStats && got > 0) this.countPkts(burst, got, this.d.pktStats);
    return got;
  }

  /** Whether the `nb` positions from lastUsed all hold used elements (a mergeable packet's buffers). */
  private usedAhead(nb: number): boolean {
    let pos = this.f64[this.st + G_LAST_USED]!;
    let w = this.f64[this.st + G_USED_WRAP]!;
    for (let b = 1; b < nb; b++) {
      if (++pos === this.num) {
        pos = 0;
        w ^= 1;
      }
      if (!isUsed(this.flagsAt(pos), w)) return false;
    }
    return true;
  }

  /** The used element at lastUsed taken, and lastUsed moved past it (UsedCursor). @returns its mbuf (0: a bad id); its length is in nextLen. */
  takeNext(): number {
    const d = this.desc + this.f64[this.st + G_LAST_USED]! * PDESC_SIZE;
    this.nextLen = this.u32[(d + 8) >>> 2]!;
    const m = this.rx.take(this.u16[(d + 12) >>> 1]!);
    this.advanceUsed(1);
    return m;
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
    if (k === 1) this.pops.rxFill(this.s, this.lc, this.rx.refill.heapOffset, nfree);
    else {
      const u32 = this.u32;
      const headroom = this.rx.pool.headroom - NET_HDR_SIZE; // fresh mbufs: data at the headroom, header just before
      let r = 0;
      while (nfree > 0) {
        const head = this.rx.free[--nfree]!;
        const at = f[st + G_AVAIL_IDX]!;
        let headFlags = 0;
        for (let s = 0; s < k; s++) {
          const m = this.rx.refill[r++]!;
          this.rx.sw[head + s] = m;
          const flags = VRING_DESC_F_WRITE | (s < k - 1 ? VRING_DESC_F_NEXT : 0);
          const hf = this.putDesc(u32[(m << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + headroom, this.rx.cap, head, flags, s === 0);
          if (s === 0) headFlags = hf;
        }
        this.publishHead(at, headFlags);
      }
      f[st + G_NUM_FREE] = 0;
    }
    this.kickIfWanted();
  }

  /** Returns every posted mbuf to its pool (the device has stopped). */
  releaseAll(): void {
    this.rx.releaseAll();
  }

  descriptor(): VirtioRxDesc {
    return this.d;
  }
}

export class PackedTxQueue extends PackedQueue implements TxQueue {
  private readonly sw: Burst;
  private readonly nextFree: Uint16Array;
  private readonly ndesc: Uint16Array;
  private readonly stage: Burst;
  private readonly reclaim: TxReclaim;
  private readonly txFreeThresh: number;
  private readonly inOrder: boolean;
  private readonly hdrArea: number;
  /** INDIRECT_DESC negotiated: a chain of 2..IND_MAX buffers goes out as one descriptor naming its id's table. */
  private readonly indirect: boolean;
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
    this.inOrder = d.inOrder;
    this.hdrArea = d.hdrArea;
    this.indirect = d.indirect;
    this.indArea = d.indArea;
    const u32 = this.u32;
    u32[this.w + VQG_W_NEXT_FREE] = d.nextFree;
    u32[this.w + VQG_W_NDESC] = d.ndesc;
    u32[this.w + VQG_W_FLAGS] = d.inOrder ? VQG_F_IN_ORDER : 0;
  }

  /** Control plane: every buffer id on the free list, every descriptor free. */
  init(): void {
    this.resetRing();
    const num = this.num;
    // In order, the id list is the ring itself: ids go out and come back in order.
    for (let i = 0; i < num; i++) this.nextFree[i] = this.inOrder ? (i + 1) & this.mask : i + 1;
    this.f64[this.st + G_FREE_HEAD] = 0;
    this.f64[this.st + G_NUM_FREE] = num;
    this.f64[this.st + G_OLDEST] = 0;
  }

  txBurst(burst: Burst, n: number): number {
    if (!this.followLink()) return 0;
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const st = this.st;
    const mb = this.mb;
    if (f[st + G_NUM_FREE]! < this.txFreeThresh) this.cleanup();
    let sent = 0;
    // One-segment packets with their header pushed, in one call (virtioPackedTx, which counts them), until
    // the first that is not; each time the ring runs out, again after taking completions back.
    for (;;) {
      sent += this.pops.tx(this.s, this.lc, burst.heapOffset + 4 * sent, n - sent);
      if (sent === n || f[st + G_NUM_FREE]! > 0) break;
      this.cleanup();
      if (f[st + G_NUM_FREE] === 0) {
        n = sent; // the ring is full: the rest stays with the caller
        break;
      }
    }
    const counted = sent;
    let bytes = 0;
    for (; sent < n; sent++) {
      const m = burst[sent]!;
      const segs = u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS]!;
      const canPush = u16[(m << MBUF_HALF_SHIFT) + H_REFCNT] === 1 && mb.isDirect(m) && mb.headroom(m) >= NET_HDR_SIZE;
      const bufs = segs + (canPush ? 0 : 1);
      // As DPDK's packed xmit: a chain that fits a table takes one ring descriptor, leaving room for more packets.
      const ind = this.indirect && bufs > 1 && bufs <= IND_MAX;
      const need = ind ? 1 : bufs;
      if (f[st + G_NUM_FREE]! < need) {
        this.cleanup();
        if (f[st + G_NUM_FREE]! < need) break;
      }
      // One id per chain (ids free >= descriptors free, so there is one).
      const id = f[st + G_FREE_HEAD]!;
      f[st + G_FREE_HEAD] = this.nextFree[id]!;
      f[st + G_NUM_FREE] -= need;
      if (ind) this.writeTable(m, id, canPush, bufs);
      else this.writeChain(m, id, canPush, bufs);
      this.sw[id] = m;
      this.ndesc[id] = need;
      bytes += u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    }
    if (sent > 0) {
      this.kickIfWanted();
      f[this.stats + TXQ_PACKETS] += sent - counted;
      f[this.stats + TXQ_BYTES] += bytes;
    }
    // The sent mbufs are the ring's until a later reclaim: still readable here.
    if (this.d.pktStats && sent > 0) this.countPkts(burst, sent, this.d.pktStats);
    return sent;
  }

  /** The header (in the headroom, or the id's slot) then each segment, consecutive descriptors, the first one's flags last. */
  /**
   * The header (in the headroom, or the id's slot) then each segment as entries of the id's
   * indirect table (2.8.19: whole packed descriptors, WRITE the only flag, read-only here), and
   * one ring descriptor naming it.
   */
  private writeTable(m: number, id: number, canPush: boolean, bufs: number): void {
    const u16 = this.u16;
    const u32 = this.u32;
    const table = this.indArea + id * IND_MAX * PDESC_SIZE;
    let e = table >>> 2;
    if (!canPush) {
      const h = this.hdrArea + id * 16;
      u32[h >>> 2] = 0;
      u32[(h >>> 2) + 1] = 0;
      u32[(h >>> 2) + 2] = 0;
      u32[e] = h;
      u32[e + 1] = GPA_HI;
      u32[e + 2] = NET_HDR_SIZE;
      u32[e + 3] = 0; // id and flags
      e += PDESC_SIZE >>> 2;
    }
    for (let s = m; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
      const push = canPush && s === m;
      u32[e] = push ? this.pushHeader(s) : this.mb.mtod(s);
      u32[e + 1] = GPA_HI;
      u32[e + 2] = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]! + (push ? NET_HDR_SIZE : 0);
      u32[e + 3] = 0;
      e += PDESC_SIZE >>> 2;
    }
    const at = this.f64[this.st + G_AVAIL_IDX]!;
    this.publishHead(at, this.putDesc(table, bufs * PDESC_SIZE, id, VRING_DESC_F_INDIRECT, true));
  }

  /** Zeroes the virtio-net header in `s`'s headroom. @returns its address. */
  private pushHeader(s: number): number {
    const view = this.heap.view;
    const addr = this.mb.mtod(s) - NET_HDR_SIZE;
    // Data may start at any offset: DataView at any alignment. Written only when not already zero, as the kernel.
    if ((view.getUint32(addr, true) | view.getUint32(addr + 4, true) | view.getUint32(addr + 8, true)) !== 0) {
      view.setUint32(addr, 0, true);
      view.setUint32(addr + 4, 0, true);
      view.setUint32(addr + 8, 0, true);
    }
    return addr;
  }

  private writeChain(m: number, id: number, canPush: boolean, bufs: number): void {
    const mb = this.mb;
    const u16 = this.u16;
    const u32 = this.u32;
    const at = this.f64[this.st + G_AVAIL_IDX]!;
    let headFlags = 0;
    let b = 0;
    if (!canPush) {
      const h = this.hdrArea + id * 16;
      u32[h >>> 2] = 0;
      u32[(h >>> 2) + 1] = 0;
      u32[(h >>> 2) + 2] = 0;
      headFlags = this.putDesc(h, NET_HDR_SIZE, id, b + 1 < bufs ? VRING_DESC_F_NEXT : 0, true);
      b++;
    }
    for (let s = m; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
      const push = canPush && s === m;
      const addr = push ? this.pushHeader(s) : mb.mtod(s);
      const len = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]! + (push ? NET_HDR_SIZE : 0);
      const hf = this.putDesc(addr, len, id, b + 1 < bufs ? VRING_DESC_F_NEXT : 0, b === 0);
      if (b === 0) headFlags = hf;
      b++;
    }
    this.publishHead(at, headFlags);
  }

  /** Takes back completed chains (virtioPackedTxCleanup), mbufs freed in one batch (TxReclaim). */
  private cleanup(): void {
    this.reclaim.packets(this.stage, 0, this.pops.txCleanup(this.s, this.lc, this.stage.heapOffset, this.num));
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
