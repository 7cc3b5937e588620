/**
 * Mbuf operations (rte_mbuf.h): field access, headroom/tailroom edits,
 * chains, reference counts, indirect mbufs and freeing back to the pools.
 *
 * A packet is a u32 handle (the record: mbuf.record.ts). `Mbufs` is one thread's set
 * of views over the heap, made once; every method indexes them and allocates
 * nothing. Methods that can fail return -1 (or 0 for a handle) and change
 * nothing, as DPDK's return NULL / -1; broken invariants (double free,
 * refcnt underflow) throw MbufError naming the handle.
 *
 * Thread-safety: an mbuf has one owner at a time, so plain loads and stores
 * are enough, except for refcnt above 1 (clones shared between lcores), which
 * is updated with Atomics, as DPDK's rte_mbuf_refcnt_update.
 */
import { MbufError, fmtHandle } from '../errors.js';
import { Heap, MAX_POOLS, type Burst } from '../eal/heap.js';
import { LCORE_PENDING, LCORE_PENDING_COUNT } from '../eal/heap-layout.js';
import {
  B_L2_LEN,
  B_L4_LEN,
  H_BUF_LEN,
  H_DATA_LEN,
  H_DATA_OFF,
  H_L3_LEN,
  H_NB_SEGS,
  H_POOL,
  H_PORT,
  H_REFCNT,
  H_TSO_SEGSZ,
  H_VLAN_TCI,
  H_VLAN_TCI_OUTER,
  MBUF_HALF_SHIFT,
  MBUF_MAX_NB_SEGS,
  MBUF_SHIFT,
  MBUF_SLOT_SHIFT,
  MBUF_WORD_SHIFT,
  OlFlagsHi,
  PORT_INVALID,
  W_BUF_ADDR,
  W_BUF_LEN_POOL,
  W_DATA_OFF_REFCNT,
  W_NB_SEGS_PORT,
  W_DIRECT,
  W_HASH,
  W_NEXT,
  W_OL_FLAGS,
  W_OL_FLAGS_HI,
  W_PKT_LEN,
  W_PKT_TYPE,
  W_RESET_ZERO,
  W_TIMESTAMP_HI,
  W_TIMESTAMP_LO,
  W_TSO_VLAN_OUTER,
  W_TX_OFFLOAD,
} from './mbuf-layout.js';
import { Mempool } from './mempool.js';

/** DPDK's RTE_PKTMBUF_FREE_PENDING_SZ: rte_pktmbuf_free_bulk returns mbufs in chunks of this many (the lcore block's pending array). */
export const FREE_PENDING_SZ = LCORE_PENDING_COUNT;


/**
 * The rte_pktmbuf_* operations on mbuf handles of any pool of one heap:
 * field accessors (one typed-array index each, no allocation), data room
 * (append, prepend, adj, trim), chains, clones and references, and free.
 * Make one per thread (it keeps the thread's lcore block).
 */
export class Mbufs {
  /** The heap's byte view (packet bytes at `bufAddr + dataOff`). */
  readonly u8: Uint8Array;
  /** The heap's 2-byte view. */
  readonly u16: Uint16Array;
  /** The heap's 4-byte view (records at `h << MBUF_WORD_SHIFT`). */
  readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly pools: (Mempool | undefined)[] = new Array<Mempool | undefined>(MAX_POOLS).fill(undefined);
  /** free_bulk's pending segments: the lcore block's, where the kernel gathers them too. */
  private readonly pending: Burst;
  /** This thread's lcore block (the kernels' `lc`). */
  private readonly lc: number;
  /**
   * freeBulk's common case, chosen once: the mbufFreeBulk kernel (mbuf.as.ts)
   * or its twin freeBulkDirect, same signature.
   */
  private readonly freeDirect: (lc: number, objs: number, n: number) => number;
  /** pktLenSum's work, chosen once: the mbufPktLenSum kernel or its twin pktLenSumTs. */
  private readonly lenSum: (objs: number, n: number) => number;

  constructor(
    /** The heap the mbufs live in. */
    readonly heap: Heap,
  ) {
    this.u8 = heap.u8;
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.lc = heap.lcore;
    this.pending = heap.burstAt(this.lc + LCORE_PENDING, LCORE_PENDING_COUNT);
    this.freeDirect = heap.kernels ? heap.kernels.fn('mbufFreeBulk') : (lc, objs, n) => this.freeBulkDirect(lc, objs, n);
    this.lenSum = heap.kernels ? heap.kernels.fn('mbufPktLenSum') : (objs, n) => this.pktLenSumTs(objs, n);
  }

  // ---- fields -------------------------------------------------------------

  /** Heap offset of the buffer (headroom starts here). */
  bufAddr(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]!;
  }
  /** buf_len: bytes of the buffer, headroom included. */
  bufLen(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_BUF_LEN]!;
  }
  /** data_off: where the data starts in the buffer (the headroom). */
  dataOff(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
  }
  /** data_len: bytes of data in this segment. */
  dataLen(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
  }
  /** Sets data_len (no check against the buffer: see append). */
  setDataLen(h: number, len: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = len;
  }
  /** Length of the whole packet; meaningful on the first segment. */
  pktLen(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
  }
  /** Sets pkt_len (the first segment's). */
  setPktLen(h: number, len: number): void {
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
  }
  /** nb_segs: segments in the chain (on the first segment). */
  nbSegs(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS]!;
  }
  /** Next segment's handle, 0 at the end of the chain. */
  next(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_NEXT]!;
  }
  /** port: the input port (PORT_INVALID for a fresh mbuf). */
  port(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_PORT]!;
  }
  /** Sets port. */
  setPort(h: number, port: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_PORT] = port;
  }
  /** rte_mbuf_refcnt_read: owners of the mbuf (1 for one). */
  refcnt(h: number): number {
    return Atomics.load(this.u16, (h << MBUF_HALF_SHIFT) + H_REFCNT);
  }
  /** rte_mbuf_refcnt_set: only for an mbuf this thread owns alone. */
  setRefcnt(h: number, v: number): void {
    Atomics.store(this.u16, (h << MBUF_HALF_SHIFT) + H_REFCNT, v);
  }
  /** Pool id (Mempool.id) the mbuf returns to. */
  poolId(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_POOL]!;
  }
  /** Offload flags, bits 0..31 of DPDK's ol_flags (rx flags: OlFlags). */
  olFlags(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS]!;
  }
  /** Sets ol_flags bits 0..31. */
  setOlFlags(h: number, f: number): void {
    this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS] = f;
  }
  /** Offload flags, bits 32..63 of DPDK's ol_flags (tx flags: OlFlagsHi). */
  olFlagsHi(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI]!;
  }
  /** Sets ol_flags bits 32..63. */
  setOlFlagsHi(h: number, f: number): void {
    this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI] = f;
  }
  /** packet_type (RTE_PTYPE_* bits). */
  pktType(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_TYPE]!;
  }
  /** Sets packet_type. */
  setPktType(h: number, t: number): void {
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_TYPE] = t;
  }
  /** RSS hash (hash.rss). */
  hash(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_HASH]!;
  }
  /** Sets hash.rss. */
  setHash(h: number, v: number): void {
    this.u32[(h << MBUF_WORD_SHIFT) + W_HASH] = v;
  }
  /** vlan_tci: the stripped or to-be-inserted VLAN tag. */
  vlanTci(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI]!;
  }
  /** Sets vlan_tci. */
  setVlanTci(h: number, v: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = v;
  }
  /** vlan_tci_outer: the outer tag (QinQ). */
  vlanTciOuter(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER]!;
  }
  /** Sets vlan_tci_outer. */
  setVlanTciOuter(h: number, v: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = v;
  }
  /** l2_len (tx offload): L2 header bytes. */
  l2Len(h: number): number {
    return this.u8[(h << MBUF_SHIFT) + B_L2_LEN]!;
  }
  /** l3_len (tx offload): L3 header bytes. */
  l3Len(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_L3_LEN]!;
  }
  /** l4_len (tx offload): L4 header bytes. */
  l4Len(h: number): number {
    return this.u8[(h << MBUF_SHIFT) + B_L4_LEN]!;
  }
  /** Tx offload header lengths (DPDK packs them as l2_len:7, l3_len:9, l4_len:8). */
  setTxOffload(h: number, l2Len: number, l3Len: number, l4Len: number): void {
    const b = h << MBUF_SHIFT;
    this.u8[b + B_L2_LEN] = l2Len;
    this.u8[b + B_L4_LEN] = l4Len;
    this.u16[(h << MBUF_HALF_SHIFT) + H_L3_LEN] = l3Len;
  }
  /** tso_segsz: TCP segment size for TSO (0: none). */
  tsoSegsz(h: number): number {
    return this.u16[(h << MBUF_HALF_SHIFT) + H_TSO_SEGSZ]!;
  }
  /** Sets tso_segsz. */
  setTsoSegsz(h: number, v: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_TSO_SEGSZ] = v;
  }
  /** RTE_MBUF_CLONED: the mbuf uses another mbuf's buffer (a clone). */
  isIndirect(h: number): boolean {
    return (this.olFlagsHi(h) & OlFlagsHi.INDIRECT) !== 0;
  }
  /** RTE_MBUF_DIRECT: the mbuf owns its buffer (neither indirect nor external). */
  isDirect(h: number): boolean {
    return (this.olFlagsHi(h) & (OlFlagsHi.INDIRECT | OlFlagsHi.EXTERNAL)) === 0;
  }
  /** For an indirect mbuf, the direct mbuf whose buffer it uses; 0 otherwise. */
  directOf(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_DIRECT]!;
  }

  // ---- data ---------------------------------------------------------------

  /** Heap offset of the data plus `off` (rte_pktmbuf_mtod_offset). */
  mtod(h: number, off = 0): number {
    return this.bufAddr(h) + this.dataOff(h) + off;
  }
  /** Free bytes before the data (rte_pktmbuf_headroom). */
  headroom(h: number): number {
    return this.dataOff(h);
  }
  /** Free bytes after the data of this segment (rte_pktmbuf_tailroom). */
  tailroom(h: number): number {
    return this.bufLen(h) - this.dataOff(h) - this.dataLen(h);
  }
  /** The chain's last segment (rte_pktmbuf_lastseg). */
  lastSeg(h: number): number {
    let n: number;
    while ((n = this.next(h)) !== 0) h = n;
    return h;
  }

  /**
   * Resets the metadata of an mbuf this thread owns (rte_pktmbuf_reset):
   * one empty segment, headroom reserved, no flags. Keeps refcnt, buffer and hash.
   */
  reset(h: number): void {
    const s = h << MBUF_HALF_SHIFT;
    const keep = this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI]! & OlFlagsHi.EXTERNAL;
    const d = (h << MBUF_SLOT_SHIFT) + (W_RESET_ZERO >> 1);
    this.f64[d] = 0;
    this.f64[d + 1] = 0;
    this.f64[d + 2] = 0;
    this.f64[d + 3] = 0;
    this.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI] = keep;
    this.u16[s + H_NB_SEGS] = 1;
    this.u16[s + H_PORT] = PORT_INVALID;
    this.u16[s + H_DATA_OFF] = Math.min(this.poolOf(h).headroom, this.u16[s + H_BUF_LEN]!);
  }

  /**
   * Grows the data at the front by `len` bytes (rte_pktmbuf_prepend).
   * @returns heap offset of the new data start, or -1 (nothing changed) when headroom is short.
   */
  prepend(h: number, len: number): number {
    const s = h << MBUF_HALF_SHIFT;
    const off = this.u16[s + H_DATA_OFF]!;
    if (len > off || len < 0) return -1;
    this.u16[s + H_DATA_OFF] = off - len;
    this.u16[s + H_DATA_LEN] += len;
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] += len;
    return this.bufAddr(h) + off - len;
  }

  /**
   * Grows the data at the end of the last segment by `len` bytes (rte_pktmbuf_append).
   * @returns heap offset of the added bytes, or -1 (nothing changed) when tailroom is short.
   */
  append(h: number, len: number): number {
    const last = this.lastSeg(h);
    if (len > this.tailroom(last) || len < 0) return -1;
    const tail = this.mtod(last) + this.dataLen(last);
    this.u16[(last << MBUF_HALF_SHIFT) + H_DATA_LEN] += len;
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] += len;
    return tail;
  }

  /**
   * Removes `len` bytes from the front of the first segment (rte_pktmbuf_adj).
   * @returns heap offset of the new data start, or -1 (nothing changed) when the segment is shorter.
   */
  adj(h: number, len: number): number {
    const s = h << MBUF_HALF_SHIFT;
    if (len > this.u16[s + H_DATA_LEN]! || len < 0) return -1;
    this.u16[s + H_DATA_LEN] -= len;
    this.u16[s + H_DATA_OFF] += len;
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] -= len;
    return this.mtod(h);
  }

  /**
   * Removes `len` bytes from the end of the last segment (rte_pktmbuf_trim).
   * @returns 0, or -1 (nothing changed) when the last segment is shorter.
   */
  trim(h: number, len: number): number {
    const last = this.lastSeg(h);
    if (len > this.dataLen(last) || len < 0) return -1;
    this.u16[(last << MBUF_HALF_SHIFT) + H_DATA_LEN] -= len;
    this.u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] -= len;
    return 0;
  }

  /**
   * Appends chain `tail` to chain `head` (rte_pktmbuf_chain); `tail` is then
   * owned by `head` and freed with it.
   * @returns 0, or -1 (nothing changed) when the segment count would pass 65535.
   */
  chain(head: number, tail: number): number {
    const segs = this.nbSegs(head) + this.nbSegs(tail);
    if (segs > MBUF_MAX_NB_SEGS) return -1;
    const last = this.lastSeg(head);
    this.u32[(last << MBUF_WORD_SHIFT) + W_NEXT] = tail;
    this.u16[(head << MBUF_HALF_SHIFT) + H_NB_SEGS] = segs;
    this.setPktLen(head, this.pktLen(head) + this.pktLen(tail));
    this.setPktLen(tail, this.dataLen(tail));
    return 0;
  }

  /** Copies the packet's bytes (all segments) out. Allocates: for tests and the control plane. */
  read(h: number): Uint8Array {
    const out = new Uint8Array(this.pktLen(h));
    let pos = 0;
    for (let m = h; m !== 0 && pos < out.length; m = this.next(m)) {
      const start = this.mtod(m);
      const len = Math.min(this.dataLen(m), out.length - pos);
      out.set(this.u8.subarray(start, start + len), pos);
      pos += len;
    }
    return out;
  }

  /**
   * Appends `bytes` to the packet (into the last segment).
   * @returns false (nothing changed) when the tailroom is short.
   */
  write(h: number, bytes: Uint8Array): boolean {
    const at = this.append(h, bytes.length);
    if (at < 0) return false;
    this.u8.set(bytes, at);
    return true;
  }

  /**
   * A packet holding `bytes`: a chain of mbufs from `pool`, each filled to its
   * tailroom or to `seg` bytes (tests, benchmarks, control paths; data paths
   * copy in their kernels).
   * @returns the head, or 0 when the pool ran dry or the chain would pass
   * 65535 segments; what it had taken is freed.
   */
  fromBytes(pool: Mempool, bytes: Uint8Array, seg = Infinity): number {
    let head = 0;
    let at = 0;
    while (at < bytes.length || head === 0) {
      const m = pool.alloc();
      if (m === 0) break;
      const n = Math.min(bytes.length - at, this.tailroom(m), seg);
      if (n <= 0 && at < bytes.length) {
        this.free(m);
        break;
      }
      this.write(m, bytes.subarray(at, at + n));
      if (head === 0) head = m;
      else if (this.chain(head, m) !== 0) {
        this.free(m);
        break;
      }
      at += n;
    }
    if (head !== 0 && at >= bytes.length) return head;
    if (head !== 0) this.free(head);
    return 0;
  }

  // ---- references ---------------------------------------------------------

  /**
   * Adds `v` (may be negative) to the reference count (rte_mbuf_refcnt_update).
   * @returns the new count. Throws MbufError on underflow or overflow.
   */
  refcntUpdate(h: number, v: number): number {
    const i = (h << MBUF_HALF_SHIFT) + H_REFCNT;
    const cur = Atomics.load(this.u16, i);
    if (cur === 1) {
      // Sole owner: nobody else can race with us (DPDK's fast path).
      if (v < -1 || v + 1 > 0xffff) throw this.refcntError(h, cur, v);
      Atomics.store(this.u16, i, v + 1);
      return v + 1;
    }
    const old = v >= 0 ? Atomics.add(this.u16, i, v) : Atomics.sub(this.u16, i, -v);
    const now = old + v;
    if (now < 0 || now > 0xffff) {
      Atomics.store(this.u16, i, old);
      throw this.refcntError(h, old, v);
    }
    return now;
  }

  /**
   * Makes `mi` an indirect mbuf that shares `m`'s data (rte_pktmbuf_attach):
   * the direct mbuf holding the data gains a reference and returns to its
   * pool only when the last indirect one is freed or detached.
   * `mi` must be direct, unchained and referenced once.
   */
  attach(mi: number, m: number): void {
    if (!this.isDirect(mi) || this.refcnt(mi) !== 1) {
      throw new MbufError(mi, `mbuf ${fmtHandle(mi)}: attach needs a direct mbuf with refcnt 1 (refcnt ${this.refcnt(mi)})`);
    }
    const md = this.isIndirect(m) ? this.directOf(m) : m;
    this.refcntUpdate(md, 1);
    const u32 = this.u32;
    const ri = mi << MBUF_WORD_SHIFT;
    const rm = m << MBUF_WORD_SHIFT;
    const si = mi << MBUF_HALF_SHIFT;
    const sm = m << MBUF_HALF_SHIFT;
    u32[ri + W_BUF_ADDR] = u32[rm + W_BUF_ADDR]!;
    this.u16[si + H_BUF_LEN] = this.u16[sm + H_BUF_LEN]!;
    this.u16[si + H_DATA_OFF] = this.u16[sm + H_DATA_OFF]!;
    this.u16[si + H_DATA_LEN] = this.u16[sm + H_DATA_LEN]!;
    this.u16[si + H_PORT] = this.u16[sm + H_PORT]!;
    this.u16[si + H_VLAN_TCI] = this.u16[sm + H_VLAN_TCI]!;
    this.u16[si + H_NB_SEGS] = 1;
    u32[ri + W_TSO_VLAN_OUTER] = u32[rm + W_TSO_VLAN_OUTER]!;
    u32[ri + W_TX_OFFLOAD] = u32[rm + W_TX_OFFLOAD]!;
    u32[ri + W_HASH] = u32[rm + W_HASH]!;
    u32[ri + W_PKT_TYPE] = u32[rm + W_PKT_TYPE]!;
    u32[ri + W_OL_FLAGS] = u32[rm + W_OL_FLAGS]!;
    u32[ri + W_OL_FLAGS_HI] = u32[rm + W_OL_FLAGS_HI]! | OlFlagsHi.INDIRECT;
    u32[ri + W_NEXT] = 0;
    u32[ri + W_PKT_LEN] = this.u16[sm + H_DATA_LEN]!;
    u32[ri + W_DIRECT] = md;
  }

  /**
   * Gives an indirect mbuf its own buffer back (rte_pktmbuf_detach) and drops
   * its reference on the direct one, freeing that when it was the last.
   */
  detach(mi: number): void {
    if (!this.isIndirect(mi)) return;
    const mp = this.poolOf(mi);
    const md = this.directOf(mi);
    const r = mi << MBUF_WORD_SHIFT;
    const s = mi << MBUF_HALF_SHIFT;
    this.u32[r + W_BUF_ADDR] = mp.bufAddrOf(mi);
    this.u16[s + H_BUF_LEN] = mp.bufLen;
    this.u16[s + H_DATA_OFF] = mp.headroom;
    this.u16[s + H_DATA_LEN] = 0;
    this.u32[r + W_OL_FLAGS_HI] &= ~OlFlagsHi.INDIRECT;
    this.u32[r + W_DIRECT] = 0;
    const last = this.prefreeSeg(md);
    if (last !== 0) this.poolOf(last).put(last);
  }

  /**
   * Makes a copy of the packet's metadata that shares its data: a chain of
   * indirect mbufs from `mp`, one per segment (rte_pktmbuf_clone).
   * @returns the clone's head, or 0 (nothing changed) when `mp` runs out.
   */
  clone(md: number, mp: Mempool): number {
    const mc = mp.alloc();
    if (mc === 0) return 0;
    let mi = mc;
    let m = md;
    for (;;) {
      this.attach(mi, m);
      m = this.next(m);
      if (m === 0) break;
      const seg = mp.alloc();
      if (seg === 0) {
        this.setPktLen(mc, 0);
        this.free(mc);
        return 0;
      }
      this.u32[(mi << MBUF_WORD_SHIFT) + W_NEXT] = seg;
      mi = seg;
    }
    this.setPktLen(mc, this.pktLen(md));
    this.u16[(mc << MBUF_HALF_SHIFT) + H_NB_SEGS] = this.nbSegs(md);
    return mc;
  }

  // ---- free ---------------------------------------------------------------

  /**
   * Drops this owner's reference to one segment (rte_pktmbuf_prefree_seg).
   * @returns the handle when it must go back to its pool (cleaned: refcnt 0,
   * unchained, direct), or 0 when other references remain.
   */
  prefreeSeg(h: number): number {
    const i = (h << MBUF_HALF_SHIFT) + H_REFCNT;
    const ref = this.u16[i]!;
    if (ref !== 1) {
      if (ref === 0) throw new MbufError(h, `mbuf ${fmtHandle(h)}: freed with refcnt 0 (double free, or not from a pool)`);
      if (Atomics.sub(this.u16, i, 1) !== 1) return 0;
    }
    const r = h << MBUF_WORD_SHIFT;
    if ((this.u32[r + W_OL_FLAGS_HI]! & OlFlagsHi.INDIRECT) !== 0) this.detach(h);
    this.u32[r + W_NEXT] = 0;
    this.u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS] = 1;
    this.u16[i] = 0;
    return h;
  }

  /** Frees one segment, ignoring its chain (rte_pktmbuf_free_seg). */
  freeSeg(h: number): void {
    const m = this.prefreeSeg(h);
    if (m !== 0) this.poolOf(m).put(m);
  }

  /** Frees a packet and every segment chained to it (rte_pktmbuf_free). 0 is ignored. */
  free(h: number): void {
    while (h !== 0) {
      const next = this.next(h);
      this.freeSeg(h);
      h = next;
    }
  }

  /**
   * Frees `n` packets from `objs[off..)` with their chains (rte_pktmbuf_free_bulk):
   * segments go back with one putBulk per run of up to 64 from the same pool,
   * never one put each (what the i40e bulk-free study found). Packets of direct mbufs
   * go in one wasm call; from the first clone on, TypeScript takes over.
   */
  freeBulk(objs: Burst, n: number, off = 0): void {
    if (n <= 0) return;
    const done = this.freeDirect(this.lc, objs.heapOffset + off * 4, n);
    if (done !== n) this.freeBulkRest(objs, n, off, done);
  }

  /**
   * Frees `n` single segments from `objs[off..)`, each as rte_pktmbuf_free_seg
   * (their chains are not followed: a descriptor-ring driver holds every
   * segment in its own slot), in runs of up to 64 per pool: the non-fast-free
   * reclaim of i40e's tx path.
   */
  freeSegBulk(objs: Burst, n: number, off = 0): void {
    try {
      for (let i = 0; i < n; i++) {
        const m = objs[off + i]!;
        if (this.prefreeSeg(m) !== 0) this.pend(m);
      }
    } finally {
      this.flushRun();
    }
  }

  /** After mbufFreeBulk (or a kernel that ends with it, nullTx) freed `done` of `n` packets: the rest, or the refusal it reported. */
  freeBulkRest(objs: Burst, n: number, off: number, done: number): void {
    if (done < 0) {
      const at = done & 0x7fffffff;
      throw new MbufError(objs[off + at]!, `mbuf ${fmtHandle(objs[off + at]!)}: its pool took back more mbufs than it holds (double free or foreign handle)`);
    }
    if (done < n) this.freeBulkSlow(objs, n - done, off + done);
  }

  /**
   * The TypeScript twin of the mbufFreeBulk kernel (mbuf.as.ts), same
   * signature (`lc`: the caller's lcore block, which this thread's pools
   * already know; `objs`: the burst's heap offset): frees whole packets of
   * direct mbufs, segment by segment as rte_pktmbuf_prefree_seg does, in
   * runs of up to 64 per pool; stops before the first packet with an
   * indirect segment, a segment at refcnt 0, of no pool or of a debug pool.
   * @returns how many packets it freed.
   */
  freeBulkDirect(_lc: number, objs: number, n: number): number {
    const u32 = this.u32;
    const u16 = this.u16;
    const o = objs >>> 2;
    let p = this.freeSimple(o, n);
    for (; p < n; p++) {
      const h = u32[o + p]!;
      let ok = true;
      for (let s = h; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
        const mp = this.poolOrNull(s);
        if ((u32[(s << MBUF_WORD_SHIFT) + W_OL_FLAGS_HI]! & OlFlagsHi.INDIRECT) !== 0 || u16[(s << MBUF_HALF_SHIFT) + H_REFCNT] === 0 || mp === null || mp.debug) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
      for (let s = h; s !== 0; ) {
        const r = s << MBUF_WORD_SHIFT;
        const next = u32[r + W_NEXT]!;
        const ref = (s << MBUF_HALF_SHIFT) + H_REFCNT;
        if (u16[ref] !== 1 && Atomics.sub(u16, ref, 1) !== 1) {
          s = next; // another reference remains
          continue;
        }
        u32[r + W_NEXT] = 0;
        u16[(s << MBUF_HALF_SHIFT) + H_NB_SEGS] = 1;
        u16[ref] = 0;
        this.pend(s);
        s = next;
      }
    }
    this.flushRun();
    return p;
  }

  /**
   * The twin of the kernel's freeSimple: the leading packets that are one
   * direct segment referenced once, of the first packet's pool, straight onto
   * this lcore's cache, as many as fit under the flush threshold, at most 64.
   */
  private freeSimple(o: number, n: number): number {
    const u32 = this.u32;
    const first = u32[o]!;
    if (first === 0) return 0;
    const mp = this.poolOrNull(first);
    if (mp === null || mp.debug) return 0;
    const m = Math.min(mp.cacheRoom(n), FREE_PENDING_SZ);
    const poolId = mp.id;
    let i = 0;
    for (; i < m; i++) {
      const h = u32[o + i]!;
      const r = h << MBUF_WORD_SHIFT;
      const w0 = u32[r + W_DATA_OFF_REFCNT]!;
      if (
        w0 >>> 16 !== 1 || // refcnt
        (u32[r + W_NB_SEGS_PORT]! & 0xffff) !== 1 ||
        u32[r + W_NEXT] !== 0 ||
        (u32[r + W_OL_FLAGS_HI]! & OlFlagsHi.INDIRECT) !== 0 ||
        u32[r + W_BUF_LEN_POOL]! >>> 16 !== poolId
      ) {
        break;
      }
      u32[r + W_DATA_OFF_REFCNT] = w0 & 0xffff; // refcnt 0: back in the pool
    }
    if (i > 0) mp.cachePush(u32, i, o);
    return i;
  }

  /** freeBulk for chains, clones, shared mbufs and mixed pools: segment by segment. */
  private freeBulkSlow(objs: Burst, n: number, off: number): void {
    try {
      for (let i = 0; i < n; i++) {
        let m = objs[off + i]!;
        while (m !== 0) {
          const next = this.next(m);
          if (this.prefreeSeg(m) !== 0) this.pend(m);
          m = next;
        }
      }
    } finally {
      // Also on a thrown double free: what was already released still goes back.
      this.flushRun();
    }
  }

  /** The pool of the pending run, and its length (rte_pktmbuf_free_bulk's pending array). */
  private runPool: Mempool | undefined;
  private runLen = 0;

  /** Adds a released segment to the pending run: one putBulk per run of up to 64 of one pool. */
  private pend(s: number): void {
    const mp = this.poolOf(s);
    if (mp !== this.runPool || this.runLen === FREE_PENDING_SZ) {
      this.flushRun();
      this.runPool = mp;
    }
    this.pending[this.runLen++] = s;
  }

  private flushRun(): void {
    const n = this.runLen;
    if (n === 0) return;
    this.runLen = 0; // first: a putBulk that throws leaves no stale run behind
    this.runPool!.putBulk(this.pending, n);
  }

  /** The pool mbuf `h` belongs to, as seen from this thread. */
  poolOf(h: number): Mempool {
    const id = this.u16[(h << MBUF_HALF_SHIFT) + H_POOL]!;
    return this.pools[id] ?? this.openPool(id, h);
  }

  /** poolOf without the error: null for a handle of no pool (the general path reports it). */
  private poolOrNull(h: number): Mempool | null {
    const id = this.u16[(h << MBUF_HALF_SHIFT) + H_POOL]!;
    const mp = this.pools[id] ?? Mempool.byId(this.heap, id);
    return mp && mp.owns(h) ? mp : null;
  }

  private openPool(id: number, h: number): Mempool {
    const mp = Mempool.byId(this.heap, id);
    if (!mp || !mp.owns(h)) throw new MbufError(h, `mbuf ${fmtHandle(h)}: not an mbuf of any pool (pool id ${id})`);
    this.pools[id] = mp;
    return mp;
  }

  private refcntError(h: number, cur: number, v: number): MbufError {
    const what = cur + v < 0 ? 'underflow' : 'overflow';
    return new MbufError(h, `mbuf ${fmtHandle(h)}: refcnt ${what} (${cur} ${v < 0 ? '-' : '+'} ${Math.abs(v)})`);
  }

  // ---- more fields --------------------------------------------------------

  /** The rx timestamp in ns (DPDK's RX_TIMESTAMP dynamic field), low u32 word; valid with OlFlags.RX_TIMESTAMP. */
  timestampLo(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_TIMESTAMP_LO]!;
  }
  /** The rx timestamp's high u32 word. */
  timestampHi(h: number): number {
    return this.u32[(h << MBUF_WORD_SHIFT) + W_TIMESTAMP_HI]!;
  }
  /** Sets the rx timestamp (ns) from its u32 words; the caller sets OlFlags.RX_TIMESTAMP. */
  setTimestamp(h: number, lo: number, hi: number): void {
    const r = h << MBUF_WORD_SHIFT;
    this.u32[r + W_TIMESTAMP_LO] = lo;
    this.u32[r + W_TIMESTAMP_HI] = hi;
  }
  /**
   * Sets refcnt to 0, as a pool holds its mbufs, with a plain store: for an
   * mbuf this thread owns alone that goes straight back to its pool (fast
   * free, which skips prefreeSeg).
   */
  clearRefcnt(h: number): void {
    this.u16[(h << MBUF_HALF_SHIFT) + H_REFCNT] = 0;
  }

  // ---- bursts -------------------------------------------------------------

  /** Total pktLen of `burst[0..n)`, for a queue's byte counters: one wasm call (mbufPktLenSum) on the wasm datapath. */
  pktLenSum(burst: Burst, n: number): number {
    return this.lenSum(burst.heapOffset, n);
  }
  /** The twin of the mbufPktLenSum kernel (mbuf.as.ts), same signature: `objs` is the burst's heap offset. */
  pktLenSumTs(objs: number, n: number): number {
    const u32 = this.u32;
    const o = objs >>> 2;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += u32[(u32[o + i]! << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    return sum;
  }
}
