/**
 * Micro-benchmarks from bench/ (mem, ring, pipeline, …): in-process threads
 * or child processes, measured with repetitions.
 *
 * Repetitions go round-robin over the cases (case A, B, C, A, B, C, …) so a
 * drift of the machine's speed (±30 % an hour here) spreads over every case
 * instead of favouring the first. Each repetition starts fresh threads.
 */
import Table from 'cli-table3';
import { ArgError } from '../../errors.js';
import { CpuProbe, type CpuProbeResult } from './cpu-probe.js';
import { measure } from './harness.js';
import { modesText, probeSummary, rateModes } from './modes.js';
import { summarize, type Summary } from './stats.js';
import type { BenchCase, BenchOptions, BenchRegistry, Benchmark } from './types.js';

/** The registry's names, sorted (for help and errors). */
export function listBenchmarks(registry: BenchRegistry): string[] {
  return Object.keys(registry).sort();
}

/** Loads benchmark `name` from `registry`; throws ArgError naming the known ones when it is not there. */
export async function loadBenchmark(registry: BenchRegistry, name: string): Promise<Benchmark> {
  if (!Object.hasOwn(registry, name)) throw new ArgError(`bench: unknown benchmark '${name}' (known: ${listBenchmarks(registry).join(', ')})`);
  return (await registry[name]!()).benchmark;
}

export interface CaseResult {
  name: string;
  params: Record<string, string | number>;
  unit: 'Mpps';
  samples: number[];
  summary: Summary;
  /** Garbage collections during measured windows, all repetitions. */
  gc: number;
  /** Why repetitions have no sample (a measure that reported `failed`), one line each. */
  failures: string[];
  /** The CPU probe before each sample's repetition, for a benchmark that asks for one (Benchmark.probe). */
  probes?: CpuProbeResult[];
  /** Other figures a measure reported beside its rate (e.g. a generator's rate error in ppm), a sample per repetition. */
  figures?: Record<string, number[]>;
}

/**
 * The cases `filter` selects: a filter that is one case's whole name selects
 * that case alone (how an alternating run names a case to a checkout's
 * process, where case names hold commas: "hash lookupBulk 16, wasm"), else
 * every case whose name holds one of its comma-separated substrings and none
 * of its "!"-prefixed ones ("host-to-guest,!avail-per-packet"; only "!" parts
 * keep every case but those).
 * @throws ArgError when none matches
 */
export function filterCases(benchmark: Benchmark, opts: BenchOptions, filter?: string): BenchCase[] {
  const all = benchmark.cases(opts);
  const exact = all.filter((c) => c.name === filter);
  const parts = filter?.split(',').filter(Boolean) ?? [];
  const wanted = parts.filter((p) => !p.startsWith('!'));
  const unwanted = parts.filter((p) => p.startsWith('!') && p.length > 1).map((p) => p.slice(1));
  const selected = (name: string) => (wanted.length === 0 || wanted.some((w) => name.includes(w))) && !unwanted.some((u) => name.includes(u));
  const cases = exact.length > 0 ? exact : all.filter((c) => selected(c.name));
  if (cases.length === 0) throw new ArgError(`bench ${benchmark.name}: no case matches --filter ${filter}`);
  return cases;
}

/** Runs the cases of `benchmark` matching `filter` (filterCases), `opts.reps` rounds of all cases. */
export async function runBenchmark(benchmark: Benchmark, opts: BenchOptions, progress: (line: string) => void = () => {}, filter?: string): Promise<CaseResult[]> {
  const cases = filterCases(benchmark, opts, filter);
  const results: CaseResult[] = cases.map((c) => ({ name: c.name, params: c.params, unit: 'Mpps', samples: [], summary: summarize([]), gc: 0, failures: [] }));
  const total = opts.reps * cases.length;
  let done = 0;
  const probe = benchmark.probe ? await CpuProbe.start() : null;
  try {
    for (let rep = 0; rep < opts.reps; rep++) {
      for (let i = 0; i < cases.length; i++) {
        progress(`[${++done}/${total}] ${benchmark.name}: ${cases[i]!.name}`);
        const c = cases[i]!;
        const probed = await probe?.probe();
        const m = c.measure ? await c.measure(opts) : await measure(c.threads!(), opts.warmupMs, opts.durationMs);
        if ('failed' in m) {
          results[i]!.failures.push(m.failed);
          continue;
        }
        results[i]!.samples.push(m.mpps);
        results[i]!.gc += m.gc;
        if (probed) (results[i]!.probes ??= []).push(probed);
        if ('figures' in m && m.figures) {
          const f = (results[i]!.figures ??= {});
          for (const [k, v] of Object.entries(m.figures)) (f[k] ??= []).push(v);
        }
      }
    }
  } finally {
    await probe?.close();
  }
  for (const r of results) r.summary = summarize(r.samples);
  return results;
}

const fmt = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');

export function renderTable(title: string, results: CaseResult[]): string {
  const table = new Table({ head: ['case', 'Mpps median', 'min', 'max', 'reps', 'GCs'], style: { head: [], border: [] } });
  for (const r of results) table.push([r.name, fmt(r.summary.median), fmt(r.summary.min), fmt(r.summary.max), r.summary.n, r.gc]);
  const modes = results.flatMap((r) => {
    const m = rateModes(r);
    return m ? [`  ~ ${r.name} is bimodal: ${modesText(m)}\n`] : [];
  });
  const probes = probeSummary(results.flatMap((r) => r.probes ?? []));
  const failed = results.flatMap((r) => [...new Set(r.failures)].map((f) => `  ${r.name}: no figure, ${f}\n`));
  return `${title}\n${table.toString()}\n${probes ? `CPU probe before each repetition: cache-line ${probes}\n` : ''}${modes.join('')}${failed.length ? `Repetitions without a figure:\n${failed.join('')}` : ''}`;
}
