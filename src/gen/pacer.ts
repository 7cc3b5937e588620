/**
 * The generator's schedule: packet i of a stream departs at `deadline(i)`
 * nanoseconds after the run's start, a pure function of i and the pattern.
 * Deadlines are absolute, never a sum of sleeps, so a late burst does not
 * push the ones after it: the sender catches up or reports the lateness.
 * A burst of N packets departs at the deadline of its first packet.
 */
import { ArgError } from '../errors.js';

/** A constant rate: packet i at i / rate. */
export interface ConstantPattern {
  /** 'constant'. */
  kind: 'constant';
}

/** On/off bursts: `on` seconds at the stream's rate, then `off` seconds silent, repeated. */
export interface BurstPattern {
  /** 'burst'. */
  kind: 'burst';
  /** Seconds sending at the stream's rate. */
  on: number;
  /** Seconds silent. */
  off: number;
}

/** A ramp: from `from` to the stream's rate, linearly over `over` seconds, then the stream's rate. */
export interface RampPattern {
  /** 'ramp'. */
  kind: 'ramp';
  /** The starting rate (as the stream's rate is written). */
  from: string | number;
  /** Seconds the ramp lasts. */
  over: number;
}

/** How a stream's rate varies over the run. */
export type PatternSpec = ConstantPattern | BurstPattern | RampPattern;

/** A stream's deadlines. */
export interface Pacer {
  /** Nanoseconds from the run's start at which packet `i` departs; non-decreasing in i. */
  deadline(i: number): number;
}

/** Packets `p` would send before `tNs`: the first i with deadline(i) ≥ tNs. */
export function countBefore(p: Pacer, tNs: number): number {
  if (tNs <= 0) return 0;
  let hi = 1;
  while (p.deadline(hi) < tNs) {
    hi *= 2;
    if (hi > 2 ** 52) throw new ArgError(`pacer: more than 2^52 packets before ${tNs} ns`);
  }
  let lo = 0;
  // deadline(lo) < tNs ≤ deadline(hi), or lo = 0 with deadline(0) = 0 < tNs.
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (p.deadline(mid) < tNs) lo = mid;
    else hi = mid;
  }
  return hi;
}

const KB = 1e3;
const UNITS: Record<string, number> = { pps: 1, kpps: KB, mpps: 1e6, gpps: 1e9, bps: 1, kbps: 1e3, mbps: 1e6, gbps: 1e9 };

/**
 * A rate: a number (packets per second) or `N<unit>` with unit pps, kpps,
 * Mpps, bps, kbps, Mbps or Gbps (bits of the frames as sent, without FCS,
 * preamble or gap), turned into packets per second with `meanLen` bytes a
 * packet.
 * @throws ArgError naming `what` when it is not a positive rate.
 */
export function parseRate(rate: string | number, meanLen: number, what: string): number {
  let pps: number;
  if (typeof rate === 'number') pps = rate;
  else {
    const m = /^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-zA-Z]*)\s*$/.exec(rate);
    const unit = m ? (m[2] || 'pps').toLowerCase() : '';
    const mul = UNITS[unit];
    if (!m || mul === undefined) throw new ArgError(`${what}: '${rate}' is not a rate (a number with pps, kpps, Mpps, kbps, Mbps or Gbps)`);
    const x = Number(m[1]) * mul;
    pps = unit.endsWith('bps') ? x / (meanLen * 8) : x;
  }
  if (!Number.isFinite(pps) || pps <= 0) throw new ArgError(`${what}: ${JSON.stringify(rate)} must be a positive rate`);
  if (pps > 1e10) throw new ArgError(`${what}: ${JSON.stringify(rate)} is above 10 Gpps`);
  return pps;
}

function seconds(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ArgError(`${what}: ${JSON.stringify(v)} must be a positive number of seconds`);
  return v;
}

/**
 * The pacer of a stream sending `pps` packets per second (the rate while on,
 * and the ramp's end) in `pattern` (default constant).
 * @throws ArgError naming `what` and the bad field.
 */
export function makePacer(pps: number, pattern: PatternSpec | undefined, meanLen: number, what: string): Pacer {
  const gap = 1e9 / pps;
  const p = pattern ?? { kind: 'constant' };
  if (typeof p !== 'object' || p === null) throw new ArgError(`${what}: pattern: not an object`);
  switch (p.kind) {
    case 'constant':
      return {
        deadline: (i) => i * gap,
      };
    case 'burst': {
      const onNs = seconds(p.on, `${what}: pattern.on`) * 1e9;
      const period = onNs + seconds(p.off, `${what}: pattern.off`) * 1e9;
      // Whole packets per on-period, so every period starts on its own deadline.
      const m = Math.max(1, Math.round(onNs / gap));
      return {
        deadline: (i) => Math.floor(i / m) * period + (i % m) * gap,
      };
    }
    case 'ramp': {
      const from = parseRate(p.from, meanLen, `${what}: pattern.from`) / 1e9;
      const to = pps / 1e9;
      const over = seconds(p.over, `${what}: pattern.over`) * 1e9;
      const b = (to - from) / over;
      // Packets due by t on the ramp: ∫ rate = from·t + b·t²/2; rampN by its end.
      const rampN = ((from + to) / 2) * over;
      return {
        // The root of b/2·t² + from·t = i, written so b = 0 and b < 0 stay exact.
        deadline: (i) => (i === 0 ? 0 : i <= rampN ? (2 * i) / (from + Math.sqrt(from * from + 2 * b * i)) : over + (i - rampN) / to),
      };
    }
    default:
      throw new ArgError(`${what}: pattern kind ${JSON.stringify((p as { kind: unknown }).kind)} must be constant, burst or ramp`);
  }
}
