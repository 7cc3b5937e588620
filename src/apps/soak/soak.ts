/**
 * The soak's judgement, apart from running it: samples of memory, pools and
 * fds over a long run, a least-squares slope over those after the warm-up,
 * and an SVG plot of them. A run passes when neither RSS nor the V8 heap
 * grows by more than its bound over the measured window (the slope times the
 * window, not the difference of two samples, so one garbage collection at
 * the end decides nothing), the pools hold no more mbufs in flight at the end
 * than at the first measured sample allows, and the fds are as they were.
 */

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
}

/** What the soak promises (docs/reliability.md). */
export interface SoakBounds {
  /** Seconds of samples left out of the slopes (start-up: JIT, pools, caches filling). */
  warmup: number;
  /** Most RSS and heap may grow over the measured window, as a fraction of their mean… */
  growth: number;
  /** …or in bytes, whichever is larger (small heaps move by whole pages and GC steps). */
  floorBytes: number;
}

export const DEFAULT_BOUNDS: SoakBounds = { warmup: 60, growth: 0.02, floorBytes: 4 << 20 };

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

/** The soak's verdict over `samples`: the trends, and the problems (empty: it passed). */
export function judge(samples: readonly SoakSample[], bounds: SoakBounds = DEFAULT_BOUNDS): { trends: Trend[]; problems: string[] } {
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
  }
  return { trends, problems };
}

function mib(b: number): string {
  return `${(b / 2 ** 20).toFixed(2)} MiB`;
}

/** An SVG plot of RSS, V8 heap (MiB, left axis) and mbufs in flight (right axis, scaled) over time. */
export function plot(samples: readonly SoakSample[], title: string, warmup: number): string {
  const W = 800;
  const H = 360;
  const L = 60;
  const R = 60;
  const T = 30;
  const B = 40;
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const mMax = Math.max(1, ...samples.map((s) => s.rss / 2 ** 20)) * 1.1;
  const iMax = Math.max(1, ...samples.map((s) => s.inUse)) * 1.1;
  const x = (t: number) => L + ((W - L - R) * t) / tMax;
  const y = (v: number, max: number) => H - B - ((H - T - B) * v) / max;
  const line = (f: (s: SoakSample) => number, max: number, color: string) =>
    `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${samples.map((s) => `${x(s.t).toFixed(1)},${y(f(s), max).toFixed(1)}`).join(' ')}"/>`;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${L - 6}" y="${y(f * mMax, mMax) + 4}" text-anchor="end">${(f * mMax).toFixed(0)}</text>`).join('');
  const tt = [0, 0.5, 1].map((f) => `<text x="${x(f * tMax)}" y="${H - B + 16}" text-anchor="middle">${(f * tMax).toFixed(0)} s</text>`).join('');
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">
<text x="${L}" y="18" font-size="13">${esc(title)}</text>
<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#999"/>
<rect x="${L}" y="${T}" width="${Math.max(0, x(Math.min(warmup, tMax)) - L)}" height="${H - T - B}" fill="#eee"/>
${ticks}${tt}<text x="12" y="${T + 10}">MiB</text><text x="${W - R + 6}" y="${T + 10}">mbufs</text>
<text x="${W - R + 6}" y="${y(iMax / 1.1, iMax) + 4}">${Math.round(iMax / 1.1)}</text>
${line((s) => s.rss / 2 ** 20, mMax, '#1f77b4')}
${line((s) => s.heapUsed / 2 ** 20, mMax, '#2ca02c')}
${line((s) => s.inUse, iMax, '#d62728')}
<text x="${L + 8}" y="${H - 8}" fill="#1f77b4">RSS</text><text x="${L + 48}" y="${H - 8}" fill="#2ca02c">V8 heap used</text><text x="${L + 140}" y="${H - 8}" fill="#d62728">mbufs in flight (right)</text><text x="${L + 290}" y="${H - 8}" fill="#888">grey: warm-up, left out of the slopes</text>
</svg>
`;
}
