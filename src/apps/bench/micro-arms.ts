/**
 * A micro-benchmark against another built checkout, in one run
 * (`dpkit bench vhost --checkout before=/tmp/before`): the way a matrix's
 * `checkout` arm settles whether a commit changed a testpmd cell, for the
 * benchmarks whose threads live in one process (vhost's host and guest).
 *
 * Every repetition of every case runs each arm once as a fresh child
 * (`node DIR/bin/dpkit.js bench NAME --reps 1 --filter CASE --json -`), this
 * tree included, so both pay the same start-up; the arms' order is shuffled
 * per repetition (seeded) so a drift of the machine lands on both alike.
 * Per case: each arm's median, min and max, and this tree / the other arm
 * with a bootstrap 95 % interval and its verdict.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { ArgError, DpkitError } from '../../errors.js';
import { packageRoot } from '../../package.js';
import type { CpuProbeResult } from './cpu-probe.js';
import { compareByMode, modesText, probeSummary, rateModes } from './modes.js';
import { ciText, mpps } from './render-text.js';
import { bootstrapRatio, seededRandom, summarize, verdict, type RatioCI, type Summary, type Verdict } from './stats.js';
import type { BenchOptions, Benchmark } from './types.js';
import { filterCases } from './runner.js';

/** One side of the comparison: a name and the checkout whose `bin/dpkit.js` runs it. */
export interface MicroArm {
  name: string;
  dir: string;
}

export interface MicroArmCase {
  name: string;
  /** Each arm's runs; `probes` (one per sample) where the benchmark probes the CPUs before each. */
  arms: { name: string; samples: number[]; summary: Summary; probes?: CpuProbeResult[] }[];
  /** The last arm (this tree) over the first, per other arm. */
  ratios: { a: string; b: string; ci: RatioCI; verdict: Verdict }[];
}

/** The arm this tree runs as. */
export const THIS_ARM = 'this';

/** `NAME=DIR` from `--checkout`: DIR must hold a built dpkit (bin/dpkit.js and dist/). */
export function parseCheckout(text: string): MicroArm {
  const eq = text.indexOf('=');
  const name = eq > 0 ? text.slice(0, eq) : '';
  const dir = eq > 0 ? resolve(text.slice(eq + 1)) : '';
  if (!name || !dir) throw new ArgError(`bench --checkout ${text}: expected NAME=DIR`);
  if (name === THIS_ARM) throw new ArgError(`bench --checkout ${text}: '${THIS_ARM}' names this tree's arm; pick another name`);
  if (!existsSync(`${dir}/bin/dpkit.js`) || !existsSync(`${dir}/dist`)) throw new ArgError(`bench --checkout ${text}: ${dir} holds no built dpkit (run npm ci there)`);
  return { name, dir };
}

/** One measurement of one case by one arm's child process: Mpps, and the CPU probe taken before it if any. */
function runOnce(arm: MicroArm, bench: string, caseName: string, opts: BenchOptions): Promise<{ mpps: number; probe?: CpuProbeResult }> {
  const args = [`${arm.dir}/bin/dpkit.js`, 'bench', bench, '--reps', '1', '--filter', caseName, '--duration', String(opts.durationMs), '--warmup', String(opts.warmupMs), '--json', '-'];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      const what = `bench --checkout ${arm.name}: ${bench} '${caseName}'`;
      if (code !== 0) return fail(new DpkitError('EBENCH', `${what} exited with ${code}: ${err.trim().split('\n').pop() ?? ''}`));
      try {
        const report = JSON.parse(out) as { results: { name: string; samples: number[]; probes?: CpuProbeResult[] }[] };
        const r = report.results.find((x) => x.name === caseName);
        if (!r || r.samples.length !== 1) return fail(new DpkitError('EBENCH', `${what}: that checkout has no such case`));
        const probe = r.probes?.length === 1 ? r.probes[0] : undefined;
        done(probe ? { mpps: r.samples[0]!, probe } : { mpps: r.samples[0]! });
      } catch (e) {
        fail(new DpkitError('EBENCH', `${what}: unreadable report (${(e as Error).message})`));
      }
    });
  });
}

/**
 * Runs `benchmark`'s cases (those matching `filter`) on every arm in `others`
 * and on this tree, `opts.reps` times each, alternating.
 */
export async function runMicroArms(benchmark: Benchmark, others: MicroArm[], opts: BenchOptions, progress: (line: string) => void, filter?: string, seed = 1): Promise<MicroArmCase[]> {
  const cases = filterCases(benchmark, opts, filter);
  const arms: MicroArm[] = [...others, { name: THIS_ARM, dir: fileURLToPath(packageRoot()) }];
  const samples = cases.map(() => arms.map(() => [] as number[]));
  // Kept only while every run of the arm brought one (a checkout from before the probe brings none).
  const probes = cases.map(() => arms.map((): CpuProbeResult[] | null => []));
  const rand = seededRandom(seed);
  const total = opts.reps * cases.length * arms.length;
  let done = 0;
  for (let rep = 0; rep < opts.reps; rep++) {
    for (let c = 0; c < cases.length; c++) {
      const order = arms.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = rand(i + 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const a of order) {
        progress(`[${++done}/${total}] ${benchmark.name}: ${cases[c]!.name} (${arms[a]!.name})`);
        const run = await runOnce(arms[a]!, benchmark.name, cases[c]!.name, opts);
        samples[c]![a]!.push(run.mpps);
        const kept = probes[c]![a];
        if (run.probe && kept) kept.push(run.probe);
        else probes[c]![a] = null;
      }
    }
  }
  const last = arms.length - 1;
  return cases.map((c, i) => ({
    name: c.name,
    arms: arms.map((a, k) => {
      const p = probes[i]![k];
      return { name: a.name, samples: samples[i]![k]!, summary: summarize(samples[i]![k]!), ...(p && p.length > 0 ? { probes: p } : {}) };
    }),
    ratios: others.map((o, k) => {
      const ci = bootstrapRatio(samples[i]![k]!, samples[i]![last]!);
      return { a: o.name, b: THIS_ARM, ci, verdict: verdict(ci) };
    }),
  }));
}

const fmt = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
const MARK: Record<Verdict, string> = { faster: '▲ faster', slower: '▼ slower', 'no significant difference': '= no significant difference' };

export function renderMicroArms(title: string, results: MicroArmCase[]): string {
  const armNames = results[0]?.arms.map((a) => a.name) ?? [];
  const head = ['case', ...armNames.map((a) => `${a} Mpps (min..max)`), ...(results[0]?.ratios.map((r) => `${r.b} / ${r.a} (95 % CI)`) ?? []), 'verdict'];
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const r of results) {
    table.push([
      r.name,
      ...r.arms.map((a) => `${fmt(a.summary.median)} (${fmt(a.summary.min)}..${fmt(a.summary.max)})`),
      ...r.ratios.map((x) => `${fmt(x.ci.ratio, 3)} (${fmt(x.ci.lo, 3)}..${fmt(x.ci.hi, 3)})`),
      r.ratios.map((x) => MARK[x.verdict]).join(', '),
    ]);
  }
  // As a matrix report: the probes' spread, each bimodal arm split at its levels, and this tree
  // against each other arm level by level where both are bimodal and their levels line up.
  const probes = probeSummary(results.flatMap((r) => r.arms.flatMap((a) => a.probes ?? [])));
  const lines: string[] = probes ? [`CPU probe before each repetition: cache-line ${probes}`] : [];
  for (const r of results) {
    for (const a of r.arms) {
      const m = rateModes(a);
      if (m) lines.push(`  ~ ${r.name} (${a.name}) is bimodal: ${modesText(m)}`);
    }
    const self = r.arms[r.arms.length - 1]!;
    for (const o of r.arms.slice(0, -1)) {
      const byMode = compareByMode(o, self);
      if (byMode) lines.push(`  ~ ${r.name}: ${self.name} vs ${o.name} by mode: ${byMode.map((m) => `${m.mode} ${mpps(m.a)} : ${mpps(m.b)} (${ciText(m)})`).join(', ')}`);
    }
  }
  return `${title}\n${table.toString()}\n${lines.map((l) => `${l}\n`).join('')}`;
}
