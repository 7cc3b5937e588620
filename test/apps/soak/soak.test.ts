// The soak's verdict: a slope over the samples after the warm-up, not two samples compared,
// so noise and a late collection pass and a steady leak fails; fds and stalled traffic fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { judge, plot, slope, type SoakSample } from '../../../src/apps/soak/soak.js';
import { DPKIT } from '../testpmd/run.js';

const MiB = 2 ** 20;
const bounds = { warmup: 10, growth: 0.02, floorBytes: 4 * MiB };

/** 60 samples a second apart: rss(t) and heap(t) in bytes, traffic always moving. */
function run(rss: (t: number) => number, heap: (t: number) => number = () => 10 * MiB, fds: (t: number) => number = () => 40): SoakSample[] {
  return Array.from({ length: 60 }, (_, t) => ({ t, rss: rss(t), heapUsed: heap(t), inUse: 320, fds: fds(t), rxPackets: 1000 * (t + 1) }));
}

describe('soak verdict', () => {
  it('slope is the least-squares fit', () => {
    assert.equal(slope([0, 1, 2, 3], [1, 3, 5, 7]), 2);
    assert.equal(slope([5], [1]), 0);
  });

  it('flat memory with noise and one drop passes; a start-up climb inside the warm-up does not count', () => {
    const v = judge(run((t) => (t < 10 ? 100 * MiB + t * 10 * MiB : 200 * MiB + ((t * 7919) % 13) * 0.1 * MiB - (t === 59 ? 3 * MiB : 0))), bounds);
    assert.deepEqual(v.problems, []);
  });

  it('a steady leak fails, naming the metric, its growth and its bound', () => {
    const v = judge(run(() => 200 * MiB, (t) => 10 * MiB + t * 0.2 * MiB), bounds);
    assert.equal(v.problems.length, 1);
    assert.match(v.problems[0]!, /^heapUsed grew 9\.80 MiB over 49 s \(a slope of 204\.8 KiB\/s\), past the bound of 4\.00 MiB$/);
  });

  it('fds that drift up, stalled traffic and too few samples fail', () => {
    assert.match(judge(run(() => 200 * MiB, undefined, (t) => 40 + (t > 30 ? 1 : 0)), bounds).problems.join(), /open fds went from 40 to 41/);
    const stalled = run(() => 200 * MiB).map((s) => ({ ...s, rxPackets: 5 }));
    assert.match(judge(stalled, bounds).problems.join(), /no packet received after the warm-up/);
    assert.match(judge(run(() => 200 * MiB).slice(0, 11), bounds).problems.join(), /only 1 samples after the 10 s warm-up/);
  });

  it('plots an SVG with the three lines', () => {
    const svg = plot(run(() => 200 * MiB), 'a <title>', 10);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 3);
    assert.ok(svg.includes('a &lt;title>'));
  });
});

describe('dpkit soak', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-soak-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a bad --minutes in one line', () => {
    const r = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes=-3'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'dpkit: soak: --minutes -3: expected a number of minutes > 0\n');
    const f = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes=1', '--floor=lots'], { encoding: 'utf8' });
    assert.equal(f.status, 2);
    assert.equal(f.stderr, 'dpkit: soak: --floor lots: expected MiB >= 0\n');
  });

  it('a short soak on null, ring, pcap, vhost/virtio and nicsim passes and writes its record and plot, pools full', () => {
    // 10 s after a 5 s warm-up on a loaded machine is no memory verdict (worker heaps still settle):
    // the floor is wide, so this checks the harness, the pairs, fds and pools; the verdict's own
    // tests are above, on samples.
    const r = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes', '0.25', '--period', '1', '--floor', '64', '--ci', '--out', dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const rec = JSON.parse(readFileSync(join(dir, 'soak.json'), 'utf8')) as { pass: boolean; samples: SoakSample[]; pairs: { name: string; rxPackets: number }[] };
    assert.equal(rec.pass, true);
    assert.deepEqual(rec.pairs.map((p) => p.name), ['null', 'ring', 'pcap', 'vhost', 'nicsim']);
    for (const p of rec.pairs) assert.ok(p.rxPackets > 0, `${p.name} forwarded`);
    assert.ok(rec.samples.length >= 10);
    assert.match(readFileSync(join(dir, 'soak.svg'), 'utf8'), /^<svg /);
  });
});
