/**
 * Burst-level operations for user code: the built-in engines' per-burst
 * work, one call over a whole burst in place (a WebAssembly kernel on the
 * `wasm` datapath, its TypeScript twin on `ts`), chosen once when the ops
 * are made, never per call.
 */
import { ArgError } from '../errors.js';
import type { Burst, Heap } from '../eal/heap.js';
import { badBurst } from '../ethdev/ethdev.js';
import { fiveTupleSwapOps } from '../fwd/5tswap.twin.js';
import { csumOps } from '../fwd/csum.twin.js';
import type { EngineKernel } from '../fwd/engine.js';
import {
  FS_RX_BAD_IP_CSUM,
  FS_RX_BAD_L4_CSUM,
  FWD_ENGINE_SIZE,
  FWD_STREAM_SIZE,
  FWD_STREAM_STATS_SIZE,
  FWDE_F_CSUM_NO_MAC,
  FWDE_W_FLAGS,
  FWDE_W_KEEP_HI,
  FWDS_W_ENGINE,
  FWDS_W_MAC,
  FWDS_W_STATS,
} from '../fwd/fwd-layout.js';
import { macOps } from '../fwd/mac.twin.js';
import { macswapOps } from '../fwd/macswap.twin.js';
import { defaultVariants } from '../fwd/variants.js';
import { Mbufs } from '../mem/mbuf.js';
import { mbufCopyOps, type MbufCopyKernel } from '../mem/mbuf.twin.js';
import type { Mempool } from '../mem/mempool.js';

/** The 12 address bytes `macRewrite` writes (destination, then source) as the kernel takes them. Make once per port pair. */
export type MacAddrs = Uint32Array & {
  /** Three words: 12 bytes. */
  readonly length: 3;
};

/** Bad checksums `BurstOps.checksum` found on arrival since the ops were made (testpmd's csum counters). */
export interface ChecksumCounts {
  /** Packets with a bad IPv4 header checksum. */
  badIp: number;
  /** Packets with a bad UDP or TCP checksum. */
  badL4: number;
}

/**
 * Per-burst operations over one heap, for one thread (make them on the lcore
 * that uses them: they keep this thread's kernel instance). Every operation
 * takes a burst made by `heap.burst(n)` (or an lcore's `ctx.burst(n)`) and
 * the count of packets in it, and throws ArgError, changing nothing, when
 * the burst is not in the heap or `n` exceeds its length.
 */
export class BurstOps {
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly lc: number;
  private readonly mb: Mbufs;
  /** The engines' kernels (or twins), chosen once. */
  private readonly macFwd: EngineKernel;
  private readonly macswapK: EngineKernel;
  private readonly fiveTupleSwapK: EngineKernel;
  private readonly csumK: EngineKernel;
  private readonly copyK: MbufCopyKernel;
  /** An engine block with no tx flags, every flag bit kept and VLAN ids 0 (what macswap and 5tswap read). */
  private readonly engine: number;
  /** The same with csum's `mac-swap off`. */
  private readonly csumNoMacEngine: number;
  /** A stream block on `engine` (mac's and csum's `mac-swap on`), one on `csumNoMacEngine`; both count into `stats`. */
  private readonly macStream: number;
  private readonly csumNoMacStream: number;
  private readonly stats: number;

  constructor(private readonly heap: Heap) {
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.lc = heap.lcore;
    this.mb = new Mbufs(heap);
    this.macFwd = macOps(heap);
    this.macswapK = macswapOps(heap, defaultVariants().macswap);
    this.fiveTupleSwapK = fiveTupleSwapOps(heap, this.mb);
    this.csumK = csumOps(heap, this.mb);
    this.copyK = mbufCopyOps(heap);
    this.engine = this.zeroed(FWD_ENGINE_SIZE, 'burst ops engine');
    this.u32[(this.engine >>> 2) + FWDE_W_KEEP_HI] = 0xffffffff;
    this.csumNoMacEngine = this.zeroed(FWD_ENGINE_SIZE, 'burst ops csum engine');
    this.u32[(this.csumNoMacEngine >>> 2) + FWDE_W_KEEP_HI] = 0xffffffff;
    this.u32[(this.csumNoMacEngine >>> 2) + FWDE_W_FLAGS] = FWDE_F_CSUM_NO_MAC;
    this.stats = this.zeroed(FWD_STREAM_STATS_SIZE, 'burst ops counters');
    this.macStream = this.streamBlock(this.engine);
    this.csumNoMacStream = this.streamBlock(this.csumNoMacEngine);
  }

  /** The address words for `macRewrite`: `dst` then `src`, 6 bytes each. Setup, not per burst (allocates). */
  macAddrs(dst: Uint8Array, src: Uint8Array): MacAddrs {
    const b = new Uint8Array(12);
    b.set(dst.subarray(0, 6), 0);
    b.set(src.subarray(0, 6), 6);
    const v = new DataView(b.buffer);
    return Uint32Array.of(v.getUint32(0, true), v.getUint32(4, true), v.getUint32(8, true)) as MacAddrs;
  }

  /**
   * testpmd's macfwd over `burst[0..n)`: writes each packet's Ethernet
   * destination and source from `addrs`, clears its rx offload flags, and
   * sets l2_len 14, l3_len 20 and the VLAN tags to 0 (the tx fields a NIC reads).
   * One call of the mac engine's kernel (or its twin on `ts`) per burst; allocates nothing.
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  macRewrite(burst: Burst, n: number, addrs: MacAddrs): void {
    this.check('macRewrite', burst, n);
    this.setAddrs(this.macStream, addrs);
    this.macFwd(this.macStream, this.lc, burst.heapOffset, n);
  }

  /**
   * testpmd's macswap over `burst[0..n)`: swaps each packet's Ethernet
   * source and destination, clears its rx offload flags and sets l2_len 14,
   * l3_len 20 (as do_macswap). One kernel call per burst; allocates nothing.
   * Packets of one burst must not share data (clones of one another).
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  macSwap(burst: Burst, n: number): void {
    this.check('macSwap', burst, n);
    this.macswapK(this.engine, this.lc, burst.heapOffset, n);
  }

  /**
   * testpmd's 5tswap over `burst[0..n)`: swaps source and destination of
   * each layer it parses (Ethernet, IPv4/IPv6, UDP/TCP ports), stopping at
   * the first it does not know; checksums stay valid. Sets the tx fields to
   * the parsed header lengths. One kernel call per burst; never throws on
   * packet contents, allocates nothing.
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  fiveTupleSwap(burst: Burst, n: number): void {
    this.check('fiveTupleSwap', burst, n);
    this.fiveTupleSwapK(this.engine, this.lc, burst.heapOffset, n);
  }

  /**
   * testpmd's csum engine in software over `burst[0..n)`: recomputes each
   * IPv4 header checksum and each UDP/TCP checksum (an IPv4 UDP checksum of
   * 0 stays 0; IPv4 fragments and datagrams beyond the first segment are
   * left alone), counts packets that arrived with a bad one (`checksumCounts`),
   * clears the rx flags and sets TX_IPV4/TX_IPV6 and the parsed header
   * lengths. With `addrs` it also writes the Ethernet addresses as
   * `macRewrite` does (testpmd's `csum mac-swap on`); without, they stay.
   * One kernel call per burst; never throws on packet contents, allocates nothing.
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  checksum(burst: Burst, n: number, addrs?: MacAddrs): void {
    this.check('checksum', burst, n);
    let s = this.csumNoMacStream;
    if (addrs !== undefined) {
      s = this.macStream;
      this.setAddrs(s, addrs);
    }
    this.csumK(s, this.lc, burst.heapOffset, n);
  }

  /** What `checksum` found bad on arrival, summed since these ops were made. Allocates: not per burst. */
  checksumCounts(): ChecksumCounts {
    const f = this.stats >>> 3;
    return { badIp: this.f64[f + FS_RX_BAD_IP_CSUM]!, badL4: this.f64[f + FS_RX_BAD_L4_CSUM]! };
  }

  /**
   * rte_pktmbuf_copy over a burst: allocates `n` mbufs from `pool` into
   * `dst[0..n)` and copies packet `src[i]` (every segment, into one) with
   * its metadata (port, lengths, flags less INDIRECT/EXTERNAL, packet type,
   * tx fields, VLAN tags, hash, timestamp) into `dst[i]`. The sources are
   * unchanged and still the caller's; the copies are the caller's too.
   * One allocation and one copy kernel call per burst; allocates nothing on the JS heap.
   * @returns n, or 0 (nothing allocated) when `pool` holds fewer than `n` mbufs.
   * @throws ArgError, nothing allocated, when a burst is not in the heap or
   *   shorter than `n`, the two overlap, or a packet is longer than one mbuf of `pool` holds.
   */
  copy(src: Burst, dst: Burst, n: number, pool: Mempool): number {
    this.check('copy src', src, n);
    this.check('copy dst', dst, n);
    // The allocation writes dst: sources under it would be lost.
    if (src.heapOffset < dst.heapOffset + n * 4 && dst.heapOffset < src.heapOffset + n * 4 && n > 0) throw new ArgError('copy: src and dst bursts overlap');
    if (n <= 0) return 0;
    if (pool.allocBulk(dst, n) === 0) return 0;
    const done = this.copyK(src.heapOffset, dst.heapOffset, n);
    if (done === n) return n;
    const h = src[done]!;
    const len = this.mb.pktLen(h);
    this.mb.freeBulk(dst, n);
    throw new ArgError(`copy: packet ${done} (${len} bytes) does not fit one mbuf of pool ${pool.name} (${pool.bufLen - pool.headroom} bytes of data room)`);
  }

  private check(what: string, burst: Burst, n: number): void {
    // n as a u32 in a kernel: a negative or fractional count would run past the burst.
    if (burst.heapBuffer !== this.heap.buffer || !Number.isInteger(n) || n < 0 || n > burst.length) throw badBurst(what, burst, n, this.heap.buffer);
  }

  private setAddrs(s: number, addrs: MacAddrs): void {
    const w = (s >>> 2) + FWDS_W_MAC;
    this.u32[w] = addrs[0]!;
    this.u32[w + 1] = addrs[1]!;
    this.u32[w + 2] = addrs[2]!;
  }

  private zeroed(bytes: number, what: string): number {
    const at = this.heap.reserve(bytes, 64, what);
    this.u32.fill(0, at >>> 2, (at + bytes) >>> 2);
    return at;
  }

  private streamBlock(engine: number): number {
    const s = this.zeroed(FWD_STREAM_SIZE, 'burst ops stream');
    this.u32[(s >>> 2) + FWDS_W_ENGINE] = engine;
    this.u32[(s >>> 2) + FWDS_W_STATS] = this.stats;
    return s;
  }
}
