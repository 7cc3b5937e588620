/**
 * The vhost data path (rte_vhost_enqueue_burst / rte_vhost_dequeue_burst)
 * over one split vring, opened by the lcore that polls it.
 *
 * enqueue (host -> guest rx ring): each packet, chains included, is copied
 * behind a virtio-net header into the guest's buffers, across several avail
 * entries when MRG_RXBUF is negotiated; dequeue (guest tx ring -> host):
 * each guest chain, indirect tables included, is copied into host mbufs and
 * its header stripped. Per burst, not per packet: the avail index is read
 * once (the avail ring's index shares a cache line the guest keeps writing;
 * the vhost enqueue-by-size study measured reading it per packet), the
 * copies run in one wasm call, and the used index is published once, after
 * the bytes.
 *
 * The guest is not trusted. Every chain is walked by Vring.walk (addresses
 * inside the memory table, loops bounded, indirect tables checked); a bad
 * chain is returned to the guest with length 0 and counted, a packet that
 * does not fit a guest's (non-mergeable) buffer is dropped and counted, and
 * an avail index more than a ring ahead stops the queue until the guest
 * fixes it. Nothing a guest writes can make the host throw, loop or touch
 * memory outside the guest's regions.
 *
 * A packed ring (VIRTIO_F_RING_PACKED) takes the same two paths: its own
 * kernels for one-descriptor packets (vhost-packed.as.ts), and for the rest
 * PackedRing.walk with the same checks and the same scatter and gather. A
 * used element's flags hand it to the driver, so they are written after its
 * bytes: the kernels write them after their copies, the general path at
 * publish, after the copy list is flushed.
 */
import type { Burst, Heap } from '../eal/heap.js';
import { Mbufs } from '../mem/mbuf.js';
import { H_DATA_LEN, H_NB_SEGS, H_PORT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_NEXT, W_PKT_LEN } from '../mem/mbuf-layout.js';
import type { Mempool } from '../mem/mempool.js';
import { GuestMemory } from '../virtio/guest-memory.js';
import { Chain, Vring } from '../virtio/vring.js';
import { PackedRing, RING_EVENT_FLAGS_DISABLE, descIsAvail, encodeBase, usedFlags, PACKED_EVENT_FLAGS } from '../virtio/packed.js';
import { HDR_NUM_BUFFERS, NET_HDR_SIZE, VRING_AVAIL_F_NO_INTERRUPT, needEvent } from '../virtio/virtio-net.js';
import { CopyList } from './copy-list.js';
import { vhostLog } from './log.js';
import { VQ_W_WRAP, VQ_F_AVAIL_PER_PACKET, VQ_W_ADDRS, VQ_W_AVAIL, VQ_W_AVAIL_RING, VQ_W_DESC, VQ_W_FLAGS, VQ_W_LAST_AVAIL, VQ_W_MASK, VQ_W_NUM, VQ_W_PORT, VQ_W_SEG_ROOM, VQ_W_TABLE, VQ_W_USED, VQ_W_USED_IDX } from './vhost-queue-layout.js';
import { vhostOps, type VhostOps } from './vhost-queue.twin.js';
import * as S from './vring-state.js';

/** Buffers one chain (or one packet's mergeable buffers) may use: DPDK's BUF_VECTOR_MAX. */
export const BUF_VECTOR_MAX = 256;
/** Largest packet taken from a guest: a 64 KiB TSO frame (dpkit negotiates no GSO, so 9 KiB jumbo in practice). */
export const MAX_PKT_LEN = 65535;

const ADDRS_KEY = 'vhost packet addresses';
/** The call counter's heap offset as an integer field value; NO_NOTIFIER (-1) when the guest polls. */
const callOffset = (v: number): number => (v < 0 ? -1 : v >>> 0);
/** WebAssembly.RuntimeError, what a trapping kernel throws (Node's types leave it out). */
const WasmTrap = (WebAssembly as unknown as { RuntimeError: ErrorConstructor }).RuntimeError;

/** What a lcore needs to open a vring's data path. */
export interface VhostQueueDesc {
  /** Heap byte offset of the device's guest memory table. */
  memTable: number;
  /** f64 slot of this vring's state block (vring-state.record.ts). */
  state: number;
  /** Heap byte offset of this vring's data-path block (vhost-queue.record.ts), which the fast kernels read. */
  q: number;
  /** Port id stamped into received mbufs. */
  port: number;
  /** f64 slot that counts failed mbuf allocations: the vring's own, or a port's rx_nombuf. */
  nombuf: number;
  /** f64 slot of the state block of the device's first vring, whose readiness is the link: a trap on any ring clears it. */
  link: number;
}

export class VhostQueue {
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  private readonly ops: VhostOps;
  private readonly f64: Float64Array;
  private readonly mem: GuestMemory;
  private readonly mb: Mbufs;
  private readonly copies: CopyList;
  private readonly chain = new Chain(BUF_VECTOR_MAX);
  /** Mergeable rx: the buffers gathered for one packet, and the avail entry each belongs to. */
  private readonly gOff = new Uint32Array(BUF_VECTOR_MAX);
  private readonly gLen = new Uint32Array(BUF_VECTOR_MAX);
  private readonly gHead = new Uint16Array(BUF_VECTOR_MAX);
  /** Avail entries taken for one packet: head id, bytes written (-1: a bad chain). */
  private readonly heads = new Uint16Array(BUF_VECTOR_MAX);
  private readonly written = new Int32Array(BUF_VECTOR_MAX);
  private readonly extra: Burst;
  /** The fast kernels' note of where each packet's bytes go or come from, between their two passes. */
  private addrs: Burst;
  private readonly st: number;
  /** The data-path block's byte offset, and as a u32 index. */
  private readonly q: number;
  private readonly qw: number;
  private readonly lc: number;
  private readonly memTable: number;
  private readonly port: number;
  private readonly nombuf: number;

  private gen = -1;
  /** The avail_event last written (EVENT_IDX): one behind what we took, so the guest does not kick a polling host. */
  private availEvent = 0;
  private ring: Vring | null = null;
  private num = 0;
  private mask = 0;
  private flags = 0;
  private lastAvail = 0;
  private lastUsed = 0;
  private call = -1;
  /** A packed ring (else `ring` is the split one), its avail and used positions and their wrap counters. */
  private packed: PackedRing | null = null;
  private wa = 0;
  private wu = 0;
  /** Packed general path: used elements written but not yet handed back (position, flags), until publish. */
  private readonly pendPos = new Uint16Array(2 * BUF_VECTOR_MAX + 64);
  private readonly pendFlags = new Uint16Array(2 * BUF_VECTOR_MAX + 64);
  private nPend = 0;
  /** Packed: each chain taken for one packet, its descriptors on the ring. */
  private readonly descs = new Uint16Array(BUF_VECTOR_MAX);

  constructor(
    readonly heap: Heap,
    readonly d: VhostQueueDesc,
  ) {
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.f64 = heap.f64;
    this.mem = new GuestMemory(heap, d.memTable);
    this.mb = new Mbufs(heap);
    this.ops = vhostOps(heap, this.mb);
    this.copies = new CopyList(heap);
    this.extra = heap.scratch('vhost extra segments', BUF_VECTOR_MAX);
    this.addrs = heap.scratch(ADDRS_KEY, 64);
    this.st = d.state;
    this.q = d.q;
    this.qw = d.q >>> 2;
    this.lc = heap.lcore;
    this.memTable = d.memTable;
    this.nombuf = d.nombuf;
    this.port = d.port;
  }

  /** Follows the control plane: re-reads the ring when its generation moved. @returns whether the ring is usable. */
  private sync(): boolean {
    const f = this.f64;
    // Every value taken from the f64 state record is made an integer before it
    // is stored in a field: a field V8 once sees a double in stays a boxed
    // double, a box load per use in optimised code and a fresh allocation per
    // read in code not yet optimised (the rarely called suppressKicks made the
    // vhost bench's garbage).
    const gen = f[this.st + S.S_GEN]! | 0;
    if (gen !== this.gen) {
      this.gen = gen;
      this.ring = null;
      this.packed = null;
      if (f[this.st + S.S_READY] === 1 && (f[this.st + S.S_FLAGS]! & S.F_PACKED) !== 0) this.openPacked();
      else if (f[this.st + S.S_READY] === 1) {
        const r = Vring.open(this.mem, f[this.st + S.S_NUM]!, f[this.st + S.S_DESC]!, f[this.st + S.S_AVAIL]!, f[this.st + S.S_USED]!);
        if (typeof r !== 'string') {
          this.ring = r;
          this.num = r.num;
          this.mask = r.num - 1;
          this.flags = f[this.st + S.S_FLAGS]! | 0;
          this.lastAvail = f[this.st + S.S_LAST_AVAIL]! & 0xffff;
          this.lastUsed = f[this.st + S.S_LAST_USED]! & 0xffff;
          this.call = callOffset(f[this.st + S.S_CALL]!);
          this.writeBlock(r);
          this.suppressKicks();
        }
      }
    }
    return this.ring !== null || this.packed !== null;
  }

  private openPacked(): void {
    const f = this.f64;
    const r = PackedRing.open(this.mem, f[this.st + S.S_NUM]!, f[this.st + S.S_DESC]!, f[this.st + S.S_AVAIL]!, f[this.st + S.S_USED]!);
    if (typeof r === 'string') return;
    this.packed = r;
    this.num = r.num;
    this.mask = r.num - 1;
    this.flags = f[this.st + S.S_FLAGS]! | 0;
    const a = f[this.st + S.S_LAST_AVAIL]! & 0xffff;
    const u = f[this.st + S.S_LAST_USED]! & 0xffff;
    this.lastAvail = (a & 0x7fff) % r.num;
    this.wa = a >>> 15;
    this.lastUsed = (u & 0x7fff) % r.num;
    this.wu = u >>> 15;
    this.call = callOffset(f[this.st + S.S_CALL]!);
    const u32 = this.u32;
    const w = this.qw;
    u32[w + VQ_W_DESC] = r.desc;
    u32[w + VQ_W_NUM] = r.num;
    u32[w + VQ_W_MASK] = r.num - 1;
    u32[w + VQ_W_TABLE] = this.memTable;
    u32[w + VQ_W_PORT] = this.port;
    u32[w + VQ_W_FLAGS] = 0;
  }

  /** The ring's part of the data-path block, for the fast kernels (what the call's part leaves out). */
  private writeBlock(r: Vring): void {
    const u32 = this.u32;
    const w = this.qw;
    u32[w + VQ_W_DESC] = r.desc;
    u32[w + VQ_W_AVAIL_RING] = r.avail + 4;
    u32[w + VQ_W_USED] = r.used;
    u32[w + VQ_W_MASK] = r.num - 1;
    u32[w + VQ_W_NUM] = r.num;
    u32[w + VQ_W_TABLE] = this.memTable;
    u32[w + VQ_W_PORT] = this.port;
    u32[w + VQ_W_FLAGS] = (this.flags & S.F_AVAIL_PER_PACKET) !== 0 ? VQ_F_AVAIL_PER_PACKET : 0;
  }

  /** Entries the guest has made available beyond ours, or -1 when its index is more than a ring ahead. */
  private availCount(): number {
    const ring = this.ring!;
    this.f64[this.st + S.S_AVAIL_READS]++;
    const count = (Atomics.load(this.u16, (ring.avail + 2) >>> 1) - this.lastAvail) & 0xffff;
    return count > this.num ? -1 : count;
  }

  /**
   * Copies `mbufs[0..n)` into the guest's rx ring (rte_vhost_enqueue_burst).
   * @returns how many were taken (delivered, or dropped and counted because
   * they fit no guest buffer); the caller still owns and frees them all.
   */
  enqueueBurst(mbufs: Burst, n: number): number {
    if (n === 0 || !this.sync()) return 0;
    if (this.packed !== null) return this.enqueuePacked(this.packed, mbufs, n);
    const ring = this.ring!;
    const u16 = this.u16;
    const u32 = this.u32;
    const f = this.f64;
    const perPacket = (this.flags & S.F_AVAIL_PER_PACKET) !== 0;
    const mrg = (this.flags & S.F_MRG_RXBUF) !== 0;
    let avail = this.availCount();
    if (avail < 0) {
      f[this.st + S.S_BAD_CHAINS]++;
      return 0;
    }
    const availRing = (ring.avail + 4) >>> 1;
    const oldUsed = this.lastUsed;
    let lastAvail = this.lastAvail;
    let usedIdx = oldUsed;
    let spent = 0; // avail entries taken by the packets before this one
    let sent = 0;
    const qw = this.qw;
    for (; sent < n; sent++) {
      // The common case for as many packets as take it, in one call (vhostEnqueue).
      if (this.addrs.length < n - sent) this.addrs = this.heap.scratch(ADDRS_KEY, n - sent);
      u32[qw + VQ_W_LAST_AVAIL] = lastAvail;
      u32[qw + VQ_W_USED_IDX] = usedIdx;
      u32[qw + VQ_W_AVAIL] = avail - spent;
      u32[qw + VQ_W_ADDRS] = this.addrs.heapOffset;
      let done: number;
      try {
        done = this.ops.enqueue(this.q, this.lc, mbufs.heapOffset + sent * 4, n - sent);
      } catch (e) {
        this.trapped(e);
        return 0;
      }
      if (done > 0) {
        if (perPacket) f[this.st + S.S_AVAIL_READS] += done;
        sent += done;
        spent += done;
        lastAvail = (lastAvail + done) & 0xffff;
        usedIdx = (usedIdx + done) & 0xffff;
        if (sent === n) break;
      }
      const m = mbufs[sent]!;
      const need = NET_HDR_SIZE + u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      if (perPacket) avail = this.availCount(); // the study arm: the avail line touched per packet
      // Anything else (the kernel stopped here): take avail entries until the packet fits (one entry without MRG_RXBUF).
      let taken = 0;
      let k = 0;
      let g = 0;
      let cap = 0;
      let good = 0;
      let short = false;
      for (;;) {
        if (spent + taken >= avail) {
          if (perPacket) avail = this.availCount();
          if (spent + taken >= avail) {
            short = true;
            break;
          }
        }
        const head = u16[availRing + ((lastAvail + taken) & this.mask)]!;
        taken++;
        const nb = ring.walk(head, this.chain);
        let ok = nb > 0 && g + nb <= BUF_VECTOR_MAX && k < BUF_VECTOR_MAX;
        if (ok) for (let b = 0; b < nb; b++) if (this.chain.writable[b] === 0) ok = false; // rx buffers are device-writable
        if (k === BUF_VECTOR_MAX) {
          short = true; // more bad entries than one packet may skip: retry next burst
          break;
        }
        this.heads[k] = head;
        if (!ok) {
          this.written[k++] = -1;
          continue;
        }
        this.written[k] = 0;
        for (let b = 0; b < nb; b++, g++) {
          this.gOff[g] = this.chain.offset[b]!;
          this.gLen[g] = this.chain.length[b]!;
          this.gHead[g] = k;
          cap += this.chain.length[b]!;
        }
        k++;
        good++;
        if (!mrg || cap >= need) break;
      }
      if (short) break; // the packet waits for buffers; nothing of it was taken
      spent += taken;
      lastAvail = (lastAvail + taken) & 0xffff;
      if (cap >= need) this.scatterPacket(m, mrg ? good : 1);
      else f[this.st + S.S_DROPS]++; // a guest buffer too small for the packet (no MRG_RXBUF)
      for (let i = 0; i < k; i++) {
        const e = (ring.used + 4 + 8 * (usedIdx & this.mask)) >>> 2;
        u32[e] = this.heads[i]!;
        u32[e + 1] = this.written[i]! < 0 ? 0 : this.written[i]!;
        usedIdx = (usedIdx + 1) & 0xffff;
      }
      f[this.st + S.S_BAD_CHAINS] += k - good;
    }
    if (usedIdx !== oldUsed) this.publish(usedIdx, oldUsed, lastAvail);
    else this.lastAvail = lastAvail;
    return sent;
  }

  /** Copies header and packet into the gathered buffers, noting the bytes each avail entry got. */
  private scatterPacket(m: number, numBuffers: number): void {
    const hs = this.copies.slot();
    const u32 = this.u32;
    u32[hs >>> 2] = 0;
    u32[(hs >>> 2) + 1] = 0;
    u32[(hs >>> 2) + 2] = 0;
    this.u16[(hs + HDR_NUM_BUFFERS) >>> 1] = numBuffers;
    this.gi = 0;
    this.gpos = 0;
    this.scatter(hs, NET_HDR_SIZE);
    const mb = this.mb;
    for (let s = m; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) this.scatter(mb.mtod(s), this.u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!);
  }

  private gi = 0;
  private gpos = 0;

  private scatter(src: number, len: number): void {
    while (len > 0) {
      const room = this.gLen[this.gi]! - this.gpos;
      if (room === 0) {
        this.gi++;
        this.gpos = 0;
        continue;
      }
      const c = room < len ? room : len;
      this.copies.add(this.gOff[this.gi]! + this.gpos, src, c);
      this.written[this.gHead[this.gi]!]! += c;
      this.gpos += c;
      src += c;
      len -= c;
    }
  }

  /**
   * Copies guest tx chains into mbufs of `pool` (rte_vhost_dequeue_burst).
   * @returns how many packets were placed in `mbufs[0..)`.
   */
  dequeueBurst(pool: Mempool, mbufs: Burst, n: number): number {
    if (n === 0 || !this.sync()) return 0;
    if (this.packed !== null) return this.dequeuePacked(this.packed, pool, mbufs, n);
    const ring = this.ring!;
    const u16 = this.u16;
    const f = this.f64;
    const avail = this.availCount();
    if (avail <= 0) {
      if (avail < 0) f[this.st + S.S_BAD_CHAINS]++;
      return 0;
    }
    const count = avail < n ? avail : n;
    if (pool.allocBulk(mbufs, count) !== count) {
      f[this.nombuf]++;
      return 0;
    }
    const availRing = (ring.avail + 4) >>> 1;
    const oldUsed = this.lastUsed;
    let lastAvail = this.lastAvail;
    let usedIdx = oldUsed;
    let got = 0;
    const chain = this.chain;
    const mb = this.mb;
    const segRoom = mb.tailroom(mbufs[0]!);
    // One-descriptor packets that fit one mbuf, in one call (vhostDequeue), until the first that is not.
    if (this.addrs.length < count) this.addrs = this.heap.scratch(ADDRS_KEY, count);
    const qw = this.qw;
    const u32 = this.u32;
    u32[qw + VQ_W_LAST_AVAIL] = lastAvail;
    u32[qw + VQ_W_USED_IDX] = usedIdx;
    u32[qw + VQ_W_SEG_ROOM] = segRoom;
    u32[qw + VQ_W_ADDRS] = this.addrs.heapOffset;
    try {
      got = this.ops.dequeue(this.q, this.lc, mbufs.heapOffset, count);
    } catch (e) {
      this.trapped(e);
      mb.freeBulk(mbufs, count);
      return 0;
    }
    lastAvail = (lastAvail + got) & 0xffff;
    usedIdx = (usedIdx + got) & 0xffff;
    for (let t = got; t < count; t++) {
      const head = u16[availRing + (lastAvail & this.mask)]!;
      const nb = ring.walk(head, chain);
      let total = 0;
      let ok = nb > 0;
      for (let b = 0; ok && b < nb; b++) {
        if (chain.writable[b] !== 0) ok = false; // tx buffers are device-readable
        total += chain.length[b]!;
      }
      const len = total - NET_HDR_SIZE;
      if (!ok || len <= 0 || len > MAX_PKT_LEN) {
        this.usedEntry(ring, usedIdx, head);
        usedIdx = (usedIdx + 1) & 0xffff;
        lastAvail = (lastAvail + 1) & 0xffff;
        f[this.st + S.S_BAD_CHAINS]++;
        continue;
      }
      const m = mbufs[got]!;
      const nsegs = len <= segRoom ? 1 : 1 + Math.ceil((len - segRoom) / segRoom);
      if (nsegs > 1 && (nsegs - 1 > BUF_VECTOR_MAX || pool.allocBulk(this.extra, nsegs - 1) !== nsegs - 1)) {
        f[this.nombuf]++;
        break; // the chain stays available; it is taken when mbufs are back
      }
      this.gatherPacket(m, nsegs, len, segRoom);
      this.usedEntry(ring, usedIdx, head);
      usedIdx = (usedIdx + 1) & 0xffff;
      lastAvail = (lastAvail + 1) & 0xffff;
      got++;
    }
    if (got < count) mb.freeBulk(mbufs, count - got, got);
    if (usedIdx !== oldUsed) this.publish(usedIdx, oldUsed, lastAvail);
    else this.lastAvail = lastAvail;
    return got;
  }

  /** Links the extra segments to `m`, sets lengths, and lists the copies from the walked chain (header skipped). */
  private gatherPacket(m: number, nsegs: number, len: number, segRoom: number): void {
    const u16 = this.u16;
    const u32 = this.u32;
    const chain = this.chain;
    const mb = this.mb;
    u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
    u16[(m << MBUF_HALF_SHIFT) + H_NB_SEGS] = nsegs;
    u16[(m << MBUF_HALF_SHIFT) + H_PORT] = this.port;
    let seg = m;
    let segLeft = len < segRoom ? len : segRoom;
    u16[(seg << MBUF_HALF_SHIFT) + H_DATA_LEN] = segLeft;
    let dst = mb.mtod(seg);
    let left = len;
    let skip = NET_HDR_SIZE;
    let e = 0;
    for (let b = 0; b < chain.count && left > 0; b++) {
      let src = chain.offset[b]!;
      let blen = chain.length[b]!;
      if (skip > 0) {
        const s = skip < blen ? skip : blen;
        skip -= s;
        src += s;
        blen -= s;
      }
      while (blen > 0) {
        if (segLeft === 0) {
          const next = this.extra[e++]!;
          u32[(seg << MBUF_WORD_SHIFT) + W_NEXT] = next;
          seg = next;
          segLeft = left < segRoom ? left : segRoom;
          u16[(seg << MBUF_HALF_SHIFT) + H_DATA_LEN] = segLeft;
          dst = mb.mtod(seg);
        }
        const c = blen < segLeft ? blen : segLeft;
        this.copies.add(dst, src, c);
        dst += c;
        src += c;
        blen -= c;
        segLeft -= c;
        left -= c;
      }
    }
  }

  private usedEntry(ring: Vring, usedIdx: number, head: number): void {
    const e = (ring.used + 4 + 8 * (usedIdx & this.mask)) >>> 2;
    this.u32[e] = head;
    this.u32[e + 1] = 0;
  }

  /**
   * A kernel trapped: it reached past guest memory into the guard pages
   * around a mapped window (a bug in a check, never a guest's doing). One
   * line, the ring stops and the link goes down, whichever queue it was (the
   * link is the first vring's readiness, so that one is cleared too); the
   * process and every other port go on, and a new connection (a new
   * generation) reopens the rings.
   * Anything but a wasm trap is rethrown.
   */
  private trapped(e: unknown): void {
    if (!(e instanceof WasmTrap)) throw e;
    vhostLog(`port ${this.port}: vhost vring data path trapped (${e.message}); ring stopped, link down`);
    this.ring = null;
    this.packed = null;
    this.nPend = 0;
    this.f64[this.st + S.S_READY] = 0;
    this.f64[this.d.link + S.S_READY] = 0;
  }

  /** The packed kernels' call part: positions and wrap counters, and the scratch for their first pass. */
  private packedCall(want: number): void {
    if (this.addrs.length < want) this.addrs = this.heap.scratch(ADDRS_KEY, want);
    const u32 = this.u32;
    const qw = this.qw;
    u32[qw + VQ_W_LAST_AVAIL] = this.lastAvail;
    u32[qw + VQ_W_USED_IDX] = this.lastUsed;
    u32[qw + VQ_W_WRAP] = this.wa | (this.wu << 1);
    u32[qw + VQ_W_ADDRS] = this.addrs.heapOffset;
  }

  /** Moves the avail position by `k` descriptors. */
  private advanceAvail(k: number): void {
    this.lastAvail += k;
    while (this.lastAvail >= this.num) {
      this.lastAvail -= this.num;
      this.wa ^= 1;
    }
  }

  /** Writes a used element for a chain of `descs` descriptors (its flags at publish), and moves the used position past it. */
  private packedUsed(ring: PackedRing, id: number, len: number, descs: number, write: boolean): void {
    ring.used(this.lastUsed, id, len, -1);
    this.pendPos[this.nPend] = this.lastUsed;
    this.pendFlags[this.nPend++] = usedFlags(this.wu, write);
    this.lastUsed += descs;
    while (this.lastUsed >= this.num) {
      this.lastUsed -= this.num;
      this.wu ^= 1;
    }
  }

  /** enqueueBurst over a packed ring: the kernel for one-descriptor buffers, then one packet the general way, and again. */
  private enqueuePacked(ring: PackedRing, mbufs: Burst, n: number): number {
    const u32 = this.u32;
    const f = this.f64;
    const mrg = (this.flags & S.F_MRG_RXBUF) !== 0;
    const chain = this.chain;
    let sent = 0;
    let moved = false;
    for (; sent < n; sent++) {
      this.packedCall(n - sent);
      let done: number;
      try {
        done = this.ops.enqueuePacked(this.q, this.lc, mbufs.heapOffset + sent * 4, n - sent);
      } catch (e) {
        this.trapped(e);
        return 0;
      }
      if (done > 0) {
        moved = true;
        sent += done;
        this.advanceAvail(done);
        this.lastUsed = this.lastAvail; // one descriptor each: used follows avail
        this.wu = this.wa;
        if (sent === n) break;
      }
      const m = mbufs[sent]!;
      const need = NET_HDR_SIZE + u32[(m << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      // Take chains until the packet fits (one without MRG_RXBUF); nothing is taken unless it all is.
      let pos = this.lastAvail;
      let w = this.wa;
      let k = 0;
      let g = 0;
      let cap = 0;
      let good = 0;
      let short = false;
      for (;;) {
        if (k === BUF_VECTOR_MAX || !descIsAvail(ring.flagsAt(pos), w)) {
          short = true;
          break;
        }
        const nb = ring.walk(pos, w, chain);
        const descs = ring.descs;
        this.heads[k] = ring.id;
        this.descs[k] = descs;
        pos += descs;
        while (pos >= this.num) {
          pos -= this.num;
          w ^= 1;
        }
        let ok = nb > 0 && g + nb <= BUF_VECTOR_MAX;
        if (ok) for (let b = 0; b < nb; b++) if (chain.writable[b] === 0) ok = false;
        if (!ok) {
          this.written[k++] = -1;
          continue;
        }
        this.written[k] = 0;
        for (let b = 0; b < nb; b++, g++) {
          this.gOff[g] = chain.offset[b]!;
          this.gLen[g] = chain.length[b]!;
          this.gHead[g] = k;
          cap += chain.length[b]!;
        }
        k++;
        good++;
        if (!mrg || cap >= need) break;
      }
      if (short) break;
      this.lastAvail = pos;
      this.wa = w;
      if (cap >= need) this.scatterPacket(m, mrg ? good : 1);
      else f[this.st + S.S_DROPS]++;
      for (let i = 0; i < k; i++) this.packedUsed(ring, this.heads[i]!, this.written[i]! < 0 ? 0 : this.written[i]!, this.descs[i]!, true);
      f[this.st + S.S_BAD_CHAINS] += k - good;
      moved = true;
      if (this.nPend > this.pendPos.length - BUF_VECTOR_MAX) this.publishPacked(ring);
    }
    if (moved) this.publishPacked(ring);
    return sent;
  }

  /** dequeueBurst over a packed ring. */
  private dequeuePacked(ring: PackedRing, pool: Mempool, mbufs: Burst, n: number): number {
    const f = this.f64;
    // Available descriptors from our position, up to n (chains count once per descriptor: some mbufs go back).
    let count = 0;
    for (let pos = this.lastAvail, w = this.wa; count < n && descIsAvail(ring.flagsAt(pos), w); count++) {
      if (++pos === this.num) {
        pos = 0;
        w ^= 1;
      }
    }
    if (count === 0) return 0;
    if (pool.allocBulk(mbufs, count) !== count) {
      f[this.nombuf]++;
      return 0;
    }
    const mb = this.mb;
    const chain = this.chain;
    const segRoom = mb.tailroom(mbufs[0]!);
    this.packedCall(count);
    this.u32[this.qw + VQ_W_SEG_ROOM] = segRoom;
    let got: number;
    try {
      got = this.ops.dequeuePacked(this.q, this.lc, mbufs.heapOffset, count);
    } catch (e) {
      this.trapped(e);
      mb.freeBulk(mbufs, count);
      return 0;
    }
    let moved = got > 0;
    this.advanceAvail(got);
    this.lastUsed = this.lastAvail;
    this.wu = this.wa;
    for (let t = got; t < count; t++) {
      if (!descIsAvail(ring.flagsAt(this.lastAvail), this.wa)) break;
      if (this.nPend === this.pendPos.length) this.publishPacked(ring); // a burst longer than the pending list
      const nb = ring.walk(this.lastAvail, this.wa, chain);
      const descs = ring.descs;
      const id = ring.id;
      let total = 0;
      let ok = nb > 0;
      for (let b = 0; ok && b < nb; b++) {
        if (chain.writable[b] !== 0) ok = false;
        total += chain.length[b]!;
      }
      const len = total - NET_HDR_SIZE;
      if (!ok || len <= 0 || len > MAX_PKT_LEN) {
        this.advanceAvail(descs);
        this.packedUsed(ring, id, 0, descs, false);
        f[this.st + S.S_BAD_CHAINS]++;
        moved = true;
        continue;
      }
      const m = mbufs[got]!;
      const nsegs = len <= segRoom ? 1 : 1 + Math.ceil((len - segRoom) / segRoom);
      if (nsegs > 1 && (nsegs - 1 > BUF_VECTOR_MAX || pool.allocBulk(this.extra, nsegs - 1) !== nsegs - 1)) {
        f[this.nombuf]++;
        break;
      }
      this.gatherPacket(m, nsegs, len, segRoom);
      this.advanceAvail(descs);
      this.packedUsed(ring, id, 0, descs, false);
      moved = true;
      got++;
    }
    if (got < count) mb.freeBulk(mbufs, count - got, got);
    if (moved) this.publishPacked(ring);
    return got;
  }

  /** Bytes first, then the pending used elements' flags in ring order, then the guest's notification if it wants one. */
  private publishPacked(ring: PackedRing): void {
    this.copies.flush();
    for (let i = 0; i < this.nPend; i++) ring.setFlags(this.pendPos[i]!, this.pendFlags[i]!);
    this.nPend = 0;
    const f = this.f64;
    f[this.st + S.S_LAST_AVAIL] = encodeBase(this.lastAvail, this.wa);
    f[this.st + S.S_LAST_USED] = encodeBase(this.lastUsed, this.wu);
    // The driver's area: DISABLE asks for no call; ENABLE and DESC (an event index, answered early) get one.
    if (this.call >= 0 && Atomics.load(this.u16, (ring.driverEvent + PACKED_EVENT_FLAGS) >>> 1) !== RING_EVENT_FLAGS_DISABLE) {
      Atomics.add(this.i32, this.call >>> 2, 1);
      Atomics.notify(this.i32, this.call >>> 2);
      f[this.st + S.S_CALLS]++;
    }
  }

  /**
   * With EVENT_IDX the guest kicks when its avail index passes avail_event;
   * a polling host keeps that just behind what it took. Refreshed every
   * quarter ring of indices, not every burst: it sits on its own cache line.
   */
  private suppressKicks(): void {
    if ((this.flags & S.F_EVENT_IDX) === 0) return;
    this.availEvent = (this.lastAvail - 1) & 0xffff;
    Atomics.store(this.u16, (this.ring!.used + 4 + 8 * this.num) >>> 1, this.availEvent);
  }

  /** Bytes first, then the used index (release), then the guest's notification if it asked for one. */
  private publish(usedIdx: number, oldUsed: number, lastAvail: number): void {
    const ring = this.ring!;
    this.copies.flush();
    Atomics.store(this.u16, (ring.used + 2) >>> 1, usedIdx);
    this.lastUsed = usedIdx;
    this.lastAvail = lastAvail;
    const f = this.f64;
    f[this.st + S.S_LAST_AVAIL] = lastAvail;
    f[this.st + S.S_LAST_USED] = usedIdx;
    if (((lastAvail - this.availEvent) & 0xffff) >= 0x4000) this.suppressKicks();
    if (this.call >= 0) {
      const want =
        (this.flags & S.F_EVENT_IDX) !== 0
          ? needEvent(Atomics.load(this.u16, (ring.avail + 4 + 2 * this.num) >>> 1), usedIdx, oldUsed)
          : (Atomics.load(this.u16, ring.avail >>> 1) & VRING_AVAIL_F_NO_INTERRUPT) === 0;
      if (want) {
        Atomics.add(this.i32, this.call >>> 2, 1);
        Atomics.notify(this.i32, this.call >>> 2);
        f[this.st + S.S_CALLS]++;
      }
    }
  }
}
