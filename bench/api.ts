/**
 * The public API against DPDK's own program: examples/l2fwd (dpkit's l2fwd
 * on `import … from 'dpkit'`) and DPDK's l2fwd, built here from Debian's
 * dpdk-doc sources against libdpdk-dev, on two net_null ports (64 B), with
 * 1 and 2 forwarding lcores. dpkit runs twice: the MAC rewrite in plain
 * TypeScript through the public accessors, and as one BurstOps.macRewrite
 * kernel call per burst (`--kernel`). Each run prints l2fwd's statistics
 * every second (`-T 1`); throughput is the median per-second growth of
 * "Total packets sent" after the warm-up. The runner alternates the cases.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { dpdkEalArgs } from '../src/apps/bench/dpdk-memory.js';
import { bootstrapRatio, summarize, verdict } from '../src/apps/bench/stats.js';
import type { BenchCase, BenchOptions, Benchmark } from '../src/apps/bench/types.js';
import { DpkitError } from '../src/errors.js';
import { packageRoot } from '../src/package.js';

/** Where Debian's dpdk-doc puts the examples' sources. */
const EXAMPLES = '/usr/share/dpdk/examples';
const PORTS = ['--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64'];
type Arm = 'dpdk' | 'ts' | 'kernel';
const ARMS: Arm[] = ['dpdk', 'ts', 'kernel'];
const ARM_NAME: Record<Arm, string> = { dpdk: "DPDK's l2fwd", ts: 'dpkit l2fwd, rewrite in TypeScript', kernel: 'dpkit l2fwd, rewrite as BurstOps kernel' };

/** DPDK's l2fwd could not be built: the bench says so in one line. */
export class DpdkBuildError extends DpkitError {
  constructor(message: string) {
    super('ENODPDK', message);
  }
}

let built: string | undefined;

/**
 * DPDK's l2fwd: DPKIT_DPDK_L2FWD=PATH, or built once per machine (cached under
 * the temp folder): a copy of examples/common and examples/l2fwd, `make`
 * against pkg-config's libdpdk.
 * @returns the binary's path. Throws DpdkBuildError when the sources or the build fail.
 */
export function dpdkL2fwd(): string {
  if (built) return built;
  // Another build, such as a native 25.11 one (scripts/build-dpdk.sh builds examples/dpdk-l2fwd).
  const env = process.env['DPKIT_DPDK_L2FWD'];
  if (env) {
    if (!existsSync(env)) throw new DpdkBuildError(`bench api: DPKIT_DPDK_L2FWD=${env}: no such file`);
    return (built = env);
  }
  const dir = join(tmpdir(), 'dpkit-bench-l2fwd');
  const bin = join(dir, 'l2fwd', 'build', 'l2fwd');
  if (!existsSync(bin)) {
    const hint = 'apt-get install dpdk-doc libdpdk-dev pkg-config make gcc';
    if (!existsSync(join(EXAMPLES, 'l2fwd'))) throw new DpdkBuildError(`bench api: DPDK's l2fwd sources are not in ${EXAMPLES} (${hint})`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const d of ['common', 'l2fwd']) cpSync(join(EXAMPLES, d), join(dir, d), { recursive: true });
    try {
      execFileSync('make', ['-C', join(dir, 'l2fwd')], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    } catch (e) {
      const err = (e as { stderr?: string }).stderr ?? String(e);
      const last = err.trim().split('\n').at(-1) ?? '';
      throw new DpdkBuildError(`bench api: building DPDK's l2fwd failed (${last.slice(0, 160)}); ${hint}`);
    }
    if (!existsSync(bin)) throw new DpdkBuildError(`bench api: make built no ${bin}`);
  }
  return (built = bin);
}

/** The command of one run: DPDK's l2fwd or dpkit's example, `lcores` forwarding lcores. */
function command(arm: Arm, lcores: number, prefix: string): string[] {
  // One lcore polls both ports (-q 2); two take one each (-q 1).
  const app = ['--', '-p', '0x3', '-q', lcores === 1 ? '2' : '1', '-T', '1'];
  if (arm === 'dpdk') {
    // l2fwd's main lcore forwards too: 1 lcore is `-l 1`, 2 are CPUs 0 and 1.
    return [dpdkL2fwd(), '-l', lcores === 1 ? '1' : '0-1', ...dpdkEalArgs(prefix), ...PORTS, ...app];
  }
  // dpkit's main thread sleeps: it shares CPU 0 with a worker when there are two.
  const lc = lcores === 1 ? '0@0,1@1' : '0@0,1@0,2@1';
  return [process.execPath, 'dist/examples/l2fwd/main.js', '--lcores', lc, ...PORTS, ...app, ...(arm === 'kernel' ? ['--kernel'] : [])];
}

/** Per-second growth of l2fwd's "Total packets sent", from its statistics blocks. */
export function sentPerPeriod(output: string): number[] {
  const totals = [...output.matchAll(/Total packets sent:\s+(\d+)/g)].map((m) => Number(m[1]));
  return totals.slice(1).map((t, i) => t - totals[i]!);
}

/** One run: forward for warm-up + duration, stop with SIGINT, Mpps from the measured seconds. */
async function run(arm: Arm, lcores: number, opts: BenchOptions): Promise<{ mpps: number; gc: number }> {
  const warm = Math.max(1, Math.round(opts.warmupMs / 1000));
  const secs = Math.max(1, Math.round(opts.durationMs / 1000));
  const prefix = `dpkit-bench-l2fwd-${process.pid}`;
  const [bin, ...args] = command(arm, lcores, prefix);
  // Start-up (DPDK's EAL, dpkit's workers) takes a few seconds before the first block.
  const out = await new Promise<string>((resolve) => {
    let text = '';
    const child = spawn('timeout', ['-s', 'INT', String(warm + secs + 4), bin!, ...args], { cwd: fileURLToPath(packageRoot()), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', () => {
      rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
      resolve(text);
    });
  });
  const measured = sentPerPeriod(out).slice(warm, warm + secs);
  if (measured.length === 0) throw new Error(`bench api: ${ARM_NAME[arm]} (${lcores} lcore) printed no statistics:\n${out.slice(-400)}`);
  return { mpps: summarize(measured).median / 1e6, gc: 0 };
}

export const benchmark: Benchmark = {
  name: 'api',
  title: "examples/l2fwd against DPDK's l2fwd: 2 net_null ports, 64 B, MAC rewrite in TypeScript or as a kernel; Mpps sent, summed over ports",
  defaults: { reps: 5, durationMs: 3000, warmupMs: 1000 },
  cases: () => {
    dpdkL2fwd(); // fails the bench here, in one line, before any run
    const cases: BenchCase[] = [];
    for (const lcores of [1, 2]) {
      for (const arm of ARMS) cases.push({ name: `${lcores} lcore${lcores > 1 ? 's' : ''}: ${ARM_NAME[arm]}`, params: { lcores, arm, size: 64 }, measure: (o) => run(arm, lcores, o) });
    }
    return cases;
  },
  summary: (results) => {
    const fmt = (x: number) => x.toFixed(2);
    const t = new Table({ head: ['lcores', 'dpkit arm', 'dpkit Mpps', 'DPDK Mpps', 'dpkit / DPDK (95 % CI)', 'verdict'], style: { head: [], border: [] } });
    for (const lcores of [1, 2]) {
      const d = results.find((r) => r.params.lcores === lcores && r.params.arm === 'dpdk');
      for (const arm of ['ts', 'kernel'] as const) {
        const a = results.find((r) => r.params.lcores === lcores && r.params.arm === arm);
        if (!a || !d || a.samples.length === 0 || d.samples.length === 0) continue;
        const ci = bootstrapRatio(d.samples, a.samples);
        t.push([lcores, arm, fmt(summarize(a.samples).median), fmt(summarize(d.samples).median), `${fmt(ci.ratio)} (${fmt(ci.lo)}..${fmt(ci.hi)})`, a.samples.length < 5 ? 'too few runs' : verdict(ci)]);
      }
    }
    return `dpkit l2fwd / DPDK l2fwd (goal: >= 1.0 with the TypeScript rewrite, >= 2.0 with the kernel)\n${t.toString()}`;
  },
};
