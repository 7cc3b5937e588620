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

/**
 * Poisson departures: exponential gaps of mean 1 / rate, drawn from a hash of
 * the packet's index and `seed`, so a schedule is repeatable and packet i's
 * deadline does not depend on the order deadlines are asked in.
 */
export interface PoissonPattern {
  /** 'poisson'. */
  kind: 'poisson';
  /** Seed of the gaps (u32, default 1): the same seed, the same departures. */
  seed?: number;
}

/** One step of a user schedule: `rate` (0: silent) for `for` seconds. */
export interface ScheduleStep {
  /** Seconds the step lasts. */
  for: number;
  /** The rate during the step (as the stream's rate is written), or 0 for silence. */
  rate: string | number;
}

/**
 * A user schedule: piecewise-constant rates, step after step; after the last
 * step the schedule starts again (`loop`) or holds the last step's rate.
 */
export interface SchedulePattern {
  /** 'schedule'. */
  kind: 'schedule';
  /** The steps, in order; at least one with a rate above 0. */
  steps: readonly ScheduleStep[];
  /** Repeat the steps after the last one (default false: hold the last rate). */
  loop?: boolean;
}

/** How a stream's rate varies over the run. */
export type PatternSpec = ConstantPattern | BurstPattern | RampPattern | PoissonPattern | SchedulePattern;

/** Pattern kinds, for messages. */
export const PATTERN_KINDS = 'constant, burst, ramp, poisson or schedule';

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

/**
 * Bytes a packet takes on the wire beyond its length. dpkit's packet lengths
 * (as DPDK's pkt_len, obytes and testpmd's --txpkts) exclude the FCS the NIC
 * appends; TRex's L2 bit rate counts it, and the L1 rate adds the preamble
 * with its start delimiter (8 B) and the inter-frame gap (12 B).
 */
export const RTE_ETHER_CRC_LEN = 4;
/** Preamble + SFD (8 B) + inter-frame gap (12 B) + FCS (4 B): a 60-byte packet is 84 B of a link's time. */
export const L1_OVERHEAD_LEN = 24;

/**
 * What a rate counts: packets; bits of the packet as dpkit and DPDK count it
 * (no FCS); L2 bits with the FCS (TRex's bps_L2); L1 bits on the wire
 * (TRex's bps_L1); or a share of the link's L1 bit rate.
 */
export type RateKind = 'pps' | 'bps' | 'bps-l2' | 'bps-l1' | 'percent';

/** A rate as written, checked but not yet turned into packets a second. */
export interface RateSpec {
  /** The number in its kind's base unit: pps, bit/s or percent. */
  value: number;
  /** What `value` counts. */
  kind: RateKind;
}

/** The link a `N%` rate is a share of: `ethdev.linkSpeed(port)` while the link is up, else 0. */
export interface RateLink {
  /** The port, for messages. */
  port: number;
  /** Link speed in Mbps (rte_eth_link's link_speed); 0: down or unknown. */
  mbps: number;
}

/** The units, for messages. */
export const RATE_UNITS = 'pps, kpps, Mpps; bps, kbps, Mbps, Gbps (no FCS), with -l2 (with FCS) or -l1 (on the wire); or N% of the link';

const SCALE: Record<string, number> = { '': 1, k: 1e3, m: 1e6, g: 1e9 };
/** Bytes a bit-rate kind adds to each packet's length. */
const BIT_EXTRA: Record<string, number> = { bps: 0, 'bps-l2': RTE_ETHER_CRC_LEN, 'bps-l1': L1_OVERHEAD_LEN };

/**
 * Checks a rate's syntax: a number (pps), or `N<unit>` with unit pps, kpps,
 * Mpps, Gpps; bps, kbps, Mbps, Gbps (bits of the packet as counted, no FCS);
 * the same with `-l2` (with the FCS: +4 B a packet) or `-l1` (on the wire:
 * +24 B; TRex's `bpsl1` spelling is taken too); or `N%` (0 < N ≤ 100) of the
 * link's L1 bit rate. Units are case-insensitive.
 * @throws ArgError naming `what`, in one line.
 */
export function parseRateSpec(rate: string | number, what: string): RateSpec {
  if (typeof rate === 'number') return { value: rate, kind: 'pps' };
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*(%|[a-zA-Z]*(?:-?[lL][12])?)\s*$/.exec(String(rate));
  const u = m ? /^(?:(|k|m|g)(pps|bps)(?:-?l([12]))?|(%))$/.exec(m[2]!.toLowerCase() || 'pps') : null;
  if (!m || !u || (u[2] === 'pps' && u[3] !== undefined)) throw new ArgError(`${what}: '${String(rate)}' is not a rate (a number with ${RATE_UNITS})`);
  const x = Number(m[1]);
  if (u[4] === '%') {
    if (!(x > 0 && x <= 100)) throw new ArgError(`${what}: '${rate}' must be a share of the link in (0, 100] %`);
    return { value: x, kind: 'percent' };
  }
  const kind: RateKind = u[2] === 'pps' ? 'pps' : u[3] === '1' ? 'bps-l1' : u[3] === '2' ? 'bps-l2' : 'bps';
  return { value: x * SCALE[u[1]!]!, kind };
}

/**
 * A rate turned into packets per second, with `meanLen` bytes a packet (its
 * length as sent, without FCS; a mixed-size stream's mean: the L1 and L2
 * overheads are per packet, so they add to the mean). `N%` is a share of
 * `link`'s L1 bit rate: 100 % of 10 Gbps is 14 880 952 pps of 60-byte
 * packets (64-byte frames). Syntax: `parseRateSpec`.
 * @throws ArgError naming `what` (and the port, for `%` on a link whose speed
 *   is unknown) when it is not a positive rate.
 */
export function parseRate(rate: string | number, meanLen: number, what: string, link?: RateLink): number {
  const r = parseRateSpec(rate, what);
  let pps: number;
  if (r.kind === 'pps') pps = r.value;
  else if (r.kind === 'percent') {
    if (link === undefined) throw new ArgError(`${what}: '${rate}' is a share of a link's speed, and no port's link is known here`);
    if (!(link.mbps > 0)) throw new ArgError(`${what}: '${rate}' is a share of port ${link.port}'s link speed, and port ${link.port}'s link is down or its speed unknown`);
    pps = (link.mbps * 1e6 * (r.value / 100)) / ((meanLen + L1_OVERHEAD_LEN) * 8);
  } else pps = r.value / ((meanLen + BIT_EXTRA[r.kind]!) * 8);
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
 * and the ramp's end) in `pattern` (default constant). The pattern's own
 * rates are read as `parseRate` reads them, with `meanLen` and `link`.
 * @throws ArgError naming `what` and the bad field.
 */
export function makePacer(pps: number, pattern: PatternSpec | undefined, meanLen: number, what: string, link?: RateLink): Pacer {
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
      const from = parseRate(p.from, meanLen, `${what}: pattern.from`, link) / 1e9;
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
    case 'poisson':
      return poissonPacer(pps, p.seed === undefined ? 1 : u32Seed(p.seed, `${what}: pattern.seed`));
    case 'schedule':
      return schedulePacer(p, meanLen, what, link);
    default:
      throw new ArgError(`${what}: pattern kind ${JSON.stringify((p as { kind: unknown }).kind)} must be ${PATTERN_KINDS}`);
  }
}

function u32Seed(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new ArgError(`${what}: ${JSON.stringify(v)} must be an integer in [0, 2^32)`);
  return v;
}

/** Poisson deadlines are prefix sums of gaps; one is kept every 2^CHECKPOINT_SHIFT packets. */
const CHECKPOINT_SHIFT = 10;
const CHECKPOINT = 1 << CHECKPOINT_SHIFT;

/**
 * A uniform in (0, 1] from packet `i` and `seed`: a 32-bit finaliser
 * (murmur3's fmix32) of the index mixed with the seed, so gap i is the same
 * whichever deadline is asked first. i is folded to 53 bits by its high word.
 */
function uniform(i: number, seed: number): number {
  let h = (i >>> 0) ^ Math.imul(Math.floor(i / 4294967296) ^ seed, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return ((h >>> 0) + 1) / 4294967296;
}

/**
 * deadline(i) = the sum of gaps 0..i-1, gap j = -ln(U_j) / rate. Prefix sums
 * are kept at every CHECKPOINT-th packet and a cursor remembers the last
 * deadline asked, so the send loop (asking in order) costs one gap a packet
 * and a random ask (countBefore's bisection) at most CHECKPOINT gaps. The
 * checkpoint table grows by doubling: no allocation per packet.
 */
function poissonPacer(pps: number, seed: number): Pacer {
  const mean = 1e9 / pps;
  const gap = (j: number): number => -Math.log(uniform(j, seed)) * mean;
  let cps = new Float64Array(1024); // cps[k] = deadline(k * CHECKPOINT)
  let nCps = 1;
  let curI = 0;
  let curT = 0;
  const extendTo = (k: number): void => {
    while (nCps <= k) {
      if (nCps === cps.length) {
        const bigger = new Float64Array(cps.length * 2);
        bigger.set(cps);
        cps = bigger;
      }
      let t = cps[nCps - 1]!;
      for (let j = (nCps - 1) * CHECKPOINT, end = nCps * CHECKPOINT; j < end; j++) t += gap(j);
      cps[nCps++] = t;
    }
  };
  return {
    deadline: (i) => {
      if (i < curI || i - curI >= CHECKPOINT) {
        const k = Math.floor(i / CHECKPOINT);
        extendTo(k);
        curI = k * CHECKPOINT;
        curT = cps[k]!;
      }
      for (; curI < i; curI++) curT += gap(curI);
      return curT;
    },
  };
}

/**
 * A user schedule: N(t), packets due by t, is piecewise linear; deadline(i)
 * is its inverse on the step that holds packet i. Silent steps add time and
 * no packets. Looping adds whole periods.
 */
function schedulePacer(p: SchedulePattern, meanLen: number, what: string, link: RateLink | undefined): Pacer {
  if (!Array.isArray(p.steps) || p.steps.length === 0) throw new ArgError(`${what}: pattern.steps: give at least one {for, rate} step`);
  const n = p.steps.length;
  const startNs = new Float64Array(n + 1); // step k starts at startNs[k]
  const startPkt = new Float64Array(n + 1); // and packet startPkt[k]
  const rate = new Float64Array(n); // packets per ns
  p.steps.forEach((step, k) => {
    const where = `${what}: pattern.steps[${k}]`;
    if (typeof step !== 'object' || step === null) throw new ArgError(`${where}: not an object`);
    const dur = seconds(step.for, `${where}.for`) * 1e9;
    rate[k] = step.rate === 0 || step.rate === '0' ? 0 : parseRate(step.rate, meanLen, `${where}.rate`, link) / 1e9;
    startNs[k + 1] = startNs[k]! + dur;
    startPkt[k + 1] = startPkt[k]! + rate[k]! * dur;
  });
  const loop = p.loop === true;
  const periodNs = startNs[n]!;
  const periodPkt = startPkt[n]!;
  if (periodPkt === 0) throw new ArgError(`${what}: pattern.steps: every step is silent`);
  if (!loop && rate[n - 1] === 0) throw new ArgError(`${what}: pattern.steps: the last step is held after the schedule, so it may not be silent (or set loop)`);
  let k = 0; // the step of the last deadline asked: the send loop asks in order
  const within = (j: number): number => {
    // The step holding packet j (0 ≤ j < periodPkt): the first with startPkt[k + 1] > j and a rate.
    if (j < startPkt[k]! || j >= startPkt[k + 1]! || rate[k] === 0) {
      let lo = 0;
      let hi = n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (startPkt[mid + 1]! > j) hi = mid;
        else lo = mid + 1;
      }
      k = lo;
    }
    return startNs[k]! + (j - startPkt[k]!) / rate[k]!;
  };
  return {
    deadline: (i) => {
      if (i < periodPkt) return within(i);
      if (!loop) return periodNs + (i - periodPkt) / rate[n - 1]!;
      const whole = Math.floor(i / periodPkt);
      return whole * periodNs + within(i - whole * periodPkt);
    },
  };
}
