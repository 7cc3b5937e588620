/**
 * Latency, loss and order on every packet: a stamper writes a probe
 * signature (stream, sequence number, tx time; probe.as.ts) into each packet
 * at tx, a checker reads it at rx into per-stream counts and an HDR latency
 * histogram (hist.ts). Both keep their state in the heap and run as one
 * kernel call per burst (or the twins, probe.twin.ts); the timestamps are
 * nowNs() (eal/clock.ts), one clock on every lcore and process, read once
 * per burst.
 *
 *     const tx = ProbeTx.create(heap, 0);     // stream 0
 *     const rx = ProbeRx.create(heap, { streams: 1 });
 *     tx.stamp(burst, n); port.txBurst(...);   // sender lcore
 *     n = port.rxBurst(...); rx.check(burst, n); // receiver lcore
 *     rx.stream(0)                             // { received, lost, reordered, latency… }
 *
 * The signature is the last 16 bytes of each packet's first segment, and
 * leaves UDP/TCP checksums valid (probe.as.ts says how).
 */
import { ArgError } from '../errors.js';
import type { Burst, Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import { nowNs } from '../eal/clock.js';
import { histBytes, histInit, LatencyHistogram, type HistogramOptions, type LatencySummary } from './hist.js';
import {
  PROBE_RX_SIZE,
  PROBE_SIG_LEN,
  PROBE_STREAM_SIZE,
  PROBE_TX_SIZE,
  PRX_D_FOREIGN,
  PRX_D_NOW,
  PRX_D_PROBES,
  PRX_D_SKEW,
  PRX_W_NB_STREAMS,
  PRX_W_STREAMS,
  PST_D_BASE,
  PST_D_DUPS,
  PST_D_LATE,
  PST_D_MAX_SEQ,
  PST_D_RECEIVED,
  PST_D_REORDERED,
  PST_W_HIST,
  PST_W_STARTED,
  PTX_D_NOW,
  PTX_D_SEQ,
  PTX_D_SHORT,
  PTX_D_STAMPED,
  PTX_W_STREAM,
} from './probe-layout.js';
import { probeOps, type ProbeOps } from './probe.twin.js';

export { PROBE_SIG_LEN };

/** Stream ids travel in 24 bits. */
export const PROBE_MAX_STREAMS = 1 << 24;

/** One stream's counts at a receiver (or merged over several). */
export interface ProbeStreamStats {
  /** The stream id. */
  stream: number;
  /** Distinct probes received. */
  received: number;
  /** Probes never received: sequence numbers between the lowest and highest seen that did not arrive, plus any the sender sent after the highest (when `sent` was given). */
  lost: number;
  /** Probes received more than once (counted once in `received`). */
  duplicates: number;
  /** Probes that arrived after one with a higher sequence number. */
  reordered: number;
  /** Of the reordered, those more than 1024 behind (a duplicate that old is counted as new). */
  late: number;
  /** Lowest sequence number seen (-1: none). */
  firstSeq: number;
  /** Highest sequence number seen (-1: none). */
  lastSeq: number;
  /** The latency distribution, ns. */
  latency: LatencySummary;
}

/** A stamper: one sending stream's sequence numbers and its tx time, in a heap block. */
export class ProbeTx {
  private readonly ops: ProbeOps;
  private readonly f64: Float64Array;
  private readonly d: number;
  private readonly lc: number;

  private constructor(
    private readonly heap: Heap,
    /** Heap offset of the block (hand it to a worker: ProbeTx.attach). */
    readonly block: number,
  ) {
    this.ops = probeOps(heap);
    this.f64 = heap.f64;
    this.d = block >>> 3;
    this.lc = heap.lcore;
  }

  /** A stamper for stream `stream` (0 .. 2^24-1), starting at sequence number 0. */
  static create(heap: Heap, stream: number): ProbeTx {
    if (!Number.isInteger(stream) || stream < 0 || stream >= PROBE_MAX_STREAMS) throw new ArgError(`probe: stream ${stream}: must be an integer in [0, ${PROBE_MAX_STREAMS - 1}]`);
    const block = heap.reserve(PROBE_TX_SIZE, 64, 'probe stamper');
    heap.u32[(block >>> 2) + PTX_W_STREAM] = stream;
    return new ProbeTx(heap, block);
  }

  /** The stamper whose block is at `block` (made by create, maybe on another thread). */
  static attach(heap: Heap, block: number): ProbeTx {
    return new ProbeTx(heap, block);
  }

  /** Stamps `burst[0..n)` with consecutive sequence numbers and the time now. @returns how many were long enough (16 bytes) to carry one. */
  stamp(burst: Burst, n: number): number {
    return this.stampAt(burst, n, nowNs());
  }

  /** As stamp, with a tx time the caller read (ns of nowNs()'s clock). */
  stampAt(burst: Burst, n: number, txNs: number): number {
    this.f64[this.d + PTX_D_NOW] = txNs;
    return this.ops.stamp(this.block, this.lc, burst.heapOffset, n);
  }

  /** Numbers the next probe `seq` (a stream split over lcores: each part stamps the stream's numbers of its packets). */
  seek(seq: number): void {
    this.f64[this.d + PTX_D_SEQ] = seq;
  }

  /** Probes stamped so far (the next sequence number). */
  get sent(): number {
    return this.f64[this.d + PTX_D_SEQ]!;
  }

  /** Packets too short to stamp, sent without a probe. */
  get short(): number {
    return this.f64[this.d + PTX_D_SHORT]!;
  }

  /** Packets stamped. */
  get stamped(): number {
    return this.f64[this.d + PTX_D_STAMPED]!;
  }

  /** The stream id. */
  get stream(): number {
    return this.heap.u32[(this.block >>> 2) + PTX_W_STREAM]!;
  }
}

/** How a checker is made. */
export interface ProbeRxOptions {
  /** Streams tracked, ids 0 .. streams-1 (probes of others count as foreign). */
  streams: number;
  /** Each stream's histogram shape (default 1 ns .. 100 s, 3 significant digits: 220 KiB a stream). */
  histogram?: HistogramOptions;
}

/** A checker: one receiving lcore's per-stream loss, order and latency, in the heap. */
export class ProbeRx {
  private readonly ops: ProbeOps;
  private readonly d: number;
  private readonly lc: number;
  /** Streams tracked. */
  readonly nbStreams: number;
  private readonly streams: number;

  private constructor(
    private readonly heap: Heap,
    /** Heap offset of the block (hand it to a worker: ProbeRx.attach). */
    readonly block: number,
  ) {
    this.ops = probeOps(heap);
    this.d = block >>> 3;
    this.lc = heap.lcore;
    this.nbStreams = heap.u32[(block >>> 2) + PRX_W_NB_STREAMS]!;
    this.streams = heap.u32[(block >>> 2) + PRX_W_STREAMS]!;
  }

  /** Bytes a checker with these options takes in the heap. */
  static bytes(opts: ProbeRxOptions): number {
    return PROBE_RX_SIZE + opts.streams * (PROBE_STREAM_SIZE + histBytes(opts.histogram) + 64);
  }

  /** A checker with empty counts (control plane). */
  static create(heap: Heap, opts: ProbeRxOptions): ProbeRx {
    const n = opts.streams;
    if (!Number.isInteger(n) || n < 1 || n > PROBE_MAX_STREAMS) throw new ArgError(`probe: streams=${n}: must be an integer in [1, ${PROBE_MAX_STREAMS}]`);
    const hb = histBytes(opts.histogram);
    const block = heap.reserve(PROBE_RX_SIZE, 64, 'probe checker');
    const streams = heap.reserve(n * PROBE_STREAM_SIZE, 64, 'probe checker streams');
    heap.u32[(block >>> 2) + PRX_W_STREAMS] = streams;
    heap.u32[(block >>> 2) + PRX_W_NB_STREAMS] = n;
    for (let s = 0; s < n; s++) {
      const h = heap.reserve(hb, 64, 'probe latency histogram');
      histInit(heap.buffer, h, opts.histogram);
      heap.u32[((streams + s * PROBE_STREAM_SIZE) >>> 2) + PST_W_HIST] = h;
    }
    return new ProbeRx(heap, block);
  }

  /** The checker whose block is at `block` (made by create, maybe on another thread). */
  static attach(heap: Heap, block: number): ProbeRx {
    return new ProbeRx(heap, block);
  }

  /** Checks `burst[0..n)` against the time now; packets are not changed. @returns how many carried a probe of a tracked stream. */
  check(burst: Burst, n: number): number {
    return this.checkAt(burst, n, nowNs());
  }

  /** Receives a burst of at most `n` from `rxq`, checks it and frees it: a sender's loopback drained. @returns how many came */
  receive(rxq: { rxBurst(burst: Burst, n: number): number }, burst: Burst, n: number, mbufs: Pick<Mbufs, 'freeBulk'>): number {
    const got = rxq.rxBurst(burst, n);
    if (got > 0) {
      this.check(burst, got);
      mbufs.freeBulk(burst, got);
    }
    return got;
  }

  /** As check, with an rx time the caller read. */
  checkAt(burst: Burst, n: number, rxNs: number): number {
    this.heap.f64[this.d + PRX_D_NOW] = rxNs;
    return this.ops.check(this.block, this.lc, burst.heapOffset, n);
  }

  /** Packets that carried a probe of a tracked stream. */
  get probes(): number {
    return this.heap.f64[this.d + PRX_D_PROBES]!;
  }

  /** Packets that did not. */
  get foreign(): number {
    return this.heap.f64[this.d + PRX_D_FOREIGN]!;
  }

  /** Probes stamped after they were received: the sender's clock is not this one (left out of the histograms). */
  get skew(): number {
    return this.heap.f64[this.d + PRX_D_SKEW]!;
  }

  /** Stream `s`'s latency histogram, in the heap. */
  histogram(s: number): LatencyHistogram {
    return new LatencyHistogram(this.heap.buffer, this.heap.u32[(this.rec(s) >>> 2) + PST_W_HIST]!);
  }

  /** Whether a probe of stream `s` arrived. */
  seen(s: number): boolean {
    return this.heap.u32[(this.rec(s) >>> 2) + PST_W_STARTED] === 1;
  }

  /**
   * Stream `s`'s counts. `sent`, the sender's count (ProbeTx.sent), makes
   * losses after the last probe received count too.
   */
  stream(s: number, sent?: number): ProbeStreamStats {
    return probeStreamStats([this], s, sent);
  }

  private rec(s: number): number {
    if (!Number.isInteger(s) || s < 0 || s >= this.nbStreams) throw new ArgError(`probe: stream ${s}: this checker tracks 0 .. ${this.nbStreams - 1}`);
    return this.streams + s * PROBE_STREAM_SIZE;
  }

  /** @internal The raw record of stream `s` (for merging). */
  raw(s: number): { started: boolean; base: number; max: number; received: number; dups: number; reordered: number; late: number } {
    const r = this.rec(s);
    const f = this.heap.f64;
    const d = r >>> 3;
    return {
      started: this.heap.u32[(r >>> 2) + PST_W_STARTED] === 1,
      base: f[d + PST_D_BASE]!,
      max: f[d + PST_D_MAX_SEQ]!,
      received: f[d + PST_D_RECEIVED]!,
      dups: f[d + PST_D_DUPS]!,
      reordered: f[d + PST_D_REORDERED]!,
      late: f[d + PST_D_LATE]!,
    };
  }
}

/**
 * Stream `s` over several checkers (one per receiving lcore: its queues'
 * share of the stream): histograms merged, counts added, the lowest and
 * highest sequence numbers of all. Reordering between two lcores' shares is
 * not seen (each checker sees its own order). `sent` as in ProbeRx.stream.
 */
export function probeStreamStats(rxs: readonly ProbeRx[], s: number, sent?: number): ProbeStreamStats {
  let started = false;
  let base = Infinity;
  let max = -Infinity;
  let received = 0;
  let duplicates = 0;
  let reordered = 0;
  let late = 0;
  let hist: LatencyHistogram | null = null;
  for (const rx of rxs) {
    const r = rx.raw(s);
    const h = rx.histogram(s);
    if (hist === null) hist = LatencyHistogram.emptyLike(h);
    hist.merge(h);
    if (!r.started) continue;
    started = true;
    base = Math.min(base, r.base);
    max = Math.max(max, r.max);
    received += r.received;
    duplicates += r.dups;
    reordered += r.reordered;
    late += r.late;
  }
  let expected = started ? max - base + 1 : 0;
  // A stamper numbers from 0: with its count, probes after the last received count as lost too.
  if (sent !== undefined) expected = Math.max(started ? max + 1 : 0, sent);
  return {
    stream: s,
    received,
    lost: Math.max(0, expected - received),
    duplicates,
    reordered,
    late,
    firstSeq: started ? base : -1,
    lastSeq: started ? max : -1,
    latency: (hist ?? LatencyHistogram.detached()).summary(),
  };
}
