import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { Cell, MatrixConfig, Variant } from '../../../src/apps/bench/matrix.js';
import { runMatrix } from '../../../src/apps/bench/matrix-run.js';
import { renderHtml, ticks } from '../../../src/apps/bench/render-html.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
// .ci/run installs chromium and sets this, so CI cannot pass by skipping.
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-html-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const config: MatrixConfig = {
  name: 'html',
  title: 'report <rendering> & charts',
  matrix: [
    { engines: ['macswap'], sizes: [64, 128, 256, 1518], lcores: [1] },
    { engines: ['io'], sizes: [64, 1518], lcores: [1, 2] },
  ],
  variants: [{ name: 'scalar' }, { name: 'simd' }, { name: 'dpdk', system: 'dpdk' }],
  pairs: 5,
  seconds: 1,
  warmup: 0,
};

async function report() {
  let k = 0;
  const f: Record<string, number> = { scalar: 0.6, simd: 1, dpdk: 0.45 };
  const measure = async (c: Cell, v: Variant) => (120 - c.size / 40) * c.lcores * f[v.name]! * (1 + 0.02 * Math.sin(++k));
  return runMatrix(config, { measure, dpdk: true, command: 'dpkit bench --config html.json' });
}

/** Runs headless Chromium the way this machine allows (no sandbox as root, no network chatter). */
function chromium(args: string[]) {
  const profile = mkdtempSync(join(dir, 'profile-'));
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`];
  const r = spawnSync(CHROMIUM!, [...flags, ...args], { encoding: 'utf8', timeout: 90_000, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `chromium: ${r.error?.message ?? r.stderr.slice(-2000)}`);
  return r.stdout;
}

describe('bench HTML report', () => {
  it('picks round axis ticks', () => {
    assert.deepEqual(ticks(0, 130), [0, 20, 40, 60, 80, 100, 120]);
    assert.deepEqual(ticks(0.95, 1.12), [0.95, 1, 1.05, 1.1]);
  });

  it('is one self-contained page: inline SVG, no script, nothing fetched, text escaped', async () => {
    const html = renderHtml(await report());
    assert.doesNotMatch(html, /<script|<link|src=|href=|@import|url\(/i, 'nothing loaded at view time');
    assert.equal(html.match(/<svg class="chart"/g)!.length, 6, 'Mpps and ratio chart per engine and lcore count');
    assert.match(html, /<title>report &#60;rendering&#62; &#38; charts<\/title>/);
  });

  it('renders in headless Chromium with every chart drawn', { skip: !CHROMIUM && !REQUIRED && 'chromium not installed (apt-get install chromium; .ci/run does)' }, async () => {
    assert.ok(CHROMIUM, 'DPKIT_REQUIRE_TOOLS=1 but no chromium found');
    const html = renderHtml(await report());
    const page = join(dir, 'report.html');
    writeFileSync(page, html);
    // A copy with a probe that measures what the browser laid out, read back through --dump-dom.
    const probe = `<script>
      const charts = [...document.querySelectorAll('svg.chart')].map((svg) => {
        const box = svg.getBoundingClientRect();
        return { w: box.width, h: box.height, title: svg.getAttribute('aria-label'),
          series: [...svg.querySelectorAll('g.series')].map((g) => { const b = g.getBBox(); return { name: g.dataset.series, w: b.width, h: b.height, dots: g.querySelectorAll('circle').length }; }) };
      });
      document.body.setAttribute('data-probe', JSON.stringify(charts));
    </script>`;
    const probed = join(dir, 'probed.html');
    writeFileSync(probed, html.replace('</body>', `${probe}</body>`));
    const dom = chromium(['--dump-dom', pathToFileURL(probed).href]);
    const m = /data-probe="([^"]*)"/.exec(dom);
    assert.ok(m, 'the probe ran');
    const charts = JSON.parse(m[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as { w: number; h: number; title: string; series: { name: string; w: number; h: number; dots: number }[] }[];
    assert.equal(charts.length, 6);
    for (const c of charts) {
      assert.ok(c.w >= 600 && c.h >= 280, `${c.title}: laid out ${c.w}x${c.h}`);
      assert.ok(c.series.length >= 1, `${c.title}: has series`);
      for (const s of c.series) assert.ok(s.dots > 0 && s.w >= 0 && s.h > 0, `${c.title} / ${s.name}: drawn (${s.dots} dots, ${s.w}x${s.h})`);
    }
    const mppsChart = charts.find((c) => c.title.startsWith('macswap, 1 lcore, burst 32: Mpps'))!;
    assert.deepEqual(mppsChart.series.map((s) => [s.name, s.dots]), [['scalar', 4], ['simd', 4], ['dpdk', 4]]);
    const ratio = charts.find((c) => c.title.startsWith('macswap, 1 lcore, burst 32: ratio'))!;
    assert.deepEqual(ratio.series.map((s) => s.name), ['simd / scalar', 'dpdk / scalar']);

    const png = join(dir, 'report.png');
    chromium(['--screenshot=' + png, '--window-size=1400,2400', '--hide-scrollbars', pathToFileURL(page).href]);
    const bytes = readFileSync(png);
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
    assert.ok(bytes.length > 20_000, `a screenshot with content (${bytes.length} bytes)`);
  });
});
