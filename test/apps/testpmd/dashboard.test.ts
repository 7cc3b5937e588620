// The live dashboard in headless Chromium (Debian's, driven by playwright-core): the page loads
// with no console error and no request leaving this machine, points arrive every period, the
// last matches /metrics, and it goes on across stop and start. The screenshot is kept in
// out/test/ (not committed).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startTestpmd, until } from './run.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (process.env['DPKIT_REQUIRE_TOOLS'] === '1' && !CHROMIUM) throw new Error('DPKIT_REQUIRE_TOOLS=1 but chromium is not installed (.ci/run installs it)');
const OUT = fileURLToPath(new URL('../../../out/test/', import.meta.url));

interface Point {
  time: number;
  forwarding: boolean;
  totals: Record<string, number>;
  charts: Record<string, Record<string, number>>;
}

describe('testpmd --web', { skip: CHROMIUM ? false : 'chromium not installed' }, () => {
  const t = startTestpmd(['-l', '0-1', '--no-telemetry', '--', '-i', '--web=0', '--metrics=0', '--total-num-mbufs=8192']);
  let err = '';
  t.child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  after(() => t.child.kill('SIGKILL'));

  it('plots a point a second that matches the metrics, with no console error and no outside request, across stop/start', async () => {
    await until(() => /Dashboard on (http:\S+)/.test(err) && /metrics on (http:\S+)/.test(err), () => err);
    const page0 = /Dashboard on (http:\S+)/.exec(err)![1]!;
    const metrics = /metrics on (http:\S+)/.exec(err)![1]!;
    const host = new URL(page0).host;
    const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      const errors: string[] = [];
      const outside: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => !r.url().startsWith('data:') && new URL(r.url()).host !== host && outside.push(r.url()));
      await page.goto(page0);
      const points = () => page.evaluate<Point[]>('window.dpkitPoints');
      const atLeast = async (n: number) => {
        const end = performance.now() + 60_000;
        let ps = (await points()) ?? [];
        assert.deepEqual(errors, [], 'page errors');
        while (ps.length < n && performance.now() < end) {
          await new Promise((r) => setTimeout(r, 200));
          ps = (await points()) ?? [];
        }
        assert.ok(ps.length >= n, `${ps.length} points, wanted ${n}`);
        return ps;
      };
      const idle = await atLeast(1);
      assert.equal(idle.at(-1)!.forwarding, false);
      t.child.stdin.write('start\n');
      await t.waitFor('testpmd> ');
      let ps = await atLeast(idle.length + 3);
      const fwd = ps.filter((p) => p.forwarding);
      assert.ok(fwd.length >= 2, 'points while forwarding');
      // One a period: consecutive points about a second apart (the server's interval, not a timing bound on the test).
      for (let i = 1; i < ps.length; i++) assert.ok(ps[i]!.time > ps[i - 1]!.time);
      assert.ok(fwd.at(-1)!.charts['Mpps']!['rx 0']! > 0, JSON.stringify(fwd.at(-1)));
      assert.ok('lcore 1' in fwd.at(-1)!.charts['Lcore busy %']!);
      // The last point lies between two scrapes taken around it.
      const scrape = async () => Number(/dpkit_port_rx_packets_total\{port="0",name="net_null0"\} (\d+)/.exec(await (await fetch(metrics)).text())![1]);
      const before = await scrape();
      const n = (await points()).length;
      ps = await atLeast(n + 1);
      const after2 = await scrape();
      const last = ps.at(-1)!.totals['rx 0']!;
      assert.ok(before <= last && last <= after2, `${before} <= ${last} <= ${after2}`);
      t.child.stdin.write('stop\n');
      await t.waitFor('Done.');
      t.child.stdin.write('start\n');
      const m = (await points()).length;
      ps = await atLeast(m + 3);
      assert.ok(ps.at(-1)!.forwarding && ps.at(-1)!.charts['Mpps']!['rx 0']! > 0, 'still plotting after stop/start');
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: `${OUT}dashboard.png` });
      assert.deepEqual(errors, []);
      assert.deepEqual(outside, []);
      assert.equal(await page.locator('canvas').count() >= 4, true, 'four charts');
    } finally {
      await browser.close();
    }
    t.child.stdin.write('stop\nquit\n');
    assert.equal(await t.exit, 0);
  });
});
