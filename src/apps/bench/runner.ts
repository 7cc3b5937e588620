/**
 * `dpkit bench NAME`: runs a benchmark from bench/ and prints its figures.
 *
 * Repetitions go round-robin over the cases (case A, B, C, A, B, C, …) so a
 * drift of the machine's speed (±30 % an hour here) spreads over every case
 * instead of favouring the first. Each repetition starts fresh threads.
 */
import { readdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { ArgError } from '../../errors.js';
import { measure } from './harness.js';
import { summarize, type Summary } from './stats.js';
import type { BenchOptions, Benchmark } from './types.js';

const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const benchDir = new URL('../../../bench/', import.meta.url);

export const BENCH_USAGE = `Usage: dpkit bench NAME [options]
Runs benchmark NAME from bench/ and prints Mpps (median, min, max over repetitions).

Options:
  --reps N          repetitions of each case, alternating cases (default 5)
  --duration MS     measured window per repetition (default 1000)
  --warmup MS       warm-up before each window (default 300)
  --quick           short repetitions and fewer cases: a smoke check, not a result
  --filter TEXT     only the cases whose name contains TEXT (comma-separated: any of them)
  --json            print JSON with every sample instead of a table
  -h, --help        this text
`;

export function listBenchmarks(): string[] {
  return readdirSync(fileURLToPath(benchDir))
    .filter((f) => f.endsWith(ext) && !f.includes('.worker.') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -ext.length))
    .sort();
}

async function loadBenchmark(name: string): Promise<Benchmark> {
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

export function machineFacts() {
  return { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version, loadavg: loadavg() };
}

const fmt = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');

export function renderTable(title: string, results: CaseResult[]): string {
  const table = new Table({ head: ['case', 'Mpps median', 'min', 'max', 'reps', 'GCs'], style: { head: [], border: [] } });
  for (const r of results) table.push([r.name, fmt(r.summary.median), fmt(r.summary.min), fmt(r.summary.max), r.summary.n, r.gc]);
  return `${title}\n${table.toString()}\n`;
}

export async function benchMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      reps: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      quick: { type: 'boolean' },
      json: { type: 'boolean' },
      filter: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(BENCH_USAGE + `\nBenchmarks: ${listBenchmarks().join(', ')}\n`);
    return values.help ? 0 : 2;
  }
  for (const name of positionals) {
    const defaults = (await loadBenchmark(name)).defaults ?? {};
    const opts: BenchOptions = values.quick ? { reps: 3, durationMs: 200, warmupMs: 100, quick: true } : { reps: 5, durationMs: 1000, warmupMs: 300, quick: false, ...defaults };
    if (values.reps !== undefined) opts.reps = positiveInt('--reps', values.reps);
    if (values.duration !== undefined) opts.durationMs = positiveInt('--duration', values.duration);
    if (values.warmup !== undefined) opts.warmupMs = positiveInt('--warmup', values.warmup);
    const progress = (line: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${line}`);
    const { benchmark, results } = await runBenchmark(name, opts, progress, values.filter);
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    if (values.json) {
      process.stdout.write(JSON.stringify({ benchmark: benchmark.name, title: benchmark.title, options: opts, machine: machineFacts(), results }, null, 2) + '\n');
    } else {
      process.stdout.write(renderTable(`${benchmark.title} (${opts.reps} × ${opts.durationMs} ms, ${machineFacts().cpu})`, results));
      if (benchmark.summary) process.stdout.write(benchmark.summary(results) + '\n');
    }
  }
  return 0;
}

function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new ArgError(`bench: ${name} ${v}: expected a positive integer`);
  return n;
}
