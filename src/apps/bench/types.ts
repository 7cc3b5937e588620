import type { CpuProbeResult } from './cpu-probe.js';
import type { DpdkBuild } from './dpdk.js';
import type { ThreadSpec } from './harness.js';

export interface BenchOptions {
  warmupMs: number;
  durationMs: number;
  reps: number;
  /** --quick: a benchmark may also trim its matrix. */
  quick: boolean;
  /** `--dpdk PATH` (repeatable): the DPDK builds a benchmark that runs DPDK compares with; default: the one on PATH. */
  dpdk?: DpdkBuild[];
}

/** One row of a benchmark's table. */
export interface BenchCase {
  name: string;
  /** What distinguishes this row (burst, threads, variant…), for JSON readers. */
  params: Record<string, string | number>;
  /** Fresh threads for one repetition (in-process benchmarks)… */
  threads?(): ThreadSpec[];
  /**
   * …or a whole measurement of its own (e.g. a child process), in Mpps; or
   * `failed`, why this repetition has no figure (another program's run that
   * failed), which the table reports in place of a sample.
   */
  measure?(opts: BenchOptions): Promise<{ mpps: number; gc: number; figures?: Record<string, number> } | { failed: string }>;
}

/** A module in bench/ exports `benchmark` of this type; one line in bench/index.ts registers it. */
export interface Benchmark {
  name: string;
  title: string;
  /** Defaults for this benchmark, where the runner's do not fit (e.g. fewer, longer reps). */
  defaults?: Partial<BenchOptions>;
  cases(opts: BenchOptions): BenchCase[];
  /** Probe the CPUs before each repetition (cpu-probe.ts), for a benchmark whose two sides exchange cache lines across CPUs. */
  probe?: boolean;
  /** An extra table after the per-case one (e.g. ratios between systems). */
  summary?(results: { name: string; params: Record<string, string | number>; samples: number[]; probes?: CpuProbeResult[] }[]): string;
}

/**
 * Micro-benchmarks by name, each loading its module on first use
 * (`bench/index.ts` is the table; the command line passes it to `benchMain`).
 */
export type BenchRegistry = Readonly<Record<string, () => Promise<{ benchmark: Benchmark }>>>;
