/** Summary statistics of repeated measurements. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const s = [...samples].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}

/** A ratio B / A of medians with its bootstrap confidence interval. */
export interface RatioCI {
  ratio: number;
  lo: number;
  hi: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
}

export type Verdict = 'faster' | 'slower' | 'no significant difference';

/**
 * A seeded generator of integers in [0, n): xorshift32, small, fast and good
 * enough to resample a handful of values or shuffle a few arms, and
 * replayable from its seed.
 */
export function seededRandom(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/**
 * The ratio of B's median to A's median, with a percentile bootstrap
 * confidence interval: both sample sets are resampled with replacement
 * `iterations` times. Seeded, so a saved run recomputes to the same interval.
 */
export function bootstrapRatio(a: readonly number[], b: readonly number[], level = 0.95, iterations = 10_000, seed = 1): RatioCI {
  if (a.length === 0 || b.length === 0) return { ratio: NaN, lo: NaN, hi: NaN, level };
  const rand = seededRandom(seed);
  const ra = new Array<number>(a.length);
  const rb = new Array<number>(b.length);
  const ratios = new Float64Array(iterations);
  for (let k = 0; k < iterations; k++) {
    for (let i = 0; i < a.length; i++) ra[i] = a[rand(a.length)]!;
    for (let i = 0; i < b.length; i++) rb[i] = b[rand(b.length)]!;
    ratios[k] = summarize(rb).median / summarize(ra).median;
  }
  ratios.sort();
  const tail = (1 - level) / 2;
  return {
    ratio: summarize(b).median / summarize(a).median,
    lo: ratios[Math.floor(tail * (iterations - 1))]!,
    hi: ratios[Math.ceil((1 - tail) * (iterations - 1))]!,
    level,
  };
}

/** "faster" when the whole interval lies above 1, "slower" below 1, else no significant difference. */
export function verdict(ci: RatioCI): Verdict {
  if (ci.lo > 1) return 'faster';
  if (ci.hi < 1) return 'slower';
  return 'no significant difference';
}
