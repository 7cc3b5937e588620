/**
 * Latency histograms: HdrHistogram's log-linear buckets in a block of the
 * heap (hist.record.ts), filled by the probe checker's kernel (hist.as.ts)
 * or its twin (histRecordTwin), with no allocation per sample. 1 ns to 100 s
 * at 3 significant digits is 28 115 buckets (220 KiB); fewer `bits` trade
 * precision for memory (bits 7: 1 %, 2 014 buckets, 16 KiB).
 *
 * Percentiles follow HdrHistogram: the value at percentile p is the highest
 * value of the bucket where the cumulative count first reaches
 * ceil(p/100 · count), capped at the exact max. Histograms of the same shape
 * merge by adding buckets (one per lcore, merged on the main thread).
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { LAT_HIST_HEADER, LH_D_COUNT, LH_D_COUNTS, LH_D_MAX, LH_D_MIN, LH_D_OVERFLOW, LH_D_SUM, LH_W_BITS, LH_W_NB_COUNTS } from './hist-layout.js';

/** The shape of a histogram. */
export interface HistogramOptions {
  /** Significant binary digits, 4..16 (default 11: 3 significant decimal digits). */
  bits?: number;
  /** The largest value kept apart from the overflow, in ns (default 100 s). */
  maxNs?: number;
}

/** Percentiles of a latency distribution, in nanoseconds. */
export interface LatencySummary {
  /** Samples. */
  count: number;
  /** Smallest sample (exact); 0 without samples. */
  min: number;
  /** Mean of the samples; 0 without samples. */
  mean: number;
  /** Median (the bucket's highest value: within the histogram's precision). */
  p50: number;
  /** 90th percentile. */
  p90: number;
  /** 99th percentile. */
  p99: number;
  /** 99.9th percentile. */
  p999: number;
  /** Largest sample (exact). */
  max: number;
  /** Samples above the histogram's range (counted at its top). */
  overflow: number;
}

const DEFAULT_BITS = 11;
const DEFAULT_MAX_NS = 100e9;
const TWO32 = 2 ** 32;

/** floor(log2 v) for an integer 1 <= v < 2^53. */
function log2Floor(v: number): number {
  return v < TWO32 ? 31 - Math.clz32(v) : 63 - Math.clz32(Math.floor(v / TWO32));
}

/** The bucket of integer `v >= 0` (histIndex in hist.as.ts). */
export function histIndex(bits: number, v: number): number {
  if (v < 2 ** bits) return v;
  const b = log2Floor(v) - bits + 1;
  return b * 2 ** (bits - 1) + Math.floor(v / 2 ** b);
}

/** The smallest value bucket `i` holds. */
export function histLowest(bits: number, i: number): number {
  if (i < 2 ** bits) return i;
  const b = Math.floor(i / 2 ** (bits - 1)) - 1;
  return (i - b * 2 ** (bits - 1)) * 2 ** b;
}

/** The largest value bucket `i` holds. */
export function histHighest(bits: number, i: number): number {
  return histLowest(bits, i + 1) - 1;
}

function checkShape(opts: HistogramOptions): { bits: number; nbCounts: number } {
  const bits = opts.bits ?? DEFAULT_BITS;
  const maxNs = opts.maxNs ?? DEFAULT_MAX_NS;
  if (!Number.isInteger(bits) || bits < 4 || bits > 16) throw new ArgError(`latency histogram: bits=${bits}: must be an integer in [4, 16]`);
  if (!Number.isInteger(maxNs) || maxNs < 2 ** bits || maxNs > Number.MAX_SAFE_INTEGER) {
    throw new ArgError(`latency histogram: maxNs=${maxNs}: must be an integer in [${2 ** bits}, 2^53)`);
  }
  return { bits, nbCounts: histIndex(bits, maxNs) + 1 };
}

/** Bytes a histogram of this shape takes in the heap. */
export function histBytes(opts: HistogramOptions = {}): number {
  return LAT_HIST_HEADER + 8 * checkShape(opts).nbCounts;
}

/**
 * Writes an empty histogram's header at byte `at` of `buffer` (the block
 * must hold histBytes(opts) zeroed bytes, as Heap.reserve gives).
 */
export function histInit(buffer: ArrayBufferLike, at: number, opts: HistogramOptions = {}): void {
  const { bits, nbCounts } = checkShape(opts);
  const u32 = new Uint32Array(buffer, at, LAT_HIST_HEADER / 4);
  u32[LH_W_BITS] = bits;
  u32[LH_W_NB_COUNTS] = nbCounts;
}

/**
 * The twin of histRecord (hist.as.ts): adds sample `v` (integer ns >= 0) to
 * the histogram at heap byte `h`, through the heap's views.
 */
export function histRecordTwin(u32: Uint32Array, f64: Float64Array, h: number, v: number): void {
  const hw = h >>> 2;
  const hd = h >>> 3;
  const nb = u32[hw + LH_W_NB_COUNTS]!;
  let i = histIndex(u32[hw + LH_W_BITS]!, v);
  if (i >= nb) {
    i = nb - 1;
    f64[hd + LH_D_OVERFLOW]! += 1;
  }
  f64[hd + LH_D_COUNTS + i]! += 1;
  const count = f64[hd + LH_D_COUNT]!;
  if (count === 0 || v < f64[hd + LH_D_MIN]!) f64[hd + LH_D_MIN] = v;
  if (v > f64[hd + LH_D_MAX]!) f64[hd + LH_D_MAX] = v;
  f64[hd + LH_D_COUNT] = count + 1;
  f64[hd + LH_D_SUM]! += v;
}

/**
 * A latency histogram over a block of memory: the heap (where a probe
 * checker fills it) or a private buffer (a merge of several). Reading and
 * merging are control-plane calls; recording is the kernel's job (or
 * `record`, the twin, for tests and TypeScript callers).
 */
export class LatencyHistogram {
  /** Significant binary digits (the shape). */
  readonly bits: number;
  /** Count slots (the shape). */
  readonly nbCounts: number;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  /** The header's f64 index in `f64`. */
  private readonly d: number;

  /** Opens the histogram whose block starts at byte `at` (8-aligned) of `buffer`. */
  constructor(
    buffer: ArrayBufferLike,
    /** Byte offset of the block. */
    readonly at: number,
  ) {
    if (at % 8 !== 0) throw new ArgError(`latency histogram at ${at}: not 8-byte aligned`);
    this.u32 = new Uint32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.d = at / 8;
    this.bits = this.u32[(at >>> 2) + LH_W_BITS]!;
    this.nbCounts = this.u32[(at >>> 2) + LH_W_NB_COUNTS]!;
    if (this.bits < 4 || this.bits > 16 || this.nbCounts === 0 || at + LAT_HIST_HEADER + 8 * this.nbCounts > buffer.byteLength) {
      throw new ArgError(`latency histogram at ${at}: no valid header (bits ${this.bits}, ${this.nbCounts} buckets)`);
    }
  }

  /** A new empty histogram in the heap (control plane). */
  static create(heap: Heap, opts: HistogramOptions = {}): LatencyHistogram {
    const at = heap.reserve(histBytes(opts), 64, 'latency histogram');
    histInit(heap.buffer, at, opts);
    return new LatencyHistogram(heap.buffer, at);
  }

  /** A new empty histogram in private memory, e.g. to merge lcores' histograms into. */
  static detached(opts: HistogramOptions = {}): LatencyHistogram {
    const buffer = new ArrayBuffer(histBytes(opts));
    histInit(buffer, 0, opts);
    return new LatencyHistogram(buffer, 0);
  }

  /** A new empty histogram in private memory with `h`'s shape (to merge into). */
  static emptyLike(h: LatencyHistogram): LatencyHistogram {
    const buffer = new ArrayBuffer(LAT_HIST_HEADER + 8 * h.nbCounts);
    const u32 = new Uint32Array(buffer, 0, 2);
    u32[LH_W_BITS] = h.bits;
    u32[LH_W_NB_COUNTS] = h.nbCounts;
    return new LatencyHistogram(buffer, 0);
  }

  /** Samples recorded. */
  get count(): number {
    return this.f64[this.d + LH_D_COUNT]!;
  }

  /** Smallest sample, exact (0 when empty). */
  get min(): number {
    return this.count === 0 ? 0 : this.f64[this.d + LH_D_MIN]!;
  }

  /** Largest sample, exact (0 when empty). */
  get max(): number {
    return this.f64[this.d + LH_D_MAX]!;
  }

  /** Mean of the samples (0 when empty). */
  get mean(): number {
    const n = this.count;
    return n === 0 ? 0 : this.f64[this.d + LH_D_SUM]! / n;
  }

  /** Samples past the top bucket. */
  get overflow(): number {
    return this.f64[this.d + LH_D_OVERFLOW]!;
  }

  /** Samples in bucket `i`. */
  bucket(i: number): number {
    return this.f64[this.d + LH_D_COUNTS + i]!;
  }

  /** Adds sample `v` (an integer number of ns >= 0) in TypeScript: the kernel's twin. */
  record(v: number): void {
    histRecordTwin(this.u32, this.f64, this.at, v);
  }

  /**
   * The value at percentile `p` (0..100): the highest value of the bucket
   * holding the sample of rank ceil(p/100 · count), capped at the exact max;
   * the exact min for p = 0 and max for p = 100; 0 when empty.
   */
  valueAt(p: number): number {
    if (!(p >= 0 && p <= 100)) throw new ArgError(`latency histogram: percentile ${p}: must be in [0, 100]`);
    const n = this.count;
    if (n === 0) return 0;
    if (p === 0) return this.min;
    if (p === 100) return this.max;
    const rank = Math.max(1, Math.ceil((p / 100) * n));
    let seen = 0;
    for (let i = 0; i < this.nbCounts; i++) {
      seen += this.bucket(i);
      // The last bucket also holds the overflow, whose values only max bounds.
      if (seen >= rank) return i === this.nbCounts - 1 ? this.max : Math.min(histHighest(this.bits, i), this.max);
    }
    return this.max;
  }

  /** count, min, mean, p50, p90, p99, p99.9, max, overflow. */
  summary(): LatencySummary {
    return {
      count: this.count,
      min: this.min,
      mean: this.mean,
      p50: this.valueAt(50),
      p90: this.valueAt(90),
      p99: this.valueAt(99),
      p999: this.valueAt(99.9),
      max: this.max,
      overflow: this.overflow,
    };
  }

  /** Adds `other`'s samples to this one (same shape required). Not safe while `other`'s lcore writes it mid-burst: read after stop, or accept a torn last burst. */
  merge(other: LatencyHistogram): void {
    if (other.bits !== this.bits || other.nbCounts !== this.nbCounts) {
      throw new ArgError(`latency histogram merge: shapes differ (bits ${other.bits}/${other.nbCounts} buckets into ${this.bits}/${this.nbCounts})`);
    }
    const n = other.count;
    if (n === 0) return;
    const f = this.f64;
    const d = this.d;
    if (this.count === 0 || other.min < this.min) f[d + LH_D_MIN] = other.min;
    if (other.max > this.max) f[d + LH_D_MAX] = other.max;
    f[d + LH_D_COUNT]! += n;
    f[d + LH_D_SUM]! += other.f64[other.d + LH_D_SUM]!;
    f[d + LH_D_OVERFLOW]! += other.overflow;
    for (let i = 0; i < this.nbCounts; i++) f[d + LH_D_COUNTS + i]! += other.bucket(i);
  }

  /** Empties it (its writer must be stopped). */
  reset(): void {
    this.f64.fill(0, this.d + LH_D_COUNT, this.d + LH_D_COUNTS + this.nbCounts);
  }
}
