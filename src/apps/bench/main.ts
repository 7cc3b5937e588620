/**
 * `dpkit bench`: runs a matrix (a preset or a config file) with alternating
 * A/B runs and verdicts, or a micro-benchmark from bench/, or compares two
 * saved runs. Progress goes to stderr, the table to stdout, and the JSON,
 * HTML and docs files where asked.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ArgError } from '../../errors.js';
import { chooseDpdkMemory } from './dpdk-memory.js';
import { machineFacts } from './machine.js';
import { summarize } from './stats.js';
import { MIN_PAIRS, validateConfig, type Dims, type MatrixConfig } from './matrix.js';
import { runMatrix } from './matrix-run.js';
import { resolveDpdkBuilds, runsDpdk, withDpdkBuilds, type DpdkBuild } from './dpdk.js';
import { benchAliases, presets } from './presets.js';
import { compareReports, readReport, type BenchReport } from './report.js';
import { renderHtml } from './render-html.js';
import { renderCompare, renderText } from './render-text.js';
import { updateDocs } from './render-docs.js';
import { parseCheckout, renderMicroArms, runMicroArms } from './micro-arms.js';
import { listBenchmarks, loadBenchmark, renderTable, runBenchmark } from './runner.js';
import type { BenchOptions, BenchRegistry } from './types.js';

export const BENCH_USAGE = `Usage: dpkit bench PRESET|--preset NAME|--config FILE [options]
       dpkit bench MICROBENCH [--reps N] [--duration MS] [--warmup MS] [--filter TEXT]
       dpkit bench --compare OLD.json NEW.json

A matrix run measures every arm of every cell (engine x packet size x lcores
x burst) in pairs: the arms alternate in an order shuffled per pair, each run
a fresh testpmd with its own warm-up. Per cell it reports median, min, max
and each comparison B / A with a bootstrap 95 % interval and a verdict.

Matrix options:
  --preset NAME      a built-in matrix (see below); NAME alone works too
  --config FILE      a matrix from a JSON file or a module exporting it (default export or 'config')
  --pairs N          runs per arm and cell (default 5; fewer gives no result)
  --seconds S        measured seconds per run
  --warmup S         seconds forwarded before each measured window
  --engines LIST     only these engines, e.g. io,macswap
  --sizes LIST       only these packet sizes, e.g. 64,1518
  --lcores LIST      only these forwarding lcore counts
  --bursts LIST      these bursts instead of the config's
  --arms LIST        only these arms (the first listed stays the baseline if kept)
  --dpdk PATH        compare with this DPDK: a dpdk-testpmd binary or a DPDK build directory
                     (scripts/build-dpdk.sh); repeatable, each an arm dpdk-<version>-<build>
                     (dpdk-22.11-debian, dpdk-25.11-native) in place of the preset's DPDK arms
  --dpdk-memory M    DPDK's pages: huge, no-huge or auto (default: hugepages when two DPDK
                     processes' 1 GiB each are free, scripts/hugepages.sh; the report says which)
  --quick            2 pairs of 1 s runs: a smoke check, not a result
  --ceiling          also run the ceiling micro-benchmark (null rx+tx with no engine) and
                     print each arm as a share of it
  --json FILE        the report with every raw sample ('-' for stdout)
  --html FILE        a self-contained HTML report with charts
  --docs FILE        rewrite this preset's generated section of a Markdown file
Micro-benchmark options:
  --reps N, --duration MS, --warmup MS, --quick, --json FILE
  --filter TEXT      the cases whose names hold one of these comma-separated
                     parts, and none of those given as !PART
  --dpdk PATH        (vhost) DPDK's pair from this build instead of the one on PATH; repeatable
  --dpdk-memory M    (vhost) DPDK's pages, as for a matrix
  --checkout NAME=DIR  also run each case on another built checkout, alternating,
                     and report this tree / NAME with a 95 % interval (repeatable)
Other:
  --compare OLD NEW  compare two saved reports cell by cell, arm by arm
  -h, --help         this text
`;

/**
 * Runs `dpkit bench` with `argv` (after the subcommand); `micro` is the table of
 * micro-benchmarks (bench/index.ts). Returns the exit code; a bad argument throws ArgError.
 */
export async function benchMain(argv: string[], micro: BenchRegistry): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        preset: { type: 'string' },
        config: { type: 'string' },
        pairs: { type: 'string' },
        seconds: { type: 'string' },
        warmup: { type: 'string' },
        engines: { type: 'string' },
        sizes: { type: 'string' },
        lcores: { type: 'string' },
        bursts: { type: 'string' },
        arms: { type: 'string' },
        quick: { type: 'boolean' },
        ceiling: { type: 'boolean' },
        json: { type: 'string' },
        html: { type: 'string' },
        docs: { type: 'string' },
        compare: { type: 'boolean' },
        reps: { type: 'string' },
        duration: { type: 'string' },
        filter: { type: 'string' },
        checkout: { type: 'string', multiple: true },
        dpdk: { type: 'string', multiple: true },
        'dpdk-memory': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new ArgError(`bench: ${(e as Error).message}\n\n${BENCH_USAGE}`);
  }
  const { values: v, positionals } = parsed;
  const help = () =>
    `${BENCH_USAGE}\nPresets (what each measures):\n${[...presets].map(([n, c]) => `  ${n.padEnd(13)} ${c.title}\n`).join('')}` +
    `Micro-benchmarks: ${listBenchmarks(micro).join(', ')} (vhost: the vhost enqueue-by-size study)\n` +
    `Aliases: ${[...benchAliases].map(([a, p]) => `${a} = ${p}`).join(', ')}\n`;
  if (v.help) {
    process.stdout.write(help());
    return 0;
  }
  if (v.compare) {
    if (positionals.length !== 2) throw new ArgError('bench --compare: expected two report files, OLD.json NEW.json');
    const [a, b] = positionals as [string, string];
    process.stdout.write(renderCompare(a, b, compareReports(readReport(a), readReport(b))));
    return 0;
  }
  chooseDpdkMemory(v['dpdk-memory']);
  const given = v.preset ?? (v.config === undefined ? positionals[0] : undefined);
  const name = given === undefined ? undefined : (benchAliases.get(given) ?? given);
  if (v.config === undefined && name === undefined) {
    process.stderr.write(help());
    return 2;
  }
  if (v.config === undefined && !presets.has(name!)) {
    if (v.preset !== undefined) throw new ArgError(`bench --preset ${name}: unknown (presets: ${[...presets.keys()].join(', ')})`);
    return microMain(micro, positionals.map((p) => benchAliases.get(p) ?? p), { ...v, builds: resolveDpdkBuilds(v.dpdk ?? []) });
  }

  const base = v.config !== undefined ? await loadConfig(v.config) : structuredClone(presets.get(name!)!);
  const builds = resolveDpdkBuilds(v.dpdk ?? []);
  if (builds.length > 0 && !base.variants.some(runsDpdk)) throw new ArgError(`bench ${base.name} --dpdk: no arm of ${base.name} runs DPDK`);
  const config = applyOverrides(withDpdkBuilds(base, builds), v);
  const progress = (line: string) => process.stderr.write(process.stderr.isTTY ? `\r\x1b[K${line}` : `${line}\n`);
  const report = await runMatrix(config, { progress, command: `dpkit bench ${argv.join(' ')}`, ...(builds.length ? { dpdkBuilds: builds } : {}) });
  if (v.ceiling) report.ceiling = await measureCeiling(micro, v.quick === true, progress);
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  if (config.pairs < MIN_PAIRS) report.warnings.push(`${config.pairs} pairs per arm: a smoke check, not a result (${MIN_PAIRS} or more)`);
  writeOutputs(report, v);
  // A run that failed twice is in the report with its reason; the exit status tells scripts.
  const failed = report.cells.reduce((n, c) => n + c.arms.reduce((k, a) => k + (a.failures?.length ?? 0), 0), 0);
  if (failed > 0) process.stderr.write(`dpkit: bench ${config.name}: ${failed} runs failed twice and were left out (see the warnings)\n`);
  return failed > 0 ? 1 : 0;
}

/** The ceiling micro-benchmark's rows (median Mpps), run after the matrix on the same machine. */
async function measureCeiling(micro: BenchRegistry, quick: boolean, progress: (line: string) => void): Promise<{ name: string; mpps: number }[]> {
  const benchmark = await loadBenchmark(micro, 'ceiling');
  const opts: BenchOptions = quick ? { reps: 3, durationMs: 200, warmupMs: 100, quick: true } : { reps: 5, durationMs: 1000, warmupMs: 300, quick: false };
  const rows = await runBenchmark(benchmark, opts, progress);
  return rows.map((r) => ({ name: r.name, mpps: summarize(r.samples).median }));
}

function writeOutputs(report: BenchReport, v: { json?: string; html?: string; docs?: string }): void {
  const json = JSON.stringify(report, null, 2) + '\n';
  if (v.json === '-') process.stdout.write(json);
  else {
    process.stdout.write(renderText(report));
    if (v.json) writeFileSync(v.json, json);
  }
  if (v.html) writeFileSync(v.html, renderHtml(report));
  if (v.docs) writeFileSync(v.docs, updateDocs(readFileSync(v.docs, 'utf8'), report));
}

/** A config from JSON or from a module (TypeScript modules run through tsx). */
export async function loadConfig(file: string): Promise<MatrixConfig> {
  let config: unknown;
  if (file.endsWith('.json')) {
    try {
      config = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ArgError(`bench --config ${file}: ${(e as Error).message}`);
    }
  } else {
    if (/\.[mc]?ts$/.test(file)) {
      const { register } = (await import('tsx/esm/api')) as { register: () => unknown };
      register();
    }
    const mod = (await import(pathToFileURL(resolve(file)).href)) as { default?: unknown; config?: unknown };
    config = mod.default ?? mod.config;
    // A TypeScript module outside an ESM package is compiled to CommonJS: its default export arrives wrapped once more.
    if (config && typeof config === 'object' && !('matrix' in config) && 'default' in config) config = (config as { default: unknown }).default;
  }
  return validateConfig(config as MatrixConfig, `bench --config ${file}`);
}

type Overrides = { pairs?: string; seconds?: string; warmup?: string; engines?: string; sizes?: string; lcores?: string; bursts?: string; arms?: string; quick?: boolean };

/** The command line's narrowing and timing over a config; the result is validated again. */
export function applyOverrides(config: MatrixConfig, v: Overrides): MatrixConfig {
  const c = structuredClone(config);
  if (v.quick) Object.assign(c, { pairs: 2, seconds: 1, warmup: 1 });
  if (v.pairs !== undefined) c.pairs = int('--pairs', v.pairs);
  if (v.seconds !== undefined) c.seconds = int('--seconds', v.seconds);
  if (v.warmup !== undefined) c.warmup = int('--warmup', v.warmup, 0);
  const only = <K extends 'engines' | 'sizes' | 'lcores' | 'bursts'>(key: K, list: Dims[K]) => {
    const keep = new Set<string | number>(list);
    c.matrix = c.matrix.map((b) => ({ ...b, [key]: (b[key] ?? list).filter((x: string | number) => keep.has(x)) })).filter((b) => (b[key] as unknown[]).length > 0);
    if (c.matrix.length === 0) throw new ArgError(`bench --${key} ${list.join(',')}: no cell of ${c.name} has any of these`);
  };
  if (v.engines !== undefined) only('engines', v.engines.split(','));
  if (v.sizes !== undefined) only('sizes', ints('--sizes', v.sizes));
  if (v.lcores !== undefined) only('lcores', ints('--lcores', v.lcores));
  if (v.bursts !== undefined) {
    const bursts = ints('--bursts', v.bursts);
    c.matrix = c.matrix.map((b) => ({ ...b, bursts }));
  }
  if (v.arms !== undefined) {
    const want = v.arms.split(',');
    const unknown = want.filter((a) => !c.variants.some((x) => x.name === a));
    if (unknown.length) throw new ArgError(`bench --arms: ${unknown.join(', ')} not in ${c.name} (arms: ${c.variants.map((x) => x.name).join(', ')})`);
    c.variants = c.variants.filter((x) => want.includes(x.name));
    // Comparisons with a dropped arm go; none left means every arm against the first again.
    const kept = c.compare?.filter((p) => p.every((n) => want.includes(n)));
    c.compare = kept?.length ? kept : undefined;
  }
  return validateConfig(c, `bench ${c.name}`);
}

async function microMain(micro: BenchRegistry, positionals: string[], v: { reps?: string; duration?: string; warmup?: string; quick?: boolean; json?: string; filter?: string; checkout?: string[]; builds: DpdkBuild[] }): Promise<number> {
  const others = (v.checkout ?? []).map(parseCheckout);
  for (const name of positionals) {
    const benchmark = await loadBenchmark(micro, name);
    const defaults = benchmark.defaults ?? {};
    const opts: BenchOptions = v.quick ? { reps: 3, durationMs: 200, warmupMs: 100, quick: true } : { reps: 5, durationMs: 1000, warmupMs: 300, quick: false, ...defaults };
    if (v.builds.length) opts.dpdk = v.builds;
    if (v.reps !== undefined) opts.reps = int('--reps', v.reps);
    if (v.duration !== undefined) opts.durationMs = int('--duration', v.duration);
    if (v.warmup !== undefined) opts.warmupMs = int('--warmup', v.warmup);
    const progress = (line: string) => process.stderr.isTTY && process.stderr.write(`\r\x1b[K${line}`);
    if (others.length > 0) {
      const arms = await runMicroArms(benchmark, others, opts, progress, v.filter);
      if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
      const json = JSON.stringify({ benchmark: benchmark.name, title: benchmark.title, options: opts, checkouts: others, machine: machineFacts(), arms }, null, 2) + '\n';
      if (v.json === '-') process.stdout.write(json);
      else {
        if (v.json) writeFileSync(v.json, json);
        process.stdout.write(renderMicroArms(`${benchmark.title}: this tree against ${others.map((o) => `${o.name} (${o.dir})`).join(', ')} (${opts.reps} × ${opts.durationMs} ms, ${machineFacts().cpu})`, arms));
      }
      continue;
    }
    const results = await runBenchmark(benchmark, opts, progress, v.filter);
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    const json = JSON.stringify({ benchmark: benchmark.name, title: benchmark.title, options: opts, machine: machineFacts(), results }, null, 2) + '\n';
    if (v.json === '-') {
      process.stdout.write(json);
      continue;
    }
    if (v.json) writeFileSync(v.json, json);
    process.stdout.write(renderTable(`${benchmark.title} (${opts.reps} × ${opts.durationMs} ms, ${machineFacts().cpu})`, results));
    const summary = benchmark.summary?.(results);
    if (summary) process.stdout.write(summary + '\n');
  }
  return 0;
}

function int(name: string, text: string, min = 1): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min) throw new ArgError(`bench: ${name} ${text}: expected an integer of at least ${min}`);
  return n;
}

function ints(name: string, text: string): number[] {
  return text.split(',').map((t) => int(name, t));
}
