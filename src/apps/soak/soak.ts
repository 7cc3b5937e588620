/**
 * The soak's judgement, apart from running it: samples of memory, pools and
 * fds over a long run, a least-squares slope over those after the warm-up,
 * and an SVG plot of them. A run passes when neither RSS nor the V8 heap
 * grows by more than its bound over the measured window (the slope times the
 * window, not the difference of two samples, so one garbage collection at
 * the end decides nothing), the pools hold no more mbufs in flight at the end
 * than at the first measured sample allows, and the fds are as they were.
 * Garbage-collection pauses are summed up per kind of thread (the main
 * thread, the forwarding lcores); a forwarding lcore's pause past its bound
 * fails the run, since it stalls forwarding (docs/reliability.md). The rate
 * fails when it falls between the first and the last quarter of a long
 * enough window (RateChange says how that is told from the machine's own
 * slow spells).
 */
import type { GcSpan } from '../testpmd/gc.js';

export type { GcSpan };

/** One sample of the run. */
export interface SoakSample {
  /** Seconds since the traffic started. */
  t: number;
  /** process.memoryUsage(): resident set and V8 heap used, bytes (the main thread's heap). */
  rss: number;
  heapUsed: number;
  /** Mbufs out of their pools (in rings, queues and lcores' hands), summed over the soak's pools. */
  inUse: number;
  /** Open file descriptors. */
  fds: number;
  /** Packets received so far, summed over every forwarding port. */
  rxPackets: number;
  /** The same, by pair, in the run's pair order. */
  rxByPair: number[];
  /**
   * Garbage collections since the previous sample: on the main thread (control plane and this
   * sampler) and on the forwarding lcores (every pair's, together; `lcores` of them answered).
   */
  gc: { main: GcSpan; lcores: GcSpan; nbLcores: number };
}

/** What the soak promises (docs/reliability.md). */
export interface SoakBounds {
  /** Seconds of samples left out of the slopes (start-up: JIT, pools, caches filling). */
  warmup: number;
  /** Most RSS and heap may grow over the measured window, as a fraction of their mean… */
  growth: number;
  /** …or in bytes, whichever is larger (small heaps move by whole pages and GC steps). */
  floorBytes: number;
  /** Longest garbage-collection pause allowed on a forwarding lcore after the warm-up, ms: a stall. */
  lcorePauseMs: number;
  /** Most collections per minute per forwarding lcore after the warm-up: more means the data path allocates. */
  lcoreGcPerMinute: number;
  /**
   * Most the rate may fall from the first quarter of the measured window to the last (the sum's
   * ceiling, each pair's median while the machine ran fast), as a fraction: twice the drift of
   * healthy 30-minute runs here (2.5..4.3 %, all pairs alike).
   */
  rateDrop: number;
  /**
   * Shortest quarter, seconds, for the rate to be judged: this VM's slow spells last up to about
   * 4.5 minutes, and a quarter must see the fast level for a tenth of its time (docs/reliability.md).
   */
  rateQuarter: number;
}

export const DEFAULT_BOUNDS: SoakBounds = { warmup: 60, growth: 0.02, floorBytes: 4 << 20, lcorePauseMs: 10, lcoreGcPerMinute: 1, rateDrop: 0.08, rateQuarter: 300 };

/** The least-squares slope of `y` over `x` (units of y per unit of x); 0 with fewer than 2 points. */
export function slope(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += x[i]!;
    sy += y[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (x[i]! - mx) * (y[i]! - my);
    den += (x[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** One metric's verdict. */
export interface Trend {
  metric: 'rss' | 'heapUsed';
  /** Bytes per second over the measured window. */
  slope: number;
  /** Slope × window: what the fit says it grew by. */
  growth: number;
  bound: number;
  ok: boolean;
}

/**
 * How the rate moved from the first quarter of the measured window to the
 * last. On the 2-core VM the soak runs on, the rate moves between two levels
 * (46 and 78 Mpps summed, docs/reliability.md) for minutes at a time with no
 * cause in dpkit, so a median or a fit over time reads a slow spell at the
 * end as a decline. A slowdown of dpkit's own (a list that grows, a ring that
 * fragments) lowers every interval after it, the fastest too; a slow spell of
 * the machine's leaves the fastest tenth of a quarter alone unless it fills
 * nine tenths of it. So the summed rate is compared by its ceiling, the 90th
 * percentile of a quarter's intervals; each pair (one slow pair hides in the
 * sum) by its median over the intervals the machine ran at its fast level
 * (the sum within 10 % of that quarter's ceiling), since a pair can have a
 * rare fast mode of its own that would lift its ceiling (nicsim's).
 */
export interface RateChange {
  /** `all` (summed over the pairs, its ceiling) or the pair's name (its median at the fast level). */
  name: string;
  /** Packets a second in the first and in the last quarter. */
  head: number;
  tail: number;
  /** tail / head − 1 (negative: it fell). */
  change: number;
  ok: boolean;
}

/** The forwarding rate over the measured window, from the packets received between samples. */
export interface RateSummary {
  /** Packets a second over the sample intervals, summed over the pairs: median, least, most. */
  p50: number;
  min: number;
  max: number;
  /** The fitted change over the window as a fraction of the median (negative: it slowed): reported only. */
  change: number;
  /** The summed rate's ceiling, then each pair's median at the fast level, first quarter to last. */
  quarters: RateChange[];
  /** Whether they were judged: only when a quarter of the window lasts `rateQuarter` seconds. */
  judged: boolean;
}

/** One kind of thread's garbage collections over the measured window. */
export interface GcSummary {
  kind: 'main' | 'lcores';
  count: number;
  /** Pause percentiles (nearest rank) and the longest, ms; 0 with none. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Pause time over thread time: summed pauses / (window × threads). */
  fraction: number;
}

/** The `p`-th percentile (0..100) of `xs` by nearest rank; 0 when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Sums the collections of `kind` over `measured`, which cover `seconds` of run time on `threads` threads. */
function gcSummary(measured: readonly SoakSample[], kind: 'main' | 'lcores', seconds: number, threads: number): GcSummary {
  const pauses: number[] = [];
  let count = 0;
  let total = 0;
  let max = 0;
  for (let i = 0; i < measured.length; i++) {
    const g = measured[i]!.gc[kind];
    count += g.count;
    total += g.totalMs;
    max = Math.max(max, g.maxMs);
    for (const p of g.pausesMs) pauses.push(p);
  }
  const threadSeconds = seconds * threads;
  return { kind, count, p50Ms: percentile(pauses, 50), p99Ms: percentile(pauses, 99), maxMs: max, fraction: threadSeconds > 0 ? total / 1000 / threadSeconds : 0 };
}

/** The soak's verdict over `samples`: the trends, the collections, and the problems (empty: it passed). */
export function judge(samples: readonly SoakSample[], bounds: SoakBounds = DEFAULT_BOUNDS, pairNames: readonly string[] = []): { trends: Trend[]; gc: GcSummary[]; rate: RateSummary; problems: string[] } {
  const measured = samples.filter((s) => s.t >= bounds.warmup);
  const problems: string[] = [];
  if (measured.length < 3) problems.push(`only ${measured.length} samples after the ${bounds.warmup} s warm-up: run longer or sample more often`);
  const window = measured.length ? measured[measured.length - 1]!.t - measured[0]!.t : 0;
  const t = measured.map((s) => s.t);
  const trends = (['rss', 'heapUsed'] as const).map((metric): Trend => {
    const y = measured.map((s) => s[metric]);
    const mean = y.reduce((a, b) => a + b, 0) / Math.max(1, y.length);
    const k = slope(t, y);
    const bound = Math.max(bounds.growth * mean, bounds.floorBytes);
    return { metric, slope: k, growth: k * window, bound, ok: k * window <= bound };
  });
  for (const tr of trends) {
    if (!tr.ok) problems.push(`${tr.metric} grew ${mib(tr.growth)} over ${window.toFixed(0)} s (a slope of ${(tr.slope / 1024).toFixed(1)} KiB/s), past the bound of ${mib(tr.bound)}`);
  }
  if (measured.length >= 2) {
    const first = measured[0]!;
    const last = measured[measured.length - 1]!;
    if (last.fds > first.fds) problems.push(`open fds went from ${first.fds} to ${last.fds}`);
    if (last.rxPackets <= first.rxPackets) problems.push(`no packet received after the warm-up (${last.rxPackets} in all)`);
    // Each pair on its own: one stalled pair fails the soak while the others forward.
    else {
      first.rxByPair.forEach((rx, k) => {
        if ((last.rxByPair[k] ?? 0) <= rx) problems.push(`${pairNames[k] ?? `pair ${k}`}: no packet received after the warm-up`);
      });
    }
  }
  // Each sample's collections happened since the one before it: the window they cover starts there.
  const firstAt = samples.indexOf(measured[0]!);
  const covered = measured.length ? measured[measured.length - 1]!.t - (firstAt > 0 ? samples[firstAt - 1]!.t : 0) : 0;
  const nbLcores = Math.max(1, ...measured.map((s) => s.gc.nbLcores));
  const lcores = gcSummary(measured, 'lcores', covered, nbLcores);
  const gc = [gcSummary(measured, 'main', covered, 1), lcores];
  const allowed = Math.max(1, Math.floor((bounds.lcoreGcPerMinute * nbLcores * covered) / 60));
  if (lcores.count > allowed) {
    problems.push(`the forwarding lcores collected garbage ${lcores.count} times in ${covered.toFixed(0)} s over ${nbLcores} lcores, past the bound of ${bounds.lcoreGcPerMinute} a minute per lcore (${allowed} allowed): something on the data path allocates`);
  }
  const stalls = measured.filter((s) => s.gc.lcores.maxMs > bounds.lcorePauseMs);
  if (stalls.length > 0) {
    const worst = stalls.reduce((a, s) => (s.gc.lcores.maxMs > a.gc.lcores.maxMs ? s : a));
    problems.push(`a forwarding lcore paused ${worst.gc.lcores.maxMs.toFixed(1)} ms for garbage collection (in the sample at ${worst.t.toFixed(0)} s; ${stalls.length} sample(s) past the bound of ${bounds.lcorePauseMs} ms)`);
  }
  const rate = rateSummary(measured, window, bounds, pairNames);
  if (rate.judged) {
    for (const c of rate.quarters) {
      if (c.ok) continue;
      const what = c.name === 'all' ? 'rate summed over the pairs: its ceiling (the 90th percentile of the sample intervals)' : `rate of ${c.name}: its median while the machine ran fast`;
      problems.push(`${what} fell from ${mpps(c.head)} in the first quarter of the measured window to ${mpps(c.tail)} in the last (${(c.change * 100).toFixed(1)} %), past the bound of ${(bounds.rateDrop * 100).toFixed(0)} %`);
    }
  }
  return { trends, gc, rate, problems };
}

/** The rate of each interval between measured samples, its fitted change over `window` seconds, and how it moved from the first quarter to the last. */
function rateSummary(measured: readonly SoakSample[], window: number, bounds: SoakBounds, pairNames: readonly string[]): RateSummary {
  const from: number[] = [];
  const at: number[] = [];
  const pps: number[] = [];
  const nbPairs = measured.length ? measured[0]!.rxByPair.length : 0;
  const byPair: number[][] = Array.from({ length: nbPairs }, () => []);
  for (let i = 1; i < measured.length; i++) {
    const a = measured[i - 1]!;
    const b = measured[i]!;
    if (b.t > a.t) {
      from.push(a.t);
      at.push(b.t);
      pps.push((b.rxPackets - a.rxPackets) / (b.t - a.t));
      for (let k = 0; k < nbPairs; k++) byPair[k]!.push(((b.rxByPair[k] ?? 0) - (a.rxByPair[k] ?? 0)) / (b.t - a.t));
    }
  }
  const p50 = percentile(pps, 50);
  // The intervals wholly inside the first and the last quarter.
  const quarter = window / 4;
  const start = measured.length ? measured[0]!.t : 0;
  const head = at.flatMap((t, i) => (t <= start + quarter ? [i] : []));
  const tail = from.flatMap((t, i) => (t >= start + window - quarter ? [i] : []));
  const headCeiling = percentile(head.map((i) => pps[i]!), 90);
  const tailCeiling = percentile(tail.map((i) => pps[i]!), 90);
  // Of a quarter's intervals, those the machine ran at its fast level.
  const fastHead = head.filter((i) => pps[i]! >= 0.9 * headCeiling);
  const fastTail = tail.filter((i) => pps[i]! >= 0.9 * tailCeiling);
  const change = (name: string, h: number, t: number): RateChange => {
    const c = h > 0 ? t / h - 1 : 0;
    return { name, head: h, tail: t, change: c, ok: c >= -bounds.rateDrop };
  };
  const median = (rates: number[], part: number[]) => percentile(part.map((i) => rates[i]!), 50);
  const quarters = [change('all', headCeiling, tailCeiling), ...byPair.map((r, k) => change(pairNames[k] ?? `pair ${k}`, median(r, fastHead), median(r, fastTail)))];
  return {
    p50,
    min: pps.length ? Math.min(...pps) : 0,
    max: pps.length ? Math.max(...pps) : 0,
    change: p50 > 0 ? (slope(at, pps) * window) / p50 : 0,
    quarters,
    judged: quarter >= bounds.rateQuarter && head.length > 0 && tail.length > 0,
  };
}

function mpps(pps: number): string {
  return `${(pps / 1e6).toFixed(1)} Mpps`;
}

function mib(b: number): string {
  return `${(b / 2 ** 20).toFixed(2)} MiB`;
}

/**
 * An SVG plot: RSS, V8 heap (MiB, left axis) and mbufs in flight (right axis, scaled) over time;
 * below, the longest garbage-collection pause of each sample on the main thread and on the
 * forwarding lcores (ms), with the lcores' bound dashed.
 */
export function plot(samples: readonly SoakSample[], title: string, warmup: number, lcorePauseMs = DEFAULT_BOUNDS.lcorePauseMs): string {
  const W = 800;
  const H = 360;
  const L = 60;
  const R = 60;
  const T = 30;
  const B = 40;
  // The pause panel, below the memory one.
  const GT = H + 10;
  const GH = 150;
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const mMax = Math.max(1, ...samples.map((s) => s.rss / 2 ** 20)) * 1.1;
  const iMax = Math.max(1, ...samples.map((s) => s.inUse)) * 1.1;
  const pMax = Math.max(lcorePauseMs, ...samples.map((s) => Math.max(s.gc.main.maxMs, s.gc.lcores.maxMs))) * 1.1;
  const x = (t: number) => L + ((W - L - R) * t) / tMax;
  const y = (v: number, max: number) => H - B - ((H - T - B) * v) / max;
  const gy = (ms: number) => GT + GH - (GH * ms) / pMax;
  const poly = (yOf: (s: SoakSample) => number, color: string) =>
    `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${samples.map((s) => `${x(s.t).toFixed(1)},${yOf(s).toFixed(1)}`).join(' ')}"/>`;
  const line = (f: (s: SoakSample) => number, max: number, color: string) => poly((s) => y(f(s), max), color);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${L - 6}" y="${y(f * mMax, mMax) + 4}" text-anchor="end">${(f * mMax).toFixed(0)}</text>`).join('');
  const gticks = [0, 0.5, 1].map((f) => `<text x="${L - 6}" y="${(gy(f * pMax) + 4).toFixed(1)}" text-anchor="end">${(f * pMax).toFixed(f * pMax < 10 ? 1 : 0)}</text>`).join('');
  const tt = [0, 0.5, 1].map((f) => `<text x="${x(f * tMax)}" y="${H - B + 16}" text-anchor="middle">${(f * tMax).toFixed(0)} s</text>`).join('');
  const warm = Math.max(0, x(Math.min(warmup, tMax)) - L);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${GT + GH + 30}" font-family="sans-serif" font-size="11">
<text x="${L}" y="18" font-size="13">${esc(title)}</text>
<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#999"/>
<rect x="${L}" y="${T}" width="${warm}" height="${H - T - B}" fill="#eee"/>
${ticks}${tt}<text x="12" y="${T + 10}">MiB</text><text x="${W - R + 6}" y="${T + 10}">mbufs</text>
<text x="${W - R + 6}" y="${y(iMax / 1.1, iMax) + 4}">${Math.round(iMax / 1.1)}</text>
${line((s) => s.rss / 2 ** 20, mMax, '#1f77b4')}
${line((s) => s.heapUsed / 2 ** 20, mMax, '#2ca02c')}
${line((s) => s.inUse, iMax, '#d62728')}
<text x="${L + 8}" y="${H - 8}" fill="#1f77b4">RSS</text><text x="${L + 48}" y="${H - 8}" fill="#2ca02c">V8 heap used</text><text x="${L + 140}" y="${H - 8}" fill="#d62728">mbufs in flight (right)</text><text x="${L + 290}" y="${H - 8}" fill="#888">grey: warm-up, left out of the slopes</text>
<rect x="${L}" y="${GT}" width="${W - L - R}" height="${GH}" fill="none" stroke="#999"/>
<rect x="${L}" y="${GT}" width="${warm}" height="${GH}" fill="#eee"/>
${gticks}<text x="12" y="${GT + 10}">ms</text>
<line x1="${L}" x2="${W - R}" y1="${gy(lcorePauseMs).toFixed(1)}" y2="${gy(lcorePauseMs).toFixed(1)}" stroke="#9467bd" stroke-dasharray="4 3"/>
${poly((s) => gy(s.gc.main.maxMs), '#ff7f0e')}
${poly((s) => gy(s.gc.lcores.maxMs), '#9467bd')}
<text x="${L + 8}" y="${GT + GH + 20}" fill="#ff7f0e">longest GC pause per sample: main thread</text><text x="${L + 250}" y="${GT + GH + 20}" fill="#9467bd">forwarding lcores (dashed: their bound)</text>
</svg>
`;
}
