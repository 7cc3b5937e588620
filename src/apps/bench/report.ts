/**
 * A bench run as data: the JSON `--json FILE` writes and `--compare` reads.
 * It keeps every raw sample in run order, so any statistic can be recomputed
 * later; the summaries and verdicts in it are derived from those samples.
 */
import { readFileSync } from 'node:fs';
import { ArgError } from '../../errors.js';
import type { CpuProbeResult } from './cpu-probe.js';
import type { MachineFacts } from './machine.js';
import { MIN_PAIRS, type Cell, type MatrixConfig } from './matrix.js';
import { bootstrapRatio, summarize, verdict, type Verdict } from './stats.js';

export const REPORT_SCHEMA = 'dpkit-bench/1';
/** Other load (in CPUs) above which a cell's figures are flagged. */
export const LOAD_WARN = 0.25;

export interface ArmResult {
  name: string;
  system: string;
  /** Mpps of each run, in the order they ran. */
  samples: number[];
  /** Other load (CPUs busy elsewhere) during each run. */
  load: number[];
  /** Pair index of each run. */
  pairs: number[];
  /** The CPU probe taken right before each run (cpu-probe.ts); absent where no probe could run (no native shim, one CPU) and in older reports. */
  probes?: CpuProbeResult[];
  /** Runs that failed twice and measured nothing: each one's reason (older reports lack it). */
  failures?: string[];
  median: number;
  min: number;
  max: number;
}

export interface Comparison {
  a: string;
  b: string;
  /** median(B) / median(A), with its bootstrap interval. */
  ratio: number;
  lo: number;
  hi: number;
  level: number;
  /** From the interval; withheld when either arm has fewer than MIN_PAIRS runs (a bootstrap of 2 or 3 values is no interval). */
  verdict: Verdict | 'too few runs';
}

export interface CellResult extends Cell {
  arms: ArmResult[];
  comparisons: Comparison[];
  warnings: string[];
}

/** How an arm scales from 1 forwarding lcore to more, in cells that differ only in lcores. */
export interface Scaling {
  engine: string;
  size: number;
  burst: number;
  lcores: number;
  arm: string;
  /** median(n lcores) / median(1 lcore), with its bootstrap interval. */
  ratio: number;
  lo: number;
  hi: number;
}

export interface BenchReport {
  schema: typeof REPORT_SCHEMA;
  name: string;
  title: string;
  /** The command line that produced it, for the record. */
  command: string;
  config: MatrixConfig;
  machine: MachineFacts;
  started: string;
  finished: string;
  cells: CellResult[];
  scaling: Scaling[];
  /** Run-wide notes: skipped arms, load, missing peers. */
  warnings: string[];
  /** `--ceiling`: the ceiling micro-benchmark's rows (bench/ceiling.ts), median Mpps of one lcore with no engine. */
  ceiling?: { name: string; mpps: number }[];
}

/** The ceiling row a forwarding cell is read against: null rx+tx with no engine. */
export const CEILING_ROW = 'null rx+tx';

/**
 * A dpkit arm's median as a share of the ceiling: the `null rx+tx` row times the
 * cell's lcores (one lcore's ceiling each); undefined without a ceiling.
 */
export function ceilingShare(r: Pick<BenchReport, 'ceiling'>, lcores: number, mpps: number): number | undefined {
  const row = r.ceiling?.find((c) => c.name === CEILING_ROW);
  return row && row.mpps > 0 ? mpps / (row.mpps * lcores) : undefined;
}

/** Fills in an arm's summary from its samples. */
export function summarizeArm(arm: Omit<ArmResult, 'median' | 'min' | 'max'>): ArmResult {
  const s = summarize(arm.samples);
  return { ...arm, median: s.median, min: s.min, max: s.max };
}

export function compareArms(a: ArmResult, b: ArmResult): Comparison {
  const ci = bootstrapRatio(a.samples, b.samples);
  const enough = Math.min(a.samples.length, b.samples.length) >= MIN_PAIRS;
  return { a: a.name, b: b.name, ratio: ci.ratio, lo: ci.lo, hi: ci.hi, level: ci.level, verdict: enough ? verdict(ci) : 'too few runs' };
}

export function lcoreScaling(cells: CellResult[]): Scaling[] {
  const out: Scaling[] = [];
  for (const c of cells) {
    if (c.lcores === 1) continue;
    const one = cells.find((o) => o.lcores === 1 && o.engine === c.engine && o.size === c.size && o.burst === c.burst && String(o.txThresh) === String(c.txThresh));
    if (!one) continue;
    for (const arm of c.arms) {
      const base = one.arms.find((a) => a.name === arm.name);
      if (!base) continue;
      const k = compareArms(base, arm);
      out.push({ engine: c.engine, size: c.size, burst: c.burst, lcores: c.lcores, arm: arm.name, ratio: k.ratio, lo: k.lo, hi: k.hi });
    }
  }
  return out;
}

/** The warnings a cell's figures deserve: other load during its runs. */
export function cellWarnings(cell: { id: string; arms: ArmResult[] }): string[] {
  const out: string[] = [];
  for (const arm of cell.arms) {
    const busy = arm.load.filter((l) => l > LOAD_WARN);
    if (busy.length) out.push(`${cell.id}, ${arm.name}: other load up to ${Math.max(...busy).toFixed(2)} CPUs in ${busy.length} of ${arm.load.length} runs`);
  }
  return out;
}

/** Reads a saved report and checks its shape, naming the file and the problem. */
export function readReport(file: string): BenchReport {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ArgError(`${file}: not a bench report: ${(e as Error).message}`);
  }
  const fail = (m: string): never => {
    throw new ArgError(`${file}: not a bench report: ${m}`);
  };
  const r = data as Partial<BenchReport>;
  if (typeof r !== 'object' || r === null) fail('not a JSON object');
  if (r.schema !== REPORT_SCHEMA) fail(`schema is ${JSON.stringify(r.schema)}, expected "${REPORT_SCHEMA}"`);
  if (!Array.isArray(r.cells)) fail('cells: expected a list');
  r.cells!.forEach((c, i) => {
    if (typeof c?.id !== 'string') fail(`cells[${i}].id: expected a string`);
    if (!Array.isArray(c.arms)) fail(`cells[${i}].arms: expected a list`);
    c.arms.forEach((a, j) => {
      if (typeof a?.name !== 'string') fail(`cells[${i}].arms[${j}].name: expected a string`);
      if (!Array.isArray(a.samples) || !a.samples.every((x) => typeof x === 'number' && Number.isFinite(x))) fail(`cells[${i}].arms[${j}].samples: expected a list of numbers`);
    });
  });
  return r as BenchReport;
}

export interface ReportComparison {
  cell: string;
  arm: string;
  old: ArmResult;
  new: ArmResult;
  comparison: Comparison;
}

/**
 * Two saved runs side by side: for every cell and arm present in both, the
 * ratio new / old of medians with its bootstrap interval and verdict.
 */
export function compareReports(older: BenchReport, newer: BenchReport): { rows: ReportComparison[]; onlyOld: string[]; onlyNew: string[] } {
  const key = (cell: string, arm: string) => `${cell} · ${arm}`;
  const index = (r: BenchReport) => new Map(r.cells.flatMap((c) => c.arms.map((a) => [key(c.id, a.name), { cell: c.id, arm: a }] as const)));
  const o = index(older);
  const n = index(newer);
  const rows: ReportComparison[] = [];
  for (const [k, { cell, arm }] of n) {
    const before = o.get(k);
    if (!before) continue;
    const cmp = compareArms({ ...before.arm, name: 'old' }, { ...arm, name: 'new' });
    rows.push({ cell, arm: arm.name, old: before.arm, new: arm, comparison: cmp });
  }
  return { rows, onlyOld: [...o.keys()].filter((k) => !n.has(k)), onlyNew: [...n.keys()].filter((k) => !o.has(k)) };
}
