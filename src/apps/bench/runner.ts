/**
 * Micro-benchmarks from bench/ (mem, ring, pipeline, …): in-process threads
 * or child processes, measured with repetitions.
 *
 * Repetitions go round-robin over the cases (case A, B, C, A, B, C, …) so a
 * drift of the machine's speed (±30 % an hour here) spreads over every case
 * instead of favouring the first. Each repetition starts fresh threads.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { ArgError } from '../../errors.js';
import { measure } from './harness.js';
import { summarize, type Summary } from './stats.js';
import type { BenchOptions, Benchmark } from './types.js';

const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const benchDir = new URL('../../../bench/', import.meta.url);

export function listBenchmarks(): string[] {
  return readdirSync(fileURLToPath(benchDir))
    .filter((f) => f.endsWith(ext) && !f.includes('.worker.') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -ext.length))
    .sort();
}

export async function loadBenchmark(name: string): Promise<Benchmark> {
  const known = listBenchmarks();
  if (!known.includes(name)) throw new ArgError(`bench: unknown benchmark '${name}' (known: ${known.join(', ')})`);
  const mod = (await import(new URL(name + ext, benchDir).href)) as { benchmark: Benchmark };
  return mod.benchmark;
}

export interface CaseResult {
  name: string;
  params: Record<string, string | number>;
  unit: 'Mpps';
  samples: number[];
  summary: Summary;
  /** Garbage collections during measured windows, all repetitions. */
  gc: number;
}

export async function runBenchmark(name: string, opts: BenchOptions, progress: (line: string) => void = () => {}, filter?: string): Promise<{ benchmark: Benchmark; results: CaseResult[] }> {
  const benchmark = await loadBenchmark(name);
  const wanted = filter?.split(',').filter(Boolean);
  const cases = benchmark.cases(opts).filter((c) => !wanted || wanted.some((w) => c.name.includes(w)));
  if (cases.length === 0) throw new ArgError(`bench ${name}: no case matches --filter ${filter}`);
  const results: CaseResult[] = cases.map((c) => ({ name: c.name, params: c.params, unit: 'Mpps', samples: [], summary: summarize([]), gc: 0 }));
  const total = opts.reps * cases.length;
  let done = 0;
  for (let rep = 0; rep < opts.reps; rep++) {
    for (let i = 0; i < cases.length; i++) {
      progress(`[${++done}/${total}] ${benchmark.name}: ${cases[i]!.name}`);
      const c = cases[i]!;
      const m = c.measure ? await c.measure(opts) : await measure(c.threads!(), opts.warmupMs, opts.durationMs);
      results[i]!.samples.push(m.mpps);
      results[i]!.gc += m.gc;
    }
  }
  for (const r of results) r.summary = summarize(r.samples);
  return { benchmark, results };
}

const fmt = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');

export function renderTable(title: string, results: CaseResult[]): string {
  const table = new Table({ head: ['case', 'Mpps median', 'min', 'max', 'reps', 'GCs'], style: { head: [], border: [] } });
  for (const r of results) table.push([r.name, fmt(r.summary.median), fmt(r.summary.min), fmt(r.summary.max), r.summary.n, r.gc]);
  return `${title}\n${table.toString()}\n`;
}
