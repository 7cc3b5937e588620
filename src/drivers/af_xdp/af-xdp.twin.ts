/**
 * net_af_xdp's ring walks, the wasm kernels (af-xdp.as.ts) or their
 * TypeScript twins (here, same signatures), chosen once when a queue is
 * opened (`afXdpOps`). Arguments are heap byte offsets: `q` the queue's block
 * (af-xdp.record.ts), `lc` the calling thread's lcore block, `burst` a burst.
 * The ring indices the kernel writes are read with Atomics.load before the
 * entries; the ones dpkit writes are stored with Atomics.store after them.
 */
import type { Heap } from '../../eal/heap.js';
import { queueOps, QueueTwin } from '../../ethdev/queue-ops.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, H_REFCNT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_NEXT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import type { Mempool } from '../../mem/mempool.js';
import {
  AFXQ_W_A_CONS,
  AFXQ_W_A_DESCS,
  AFXQ_W_A_FLAGS,
  AFXQ_W_A_MASK,
  AFXQ_W_A_PROD,
  AFXQ_W_ARENA,
  AFXQ_W_ARENA_END,
  AFXQ_W_B_CONS,
  AFXQ_W_B_DESCS,
  AFXQ_W_B_FLAGS,
  AFXQ_W_B_MASK,
  AFXQ_W_B_PROD,
  AFXQ_W_BUSY,
  AFXQ_W_FIRST,
  AFXQ_W_FRAME_CAP,
  AFXQ_W_FREED,
  AFXQ_W_FRONT,
  AFXQ_W_HELD,
  AFXQ_W_KICK,
  AFXQ_W_OWNED,
  AFXQ_W_PORT,
  AFXQ_W_SCRATCH,
  AFXQ_W_SCRATCH_COUNT,
  AFXQ_W_SG,
  AFXQ_W_STATS,
  AFXQ_W_STRIDE,
  AFXQ_W_TARGET,
  AFXQ_W_UMEM,
  XDP_PKT_CONTD,
  XDP_RING_NEED_WAKEUP,
  XDPD_W_ADDR_HI,
  XDPD_W_ADDR_LO,
  XDPD_W_LEN,
  XDPD_W_OPTIONS,
  XSK_OFFSET_SHIFT,
} from './af-xdp-layout.js';

export interface AfXdpOps {
  /** Filled descriptors into their mbufs, the fill ring topped up. @returns packets in the burst (the block's `kick` says whether to wake rx). */
  rx(q: number, lc: number, burst: number, n: number): number;
  /** Completions reaped, packets onto the tx ring. @returns how many it took (the block's `freed` and `kick` say the rest). */
  tx(q: number, lc: number, burst: number, n: number): number;
}

/**
 * The kernels when the heap has them, else the twins. `mp` is the UMEM's
 * pool, which both directions allocate from: a debug pool keeps both on the
 * twins, whose pool calls do its checks.
 */
export function afXdpOps(heap: Heap, mb: Mbufs, mp: Mempool): AfXdpOps {
  return queueOps(heap, mp, 'afXdpRx', 'afXdpTx', () => new AfXdpTwin(heap, mb, mp));
}

/** The twins: what the kernels do, readable, and their oracle in the tests. */
class AfXdpTwin extends QueueTwin implements AfXdpOps {
  private readonly i32: Int32Array;

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
    private readonly mp: Mempool,
  ) {
    super(heap);
    this.i32 = heap.i32;
  }

  /** The kernel's refill: fresh buffers into the fill ring until the kernel holds `target`. */
  private refill(w: number): void {
    const u32 = this.u32;
    const held = u32[w + AFXQ_W_HELD]!;
    const want = Math.min(u32[w + AFXQ_W_TARGET]! - held, u32[w + AFXQ_W_SCRATCH_COUNT]!);
    if (want === 0) return;
    const scratch = u32[w + AFXQ_W_SCRATCH]! >>> 2;
    if (this.mp.allocBulk(this.words, want, scratch) !== want) {
      this.f64[(u32[w + AFXQ_W_STATS]! >>> 3) + RXQ_NOMBUF] += want;
      return;
    }
    const umem = u32[w + AFXQ_W_UMEM]!;
    const arena = u32[w + AFXQ_W_ARENA]!;
    const stride = u32[w + AFXQ_W_STRIDE]!;
    const owned = u32[w + AFXQ_W_OWNED]!;
    const prodAt = u32[w + AFXQ_W_B_PROD]! >>> 2;
    const descs = u32[w + AFXQ_W_B_DESCS]! >>> 2;
    const mask = u32[w + AFXQ_W_B_MASK]!;
    const prod = u32[prodAt]!;
    for (let j = 0; j < want; j++) {
      const buf = u32[(u32[scratch + j]! << MBUF_WORD_SHIFT) + W_BUF_ADDR]!;
      this.u8[owned + Math.floor((buf - arena) / stride)] = 1;
      const e = descs + (((prod + j) & mask) << 1);
      u32[e] = buf - umem;
      u32[e + 1] = 0;
    }
    Atomics.store(this.i32, prodAt, (prod + want) | 0);
    u32[w + AFXQ_W_HELD] = held + want;
  }

  rx(q: number, _lc: number, burst: number, n: number): number {
    const { u8, u16, u32, i32 } = this;
    const w = q >>> 2;
    const consAt = u32[w + AFXQ_W_A_CONS]! >>> 2;
    const cons = u32[consAt]!;
    const avail = (Atomics.load(i32, u32[w + AFXQ_W_A_PROD]! >>> 2) - cons) >>> 0;
    const descs = u32[w + AFXQ_W_A_DESCS]! >>> 2;
    const mask = u32[w + AFXQ_W_A_MASK]!;
    let i = 0;
    let got = 0;
    if (avail !== 0) {
      const umem = u32[w + AFXQ_W_UMEM]!;
      const arena = u32[w + AFXQ_W_ARENA]!;
      const arenaEnd = u32[w + AFXQ_W_ARENA_END]!;
      const stride = u32[w + AFXQ_W_STRIDE]!;
      const first = u32[w + AFXQ_W_FIRST]!;
      const owned = u32[w + AFXQ_W_OWNED]!;
      const port = u32[w + AFXQ_W_PORT]!;
      const b = burst >>> 2;
      let bytes = 0;
      while (got < n && i < avail) {
        let end = i;
        while (end < avail && (u32[descs + (((cons + end) & mask) << 2) + XDPD_W_OPTIONS]! & XDP_PKT_CONTD) !== 0) end++;
        if (end === avail) break; // the packet's last fragment is not there yet
        let head = 0;
        let prev = 0;
        let total = 0;
        let segs = 0;
        for (; i <= end; i++) {
          const d = descs + (((cons + i) & mask) << 2);
          const at = (umem + u32[d + XDPD_W_ADDR_LO]!) >>> 0;
          if (at < arena || at >= arenaEnd) continue;
          const idx = Math.floor((at - arena) / stride);
          const len = u32[d + XDPD_W_LEN]!;
          const h = first + idx;
          const hh = h << MBUF_HALF_SHIFT;
          u8[owned + idx] = 0;
          u16[hh + H_DATA_OFF] = at + (u32[d + XDPD_W_ADDR_HI]! >>> XSK_OFFSET_SHIFT) - u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]!;
          u16[hh + H_DATA_LEN] = len;
          if (head === 0) head = h;
          else u32[(prev << MBUF_WORD_SHIFT) + W_NEXT] = h;
          prev = h;
          total += len;
          segs++;
        }
        if (head === 0) continue;
        u32[(head << MBUF_WORD_SHIFT) + W_PKT_LEN] = total;
        u16[(head << MBUF_HALF_SHIFT) + H_NB_SEGS] = segs;
        u16[(head << MBUF_HALF_SHIFT) + H_PORT] = port;
        u32[b + got] = head;
        got++;
        bytes += total;
      }
      Atomics.store(i32, consAt, (cons + i) | 0);
      u32[w + AFXQ_W_HELD] = u32[w + AFXQ_W_HELD]! - i;
      const stats = u32[w + AFXQ_W_STATS]! >>> 3;
      this.f64[stats + RXQ_PACKETS] += got;
      this.f64[stats + RXQ_BYTES] += bytes;
    }
    this.refill(w);
    const wake = i === 0 && (u32[w + AFXQ_W_BUSY] !== 0 || (Atomics.load(i32, u32[w + AFXQ_W_B_FLAGS]! >>> 2) & XDP_RING_NEED_WAKEUP) !== 0);
    u32[w + AFXQ_W_KICK] = wake ? 1 : 0;
    return got;
  }

  /** The kernel's reap: completed buffers' mbufs freed in scratch-sized runs. */
  private reap(w: number, lc: number): void {
    const { u32 } = this;
    const consAt = u32[w + AFXQ_W_B_CONS]! >>> 2;
    let cons = u32[consAt]!;
    let m = (Atomics.load(this.i32, u32[w + AFXQ_W_B_PROD]! >>> 2) - cons) >>> 0;
    if (m === 0) return;
    const descs = u32[w + AFXQ_W_B_DESCS]! >>> 2;
    const mask = u32[w + AFXQ_W_B_MASK]!;
    const umem = u32[w + AFXQ_W_UMEM]!;
    const arena = u32[w + AFXQ_W_ARENA]!;
    const arenaEnd = u32[w + AFXQ_W_ARENA_END]!;
    const stride = u32[w + AFXQ_W_STRIDE]!;
    const first = u32[w + AFXQ_W_FIRST]!;
    const owned = u32[w + AFXQ_W_OWNED]!;
    const scratch = u32[w + AFXQ_W_SCRATCH]!;
    const cap = u32[w + AFXQ_W_SCRATCH_COUNT]!;
    while (m !== 0) {
      const run = Math.min(m, cap);
      let c = 0;
      for (let j = 0; j < run; j++) {
        const at = (umem + u32[descs + (((cons + j) & mask) << 1)]!) >>> 0;
        if (at < arena || at >= arenaEnd) continue;
        const idx = Math.floor((at - arena) / stride);
        this.u8[owned + idx] = 0;
        u32[(scratch >>> 2) + c] = first + idx;
        c++;
      }
      this.mb.freeBulkDirect(lc, scratch, c);
      cons = (cons + run) >>> 0;
      m -= run;
    }
    Atomics.store(this.i32, consAt, cons | 0);
  }

  /** A tx descriptor at u32 index `d`: UMEM offset `addr`, `len` bytes, `options`. */
  private putDesc(d: number, addr: number, len: number, options: number): void {
    const u32 = this.u32;
    u32[d + XDPD_W_ADDR_LO] = addr;
    u32[d + XDPD_W_ADDR_HI] = 0;
    u32[d + XDPD_W_LEN] = len;
    u32[d + XDPD_W_OPTIONS] = options;
  }

  tx(q: number, lc: number, burst: number, n: number): number {
    const { u8, u16, u32, i32, mb } = this;
    const w = q >>> 2;
    this.reap(w, lc);
    const prodAt = u32[w + AFXQ_W_A_PROD]! >>> 2;
    const consAt = u32[w + AFXQ_W_A_CONS]! >>> 2;
    const prod = u32[prodAt]!;
    const mask = u32[w + AFXQ_W_A_MASK]!;
    const room = (mask + 1 - (prod - Atomics.load(i32, consAt))) >>> 0;
    const descs = u32[w + AFXQ_W_A_DESCS]! >>> 2;
    const umem = u32[w + AFXQ_W_UMEM]!;
    const arena = u32[w + AFXQ_W_ARENA]!;
    const arenaEnd = u32[w + AFXQ_W_ARENA_END]!;
    const stride = u32[w + AFXQ_W_STRIDE]!;
    const first = u32[w + AFXQ_W_FIRST]!;
    const owned = u32[w + AFXQ_W_OWNED]!;
    const cap = u32[w + AFXQ_W_FRAME_CAP]!;
    const scratch = u32[w + AFXQ_W_SCRATCH]! >>> 2;
    const b = burst >>> 2;
    const sg = u32[w + AFXQ_W_SG]!;
    let i = 0;
    let sent = 0;
    let pkts = 0;
    let bytes = 0;
    let errors = 0;
    let front = 0;
    for (; i < n && sent < room; i++) {
      const h = u32[b + i]!;
      const len = u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      // Zero-copy when every segment is an mbuf of the arena with its own buffer, not shared (a chain only with sg).
      let segs = 0;
      for (let s = h; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
        const sb = u32[(s << MBUF_WORD_SHIFT) + W_BUF_ADDR]!;
        if (sb < arena || sb >= arenaEnd || first + Math.floor((sb - arena) / stride) !== s || u16[(s << MBUF_HALF_SHIFT) + H_REFCNT] !== 1) {
          segs = 0;
          break;
        }
        segs++;
      }
      if (segs > 1 && sg === 0) segs = 0;
      if (segs !== 0) {
        if (segs > room - sent) break; // not all its fragments fit: the caller keeps it
        for (let s = h; s !== 0; ) {
          const next = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!;
          const sb = u32[(s << MBUF_WORD_SHIFT) + W_BUF_ADDR]!;
          u8[owned + Math.floor((sb - arena) / stride)] = 1;
          this.putDesc(descs + (((prod + sent) & mask) << 2), sb + u16[(s << MBUF_HALF_SHIFT) + H_DATA_OFF]! - umem, u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!, next !== 0 ? XDP_PKT_CONTD : 0);
          if (next !== 0) {
            // Each segment comes back on its own from the completion ring and is freed alone.
            u32[(s << MBUF_WORD_SHIFT) + W_NEXT] = 0;
            u16[(s << MBUF_HALF_SHIFT) + H_NB_SEGS] = 1;
          }
          sent++;
          s = next;
        }
      } else {
        if (len > cap) {
          errors++;
          u32[b + front++] = h;
          continue;
        }
        if (this.mp.allocBulk(this.words, 1, scratch) !== 1) break;
        const c = u32[scratch]!;
        let dst = mb.mtod(c);
        const addr = dst;
        for (let s = h; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
          const dl = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
          const at = mb.mtod(s);
          u8.copyWithin(dst, at, at + dl);
          dst += dl;
        }
        u8[owned + Math.floor((u32[(c << MBUF_WORD_SHIFT) + W_BUF_ADDR]! - arena) / stride)] = 1;
        u32[b + front++] = h;
        this.putDesc(descs + (((prod + sent) & mask) << 2), addr - umem, len, 0);
        sent++;
      }
      pkts++;
      bytes += len;
    }
    Atomics.store(i32, prodAt, (prod + sent) | 0);
    const waiting = ((prod + sent) | 0) !== Atomics.load(i32, consAt);
    u32[w + AFXQ_W_KICK] = waiting && (Atomics.load(i32, u32[w + AFXQ_W_A_FLAGS]! >>> 2) & XDP_RING_NEED_WAKEUP) !== 0 ? 1 : 0;
    const stats = u32[w + AFXQ_W_STATS]! >>> 3;
    this.f64[stats + TXQ_PACKETS] += pkts;
    this.f64[stats + TXQ_BYTES] += bytes;
    if (errors !== 0) this.f64[stats + TXQ_ERRORS] += errors;
    u32[w + AFXQ_W_FRONT] = front;
    u32[w + AFXQ_W_FREED] = mb.freeBulkDirect(lc, burst, front);
    return i;
  }
}
