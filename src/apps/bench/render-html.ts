/**
 * A report as one self-contained HTML page: inline CSS and SVG, no script,
 * nothing fetched at view time. Per engine and lcore count, two charts: Mpps
 * against packet size per arm (median, with a min..max bar), and each
 * comparison's ratio B / A with its 95 % interval around the line at 1.
 */
import type { BenchReport, CellResult } from './report.js';
import { ciText, mpps } from './render-text.js';

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const W = 640;
const H = 300;
const M = { left: 64, right: 150, top: 28, bottom: 44 };

export interface Point {
  /** Category index on the x axis. */
  x: number;
  y: number;
  lo: number;
  hi: number;
}

export interface Series {
  name: string;
  points: Point[];
}

export interface ChartSpec {
  title: string;
  xLabels: string[];
  xTitle: string;
  yTitle: string;
  series: Series[];
  /** A dashed horizontal reference line (1.0 on ratio charts). */
  ref?: number;
  /** Include 0 on the y axis (Mpps); ratios zoom to their data instead. */
  fromZero: boolean;
}

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Round tick steps: 1, 2 or 5 times a power of ten, about `n` ticks. */
export function ticks(lo: number, hi: number, n = 5): number[] {
  const span = hi - lo || Math.abs(hi) || 1;
  const raw = span / n;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * pow).reduce((best, s) => (Math.abs(span / s - n) < Math.abs(span / best - n) ? s : best));
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function svgChart(spec: ChartSpec): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const ys = spec.series.flatMap((s) => s.points.flatMap((p) => [p.lo, p.hi, p.y])).filter(Number.isFinite);
  if (spec.ref !== undefined) ys.push(spec.ref);
  let lo = spec.fromZero ? 0 : Math.min(...ys);
  let hi = Math.max(...ys);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  const pad = (hi - lo || Math.abs(hi) || 1) * 0.08;
  if (!spec.fromZero) lo -= pad;
  hi += pad;
  const tk = ticks(lo, hi);
  lo = Math.min(lo, tk[0]!);
  hi = Math.max(hi, tk[tk.length - 1]!);
  const n = spec.xLabels.length;
  const inset = 24; // keeps the first and last points and their bars off the axes
  const x = (i: number) => M.left + (n === 1 ? pw / 2 : inset + (i * (pw - 2 * inset)) / (n - 1));
  const y = (v: number) => M.top + ph - ((v - lo) / (hi - lo)) * ph;
  const f = (v: number) => v.toFixed(1);
  const parts: string[] = [];
  parts.push(`<text class="title" x="${M.left}" y="18">${esc(spec.title)}</text>`);
  // Axes and grid.
  for (const t of tk) parts.push(`<line class="grid" x1="${M.left}" x2="${M.left + pw}" y1="${f(y(t))}" y2="${f(y(t))}"/><text class="tick" x="${M.left - 6}" y="${f(y(t) + 4)}" text-anchor="end">${t}</text>`);
  spec.xLabels.forEach((l, i) => parts.push(`<text class="tick" x="${f(x(i))}" y="${M.top + ph + 16}" text-anchor="middle">${esc(l)}</text>`));
  parts.push(`<line class="axis" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}"/><line class="axis" x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}"/>`);
  parts.push(`<text class="label" x="${M.left + pw / 2}" y="${H - 6}" text-anchor="middle">${esc(spec.xTitle)}</text>`);
  parts.push(`<text class="label" transform="translate(14 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yTitle)}</text>`);
  if (spec.ref !== undefined) parts.push(`<line class="ref" x1="${M.left}" x2="${M.left + pw}" y1="${f(y(spec.ref))}" y2="${f(y(spec.ref))}"/>`);
  // Series: a line through the medians, a bar for each interval, a dot per point.
  spec.series.forEach((s, k) => {
    const color = PALETTE[k % PALETTE.length]!;
    const dx = (k - (spec.series.length - 1) / 2) * 4; // side by side, so bars do not hide each other
    const pts = s.points.filter((p) => Number.isFinite(p.y));
    parts.push(`<g class="series" data-series="${esc(s.name)}" stroke="${color}" fill="${color}">`);
    if (pts.length > 1) parts.push(`<polyline fill="none" points="${pts.map((p) => `${f(x(p.x) + dx)},${f(y(p.y))}`).join(' ')}"/>`);
    for (const p of pts) {
      const cx = x(p.x) + dx;
      parts.push(
        `<line class="err" x1="${f(cx)}" x2="${f(cx)}" y1="${f(y(p.lo))}" y2="${f(y(p.hi))}"/><line class="err" x1="${f(cx - 3)}" x2="${f(cx + 3)}" y1="${f(y(p.lo))}" y2="${f(y(p.lo))}"/><line class="err" x1="${f(cx - 3)}" x2="${f(cx + 3)}" y1="${f(y(p.hi))}" y2="${f(y(p.hi))}"/>` +
          `<circle cx="${f(cx)}" cy="${f(y(p.y))}" r="3.5"><title>${esc(`${s.name} @ ${spec.xLabels[p.x]}: ${p.y.toFixed(3)} [${p.lo.toFixed(3)}..${p.hi.toFixed(3)}]`)}</title></circle>`,
      );
    }
    parts.push('</g>');
    const ly = M.top + 12 + k * 18;
    parts.push(`<rect x="${W - M.right + 14}" y="${ly - 8}" width="12" height="12" fill="${color}"/><text class="legend" x="${W - M.right + 32}" y="${ly + 2}">${esc(s.name)}</text>`);
  });
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(spec.title)}">${parts.join('')}</svg>`;
}

/** A cell's place on a chart's x axis: its packet size, and its tx thresholds when it sets them. */
function xLabel(c: CellResult): string {
  return c.txThresh ? `${c.size} B, ${c.txThresh[0]}/${c.txThresh[1]}` : `${c.size} B`;
}

function xTitle(g: CellResult[]): string {
  return g.some((c) => c.txThresh) ? 'packet size, tx_rs_thresh/tx_free_thresh' : 'packet size';
}

/** Cells grouped by everything but the packet size and tx thresholds: one pair of charts each. */
function groups(cells: CellResult[]): CellResult[][] {
  const m = new Map<string, CellResult[]>();
  for (const c of cells) {
    const k = `${c.engine} ${c.lcores} ${c.burst}`;
    m.set(k, [...(m.get(k) ?? []), c]);
  }
  // Cells that differ in tx thresholds keep their declaration order (the x axis names them).
  return [...m.values()].map((g) => (g.some((c) => c.txThresh) ? g : g.sort((a, b) => a.size - b.size)));
}

export function renderHtml(r: BenchReport): string {
  const sections: string[] = [];
  for (const g of groups(r.cells)) {
    const c0 = g[0]!;
    const name = `${c0.engine}, ${c0.lcores} lcore${c0.lcores > 1 ? 's' : ''}, burst ${c0.burst}`;
    const xLabels = g.map(xLabel);
    const arms = c0.arms.map((a) => a.name);
    const mppsChart = svgChart({
      title: `${name}: Mpps by packet size (median, min..max)`,
      xLabels,
      xTitle: xTitle(g),
      yTitle: 'Mpps',
      fromZero: true,
      series: arms.map((arm) => ({
        name: arm,
        points: g.flatMap((c, i) => c.arms.filter((a) => a.name === arm).map((a) => ({ x: i, y: a.median, lo: a.min, hi: a.max }))),
      })),
    });
    const cmps = c0.comparisons.map((k) => [k.a, k.b] as const);
    const ratioChart = cmps.length
      ? svgChart({
          title: `${name}: ratio B / A with its 95 % interval`,
          xLabels,
          xTitle: xTitle(g),
          yTitle: 'B / A',
          fromZero: false,
          ref: 1,
          series: cmps.map(([a, b]) => ({
            name: `${b} / ${a}`,
            points: g.flatMap((c, i) => c.comparisons.filter((k) => k.a === a && k.b === b).map((k) => ({ x: i, y: k.ratio, lo: k.lo, hi: k.hi }))),
          })),
        })
      : '';
    const rows = g
      .map((c) => {
        const arm = c.arms.map((a) => `<td>${mpps(a.median)}<span class="range"> [${mpps(a.min)}..${mpps(a.max)}]</span></td>`).join('');
        const cmp = c.comparisons.map((k) => `<td class="${k.verdict === 'faster' ? 'up' : k.verdict === 'slower' ? 'down' : 'same'}">${esc(ciText(k))}</td>`).join('');
        return `<tr><td>${esc(xLabel(c))}</td>${arm}${cmp}</tr>`;
      })
      .join('');
    const head = `<tr><th>size</th>${arms.map((a) => `<th>${esc(a)} Mpps</th>`).join('')}${cmps.map(([a, b]) => `<th>${esc(b)} vs ${esc(a)}</th>`).join('')}</tr>`;
    const warn = g.flatMap((c) => c.warnings).map((w) => `<li>${esc(w)}</li>`).join('');
    sections.push(`<section><h2>${esc(name)}</h2><div class="charts">${mppsChart}${ratioChart}</div><table>${head}${rows}</table>${warn ? `<ul class="warn">${warn}</ul>` : ''}</section>`);
  }
  const m = r.machine;
  const facts = [
    ['CPU', `${m.cpu}, ${m.cores} cores`],
    ['kernel', m.kernel],
    ['node', m.node],
    ['dpkit', m.dpkit],
    ['DPDK', m.dpdk ?? 'not installed'],
    ...(m.dpdkBuilds ?? []).map((b) => [b.name, `DPDK ${b.version}, ${b.flags} (${b.path})`]),
    ...(m.dpdkMemory ? [["DPDK's memory", m.dpdkMemory]] : []),
    ['lcore affinity', m.affinity ? 'pinned' : 'floating (native shim not built)'],
    ['load average at the end', m.loadavg.map((l) => l.toFixed(2)).join(' ')],
    ['runs', `${r.config.pairs} pairs per cell, ${r.config.seconds} s measured after ${r.config.warmup} s warm-up, arms in random order per pair`],
    ['started / finished', `${r.started} / ${r.finished}`],
    ['command', r.command],
  ]
    .map(([k, v]) => `<tr><th>${esc(k!)}</th><td>${esc(v!)}</td></tr>`)
    .join('');
  const scaling = r.scaling.length
    ? `<section><h2>Scaling with forwarding lcores</h2><table><tr><th>engine</th><th>size</th><th>arm</th><th>lcores</th><th>n lcores / 1 lcore</th><th>95 % CI</th></tr>${r.scaling
        .map((k) => `<tr><td>${esc(k.engine)}</td><td>${k.size} B</td><td>${esc(k.arm)}</td><td>${k.lcores}</td><td>${k.ratio.toFixed(2)}</td><td>${k.lo.toFixed(2)}..${k.hi.toFixed(2)}</td></tr>`)
        .join('')}</table></section>`
    : '';
  const warnings = r.warnings.map((w) => `<li>${esc(w)}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-variant-numeric:tabular-nums}
.range{color:#888;font-size:12px}.up{background:#e6f4e6}.down{background:#fbe3e3}.same{background:#f4f4f4}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{background:#fff;border:1px solid #ddd}
.chart .title{font-size:13px;font-weight:600}.chart .tick{font-size:11px;fill:#555}.chart .label,.chart .legend{font-size:12px;fill:#333}
.chart .grid{stroke:#eee}.chart .axis{stroke:#999}.chart .ref{stroke:#555;stroke-dasharray:4 3}
.chart polyline{stroke-width:1.5}.chart .err{stroke-width:1.2}.warn{color:#a33}
</style></head><body>
<h1>${esc(r.title)}</h1>
<table class="facts">${facts}</table>
${warnings ? `<ul class="warn">${warnings}</ul>` : ''}
<p>Verdicts: the ratio of medians B / A with a bootstrap ${'95 %'} interval; "faster" or "slower" only when the whole interval lies on one side of 1.</p>
${sections.join('\n')}
${scaling}
</body></html>
`;
}
