/**
 * Bimodal arms, and what their modes went with. On this VM a two-process
 * pair (memif, vhost-user) runs some repetitions at twice the rate of the
 * rest, DPDK's pairs as much as dpkit's; an interval over such samples says
 * "no significant difference" and nothing more. Splitting each arm's runs
 * into its two levels (below), and setting beside each side the
 * CPU probes taken before its runs (cpu-probe.ts), shows whether the fast runs
 * had a shorter cache-line round trip between the two CPUs, a faster clock,
 * or neither.
 */
import type { CpuProbeResult } from './cpu-probe.js';
import { MIN_PAIRS } from './matrix.js';
import { bootstrapRatio, summarize, verdict, type RatioCI, type Verdict } from './stats.js';

/** Sorted neighbours this far apart (max/min) split an arm into two modes; a unimodal arm's runs here spread by less than 15 %. */
export const MODE_GAP = 1.3;

export interface RateMode {
  runs: number;
  /** The mode's rates, in run order. */
  samples: number[];
  /** Median Mpps of the mode's runs. */
  mpps: number;
  /** Medians of the probes before the mode's runs (NaN where no probe finished). */
  roundTripNs: number;
  spinNs: number;
}

export interface RateModes {
  slow: RateMode;
  fast: RateMode;
}

/**
 * The arm's slow and fast runs, or null when its rates have no gap of
 * MODE_GAP or it carries no probe per sample. The cut is where the two sides'
 * log rates are farthest apart for their weights (Otsu's between-class
 * variance), not simply the widest gap: one stray run far below a 2-against-10
 * Mpps arm (the memif pair at 1518 B had one at 0.64) is a wide gap but not
 * a level, and splitting there hid the two levels every other run fell in.
 * The rates on either side of the cut must still be MODE_GAP apart.
 */
export function rateModes(arm: { samples: number[]; probes?: CpuProbeResult[] }): RateModes | null {
  const { samples, probes } = arm;
  if (!probes || probes.length !== samples.length || samples.length < 2) return null;
  const order = samples.map((_, i) => i).sort((a, b) => samples[a]! - samples[b]!);
  const logs = order.map((i) => Math.log(samples[i]!));
  const n = logs.length;
  const total = logs.reduce((s, x) => s + x, 0);
  let cut = -1;
  let best = 0;
  let below = 0;
  for (let k = 1; k < n; k++) {
    below += logs[k - 1]!;
    const d = below / k - (total - below) / (n - k);
    const between = (k / n) * ((n - k) / n) * d * d;
    if (between > best) [cut, best] = [k, between];
  }
  if (cut < 0 || samples[order[cut]!]! / samples[order[cut - 1]!]! < MODE_GAP) return null;
  const mode = (runs: number[]): RateMode => ({
    runs: runs.length,
    samples: [...runs].sort((x, y) => x - y).map((i) => samples[i]!),
    mpps: median(runs.map((i) => samples[i]!)),
    roundTripNs: median(runs.map((i) => probes[i]!.roundTripNs)),
    spinNs: median(runs.map((i) => (probes[i]!.spinNs[0] + probes[i]!.spinNs[1]) / 2)),
  });
  return { slow: mode(order.slice(0, cut)), fast: mode(order.slice(cut)) };
}

/** One mode of two bimodal arms compared: median(B) / median(A) over that mode's runs, with its interval. */
export interface ModeComparison extends RatioCI {
  mode: 'slow' | 'fast';
  a: number;
  b: number;
  verdict: Verdict | 'too few runs';
}

/**
 * Two bimodal arms compared mode by mode, or null when either is not
 * bimodal or their modes do not line up (B's slow runs nearer A's fast level
 * than A's slow, or the reverse). Where the mode is the machine's, not the
 * system's, the pooled ratio measures how often each arm drew the fast mode;
 * these measure the systems. A mode with fewer than MIN_PAIRS runs on
 * either side gets no verdict.
 */
export function compareByMode(a: { samples: number[]; probes?: CpuProbeResult[] }, b: { samples: number[]; probes?: CpuProbeResult[] }): ModeComparison[] | null {
  const ma = rateModes(a);
  const mb = rateModes(b);
  if (!ma || !mb) return null;
  const near = (x: number, to: number, other: number): boolean => Math.abs(Math.log(x / to)) < Math.abs(Math.log(x / other));
  if (!near(mb.slow.mpps, ma.slow.mpps, ma.fast.mpps) || !near(mb.fast.mpps, ma.fast.mpps, ma.slow.mpps)) return null;
  return (['slow', 'fast'] as const).map((mode) => {
    const ci = bootstrapRatio(ma[mode].samples, mb[mode].samples);
    const enough = Math.min(ma[mode].runs, mb[mode].runs) >= MIN_PAIRS;
    return { mode, a: ma[mode].mpps, b: mb[mode].mpps, ...ci, verdict: enough ? verdict(ci) : 'too few runs' };
  });
}

/** "slow 9 runs 7.10 Mpps, round trip 980 ns, spin 1.95 ns | fast 3 runs 14.20 Mpps, 310 ns, 1.94 ns" */
export function modesText(m: RateModes): string {
  const side = (name: string, s: RateMode, long: boolean): string =>
    `${name} ${s.runs} run${s.runs === 1 ? '' : 's'} ${s.mpps.toFixed(2)} Mpps, ${long ? 'round trip ' : ''}${ns(s.roundTripNs, 0)}, ${long ? 'spin ' : ''}${ns(s.spinNs, 2)}`;
  return `${side('slow', m.slow, true)} | ${side('fast', m.fast, false)}`;
}

/** The run's probes in one line: "round trip 540 ns [310..1020], spin 1.95 ns [1.90..2.01]", or null without any. */
export function probeSummary(probes: CpuProbeResult[]): string | null {
  const rt = probes.map((p) => p.roundTripNs).filter((v) => Number.isFinite(v));
  const spin = probes.map((p) => (p.spinNs[0] + p.spinNs[1]) / 2).filter((v) => Number.isFinite(v));
  if (rt.length === 0) return null;
  const a = summarize(rt);
  const b = summarize(spin);
  return `round trip ${ns(a.median, 0)} [${a.min.toFixed(0)}..${a.max.toFixed(0)}], spin ${ns(b.median, 2)} [${b.min.toFixed(2)}..${b.max.toFixed(2)}]`;
}

/** Median of the finite values (a probe that timed out is NaN). */
const median = (xs: number[]): number => summarize(xs.filter((x) => Number.isFinite(x))).median;

const ns = (v: number, digits: number): string => (Number.isFinite(v) ? `${v.toFixed(digits)} ns` : 'no probe');
