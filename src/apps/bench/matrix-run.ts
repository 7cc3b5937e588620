/**
 * Runs a matrix: every arm of every cell `pairs` times in the alternating
 * schedule, each run a fresh testpmd process with its own warm-up, the other
 * load on the machine sampled around each run. Returns the report.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PcapWriter } from '../../pcap/writer.js';
import { comparisons, expandCells, testpmdArgs, validateConfig, vhostUserArgs, type Cell, type MatrixConfig, type Variant, type VhostUserSide } from './matrix.js';
import { measureKernelPorts } from './kernel-ports.js';
import { CpuProbe } from './cpu-probe.js';
import { cpuSnapshot, machineFacts, otherLoad } from './machine.js';
import { cellWarnings, compareArms, lcoreScaling, REPORT_SCHEMA, summarizeArm, type ArmResult, type BenchReport } from './report.js';
import { BenchRunError } from '../../errors.js';
import { schedule } from './schedule.js';
import { measureMemifPair } from './memif-pair.js';
import { dpdkTestpmd, pairOutcome, runTestpmd } from './testpmd-run.js';
import { defaultDpdkBuild, runsDpdk, type DpdkBuild } from './dpdk.js';

/** Measures one run of `variant` in `cell`, in Mpps. */
export type MeasureFn = (cell: Cell, variant: Variant, config: MatrixConfig) => Promise<number>;

export const measureTestpmd: MeasureFn = (cell, variant, config) => {
  const ports = config.ports ?? 'null';
  if (ports === 'vhost-user') return measureVhostUser(cell, variant, config);
  if (ports === 'memif') return measureMemifPair(cell, variant, config);
  if (ports === 'kernel') return measureKernelPorts(cell, variant, config);
  const { eal, app } = testpmdArgs(cell, variant, undefined, ports, ports === 'pcap-replay' ? replayCapture(cell.size) : '', config.nbDesc);
  return runTestpmd({ system: variant.system ?? 'dpkit', eal, app, seconds: config.seconds, warmup: config.warmup, countTx: cell.engine === 'txonly', checkout: variant.checkout, watch: variant.watch, dpdk: variant.dpdk });
};

/**
 * Seconds a vhost-user side may take before it forwards: DPDK's virtio_user
 * has been seen to print its first statistics 12 s after its start here.
 */
const VHOST_STARTUP = 12;
/** Seconds the host's run may take beyond the guest's (it starts first); the side not measured is stopped when the measured one ends. */
const HOST_MARGIN = 6;
const SOCKET_WAIT_MS = 30_000;

/**
 * One vhost-user cell's run: a fresh socket in a temporary folder, the pair
 * run on it (runVhostUserPair), the receiver's rate.
 */
async function measureVhostUser(cell: Cell, variant: Variant, config: MatrixConfig): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-vhost-'));
  try {
    const sock = join(dir, 'vh.sock');
    const { host, guest } = vhostUserArgs(cell, variant, sock);
    return await runVhostUserPair(host, guest, sock, { seconds: config.seconds, warmup: config.warmup, checkout: variant.checkout, dpdk: variant.dpdk });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Two testpmds on one vhost-user socket: the host starts and listens, the
 * guest connects once the socket exists, and the measured side's rate is
 * the result. The side not measured runs until the measured one has its
 * blocks, and then stops; its own result is not used (its error is, beside
 * the measured side's, when both fail: pairOutcome).
 * @param opts.checkout another dpkit tree for dpkit's sides; opts.dpdk the dpdk-testpmd for DPDK's
 */
export async function runVhostUserPair(host: VhostUserSide, guest: VhostUserSide, sock: string, opts: { seconds: number; warmup: number; checkout?: string; dpdk?: string }): Promise<number> {
  let guestEnded!: () => void;
  const guestDone = new Promise<void>((r) => (guestEnded = r));
  const run = (side: VhostUserSide, name: string, startup: number, peerOf: Promise<unknown>) =>
    runTestpmd({
      system: side.system,
      eal: side.eal,
      app: side.app,
      seconds: opts.seconds,
      warmup: opts.warmup,
      startup,
      countTx: !side.measured,
      checkout: side.system === 'dpkit' ? opts.checkout : undefined,
      dpdk: opts.dpdk,
      prefix: `dpkit-bench-${process.pid}-${name}`,
      stopWhen: side.measured ? undefined : peerOf,
    });
  const hostRun = run(host, 'host', VHOST_STARTUP + HOST_MARGIN, guestDone);
  hostRun.catch(() => {}); // awaited below; a failure before then must not go unhandled
  const deadline = Date.now() + SOCKET_WAIT_MS;
  while (!existsSync(sock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const guestRun = existsSync(sock) ? run(guest, 'guest', VHOST_STARTUP, hostRun) : Promise.reject(new BenchRunError(`the ${host.system} host did not listen at ${sock} within ${SOCKET_WAIT_MS / 1000} s`));
  guestRun.then(guestEnded, guestEnded);
  const [h, g] = await Promise.allSettled([hostRun, guestRun]);
  const hostSide = { role: 'host', result: h };
  const guestSide = { role: 'guest', result: g };
  return host.measured ? pairOutcome(hostSide, guestSide) : pairOutcome(guestSide, hostSide);
}

export interface MatrixRunOptions {
  measure?: MeasureFn;
  /** Live progress, one line at a time (the CLI redraws it on stderr). */
  progress?: (line: string) => void;
  /** Whether DPDK's testpmd on PATH can run here (default: whether it is installed); arms given a build by --dpdk run regardless. */
  dpdk?: boolean;
  /** The builds the config's DPDK arms were repeated for (`--dpdk`, withDpdkBuilds), recorded as machine.dpdkBuilds. */
  dpdkBuilds?: DpdkBuild[];
  command?: string;
  /** Probe the CPUs before each run and record it beside the sample (cpu-probe.ts); default: when `measure` is the real one. */
  probe?: boolean;
}

export async function runMatrix(config: MatrixConfig, opts: MatrixRunOptions = {}): Promise<BenchReport> {
  validateConfig(config, `bench ${config.name}`);
  const measure = opts.measure ?? measureTestpmd;
  const dpdk = opts.dpdk ?? dpdkTestpmd() !== null;
  const warnings: string[] = [];
  const variants = config.variants.filter((v) => dpdk || v.dpdk !== undefined || !runsDpdk(v));
  const skipped = config.variants.filter((v) => !variants.includes(v));
  if (skipped.length) warnings.push(`skipped ${skipped.map((v) => v.name).join(', ')}: dpdk-testpmd is not installed (apt-get install dpdk)`);
  if (variants.length === 0) throw new Error(`bench ${config.name}: no arm can run here`);
  const cells = expandCells(config);
  const started = new Date();
  const probe = (opts.probe ?? opts.measure === undefined) ? await CpuProbe.start() : null;
  const arms: (Omit<ArmResult, 'median' | 'min' | 'max'> & { failures: string[] })[][] = cells.map(() =>
    variants.map((v) => ({ name: v.name, system: v.system ?? 'dpkit', samples: [], load: [], pairs: [], failures: [], ...(probe ? { probes: [] } : {}) })),
  );

  const runs = schedule(cells.length, variants.length, config.pairs, config.seed ?? 1);
  const t0 = performance.now();
  try {
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i]!;
      const cell = cells[run.cell]!;
      const variant = variants[run.arm]!;
      const elapsed = (performance.now() - t0) / 1000;
      const eta = i === 0 ? '' : ` · ETA ${clock((elapsed / i) * (runs.length - i))}`;
      opts.progress?.(`[${i + 1}/${runs.length}] ${cell.id} · ${variant.name} · pair ${run.pair + 1}/${config.pairs}${eta}`);
      const arm = arms[run.cell]![run.arm]!;
      const probed = await probe?.probe();
      const before = cpuSnapshot();
      const mpps = await measureOrRetry(() => measure(cell, variant, config));
      const load = otherLoad(before, cpuSnapshot());
      if (typeof mpps === 'string') {
        arm.failures.push(mpps);
        warnings.push(`${cell.id}, ${variant.name}, pair ${run.pair + 1}: failed twice, left out: ${mpps}`);
        continue;
      }
      arm.samples.push(mpps);
      arm.load.push(load);
      arm.pairs.push(run.pair);
      if (probed) arm.probes?.push(probed);
    }
  } finally {
    await probe?.close();
  }

  const names = variants.map((v) => v.name);
  const pairs = comparisons(config, names);
  const results = cells.map((cell, c) => {
    const done = arms[c]!.map(summarizeArm);
    const byName = new Map(done.map((a) => [a.name, a]));
    return {
      ...cell,
      arms: done,
      comparisons: pairs.map(([a, b]) => compareArms(byName.get(a)!, byName.get(b)!)),
      warnings: cellWarnings({ id: cell.id, arms: done }),
    };
  });
  return {
    schema: REPORT_SCHEMA,
    name: config.name,
    title: config.title,
    command: opts.command ?? '',
    config,
    machine: { ...machineFacts(), dpdkBuilds: opts.dpdkBuilds ?? dpdkBuildsUsed(variants) },
    started: started.toISOString(),
    finished: new Date().toISOString(),
    cells: results,
    scaling: lcoreScaling(results),
    warnings,
  };
}

/** Without --dpdk: the build on PATH, when an arm ran it. */
function dpdkBuildsUsed(variants: Variant[]): DpdkBuild[] {
  const b = variants.some((v) => runsDpdk(v) && v.dpdk === undefined) ? defaultDpdkBuild(dpdkTestpmd()) : null;
  return b ? [b] : [];
}

/**
 * One run, tried again once when the process it measures fails (a slow start on
 * a busy machine): the rate, or the second failure's reason. Anything other
 * than a BenchRunError is a bug and propagates.
 */
async function measureOrRetry(run: () => Promise<number>): Promise<number | string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof BenchRunError)) throw e;
      if (attempt === 2) return e.message;
    }
  }
}

let captureDir: string | undefined;

/**
 * A capture of 1024 UDP-like packets of `size` bytes for replay cells, made
 * once per run in a temporary folder that goes when the process exits.
 */
export function replayCapture(size: number): string {
  if (captureDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-pcap-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    captureDir = dir;
  }
  const file = join(captureDir, `replay-${size}.pcap`);
  if (existsSync(file)) return file;
  const w = PcapWriter.create(file);
  const frame = new Uint8Array(size);
  for (let i = 0; i < 1024; i++) {
    frame.set([0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0], 0);
    for (let k = 16; k < size; k++) frame[k] = (k + i) & 0xff;
    w.write(frame, 0, size, 1_700_000_000, i * 1000);
  }
  w.close();
  return file;
}

/** Seconds as m:ss (or h:mm:ss). */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
