/**
 * Runs a matrix: every arm of every cell `pairs` times in the alternating
 * schedule, each run a fresh testpmd process with its own warm-up, the other
 * load on the machine sampled around each run. Returns the report.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PcapWriter } from '../../pcap/writer.js';
import { comparisons, expandCells, testpmdArgs, validateConfig, type Cell, type MatrixConfig, type Variant } from './matrix.js';
import { measureKernelPorts } from './kernel-ports.js';
import { cpuSnapshot, machineFacts, otherLoad } from './machine.js';
import { cellWarnings, compareArms, lcoreScaling, REPORT_SCHEMA, summarizeArm, type ArmResult, type BenchReport } from './report.js';
import { schedule } from './schedule.js';
import { dpdkTestpmd, runTestpmd } from './testpmd-run.js';

/** Measures one run of `variant` in `cell`, in Mpps. */
export type MeasureFn = (cell: Cell, variant: Variant, config: MatrixConfig) => Promise<number>;

export const measureTestpmd: MeasureFn = (cell, variant, config) => {
  const ports = config.ports ?? 'null';
  if (ports === 'kernel') return measureKernelPorts(cell, variant, config);
  const { eal, app } = testpmdArgs(cell, variant, undefined, ports, ports === 'pcap-replay' ? replayCapture(cell.size) : '', config.nbDesc);
  return runTestpmd({ system: variant.system ?? 'dpkit', eal, app, seconds: config.seconds, warmup: config.warmup, countTx: cell.engine === 'txonly', checkout: variant.checkout });
};

export interface MatrixRunOptions {
  measure?: MeasureFn;
  /** Live progress, one line at a time (the CLI redraws it on stderr). */
  progress?: (line: string) => void;
  /** Whether DPDK's testpmd can run here (default: whether it is installed). */
  dpdk?: boolean;
  command?: string;
}

export async function runMatrix(config: MatrixConfig, opts: MatrixRunOptions = {}): Promise<BenchReport> {
  validateConfig(config, `bench ${config.name}`);
  const measure = opts.measure ?? measureTestpmd;
  const dpdk = opts.dpdk ?? dpdkTestpmd() !== null;
  const warnings: string[] = [];
  const variants = config.variants.filter((v) => dpdk || v.system !== 'dpdk');
  const skipped = config.variants.filter((v) => !variants.includes(v));
  if (skipped.length) warnings.push(`skipped ${skipped.map((v) => v.name).join(', ')}: dpdk-testpmd is not installed (apt-get install dpdk)`);
  if (variants.length === 0) throw new Error(`bench ${config.name}: no arm can run here`);
  const cells = expandCells(config);
  const started = new Date();
  const arms: Omit<ArmResult, 'median' | 'min' | 'max'>[][] = cells.map(() => variants.map((v) => ({ name: v.name, system: v.system ?? 'dpkit', samples: [], load: [], pairs: [] })));

  const runs = schedule(cells.length, variants.length, config.pairs, config.seed ?? 1);
  const t0 = performance.now();
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    const cell = cells[run.cell]!;
    const variant = variants[run.arm]!;
    const elapsed = (performance.now() - t0) / 1000;
    const eta = i === 0 ? '' : ` · ETA ${clock((elapsed / i) * (runs.length - i))}`;
    opts.progress?.(`[${i + 1}/${runs.length}] ${cell.id} · ${variant.name} · pair ${run.pair + 1}/${config.pairs}${eta}`);
    const before = cpuSnapshot();
    const mpps = await measure(cell, variant, config);
    const load = otherLoad(before, cpuSnapshot());
    const arm = arms[run.cell]![run.arm]!;
    arm.samples.push(mpps);
    arm.load.push(load);
    arm.pairs.push(run.pair);
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
    machine: machineFacts(),
    started: started.toISOString(),
    finished: new Date().toISOString(),
    cells: results,
    scaling: lcoreScaling(results),
    warnings,
  };
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
