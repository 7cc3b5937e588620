import type { ThreadSpec } from './harness.js';

export interface BenchOptions {
  warmupMs: number;
  durationMs: number;
  reps: number;
}

/** One row of a benchmark's table. */
export interface BenchCase {
  name: string;
  /** What distinguishes this row (burst, threads, variant…), for JSON readers. */
  params: Record<string, string | number>;
  /** Fresh threads for one repetition. */
  threads(): ThreadSpec[];
}

/** A module in bench/ exports `benchmark` of this type. */
export interface Benchmark {
  name: string;
  title: string;
  cases(opts: BenchOptions): BenchCase[];
}
