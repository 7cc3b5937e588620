// The soak's verdict: a slope over the samples after the warm-up, not two samples compared,
// so noise and a late collection pass and a steady leak fails; fds and stalled traffic fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { judge, percentile, plot, slope, type GcSpan, type GcSummary, type SoakSample } from '../../../src/apps/soak/soak.js';
import { noShim } from '../../drivers/memif-util.js';
import { DPKIT } from '../testpmd/run.js';

const MiB = 2 ** 20;
// A quarter of the 49 s measured window is 12.25 s: the rate is judged.
const bounds = { warmup: 10, growth: 0.02, floorBytes: 4 * MiB, lcorePauseMs: 50, lcoreGcPerMinute: 1, rateDrop: 0.05, rateQuarter: 10 };

/** Collections whose pauses are `ms`. */
function span(...ms: number[]): GcSpan {
  return { count: ms.length, totalMs: ms.reduce((a, b) => a + b, 0), maxMs: Math.max(0, ...ms), pausesMs: ms };
}

/** 60 samples a second apart: rss(t) and heap(t) in bytes, two pairs forwarding 600 and 400 packets a second, a 1 ms collection on the main thread each second and none on the 6 lcores. */
function run(rss: (t: number) => number, heap: (t: number) => number = () => 10 * MiB, fds: (t: number) => number = () => 40): SoakSample[] {
  return Array.from({ length: 60 }, (_, t) => ({ t, rss: rss(t), heapUsed: heap(t), inUse: 320, fds: fds(t), rxPackets: 1000 * (t + 1), rxByPair: [600 * (t + 1), 400 * (t + 1)], gc: { main: span(1), lcores: span(), nbLcores: 6 } }));
}

/** `run`'s samples with each pair's rate (Mpps) in the second up to t given by `rates(t)`. */
function rated(rates: (t: number) => [number, number]): SoakSample[] {
  const rx = [0, 0];
  return run(() => 200 * MiB).map((s) => {
    const r = rates(s.t);
    rx[0]! += r[0] * 1e6;
    rx[1]! += r[1] * 1e6;
    return { ...s, rxPackets: rx[0]! + rx[1]!, rxByPair: [...rx] };
  });
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
    const stalled = run(() => 200 * MiB).map((s) => ({ ...s, rxPackets: 5, rxByPair: [5, 0] }));
    assert.match(judge(stalled, bounds).problems.join(), /no packet received after the warm-up/);
    // One pair stalled while the other forwards: named.
    const one = run(() => 200 * MiB).map((s) => ({ ...s, rxByPair: [s.rxByPair[0]!, 400] }));
    assert.deepEqual(judge(one, bounds, ['null', 'vhost']).problems.filter((p) => p.includes('no packet')), ['vhost: no packet received after the warm-up']);
    assert.match(judge(run(() => 200 * MiB).slice(0, 11), bounds).problems.join(), /only 1 samples after the 10 s warm-up/);
  });

  it('reports the rate over the sample intervals and its fitted change', () => {
    const steady = judge(run(() => 200 * MiB), bounds).rate;
    assert.deepEqual([steady.p50, steady.min, steady.max, steady.change], [1000, 1000, 1000, 0]);
    assert.equal(steady.judged, true);
    assert.deepEqual(steady.quarters.map((c) => [c.name, c.head, c.tail, c.ok]), [['all', 1000, 1000, true], ['pair 0', 600, 600, true], ['pair 1', 400, 400, true]]);
  });

  it('a rate that declines steadily fails, first quarter to last: the sum on its ceiling, each pair on its median', () => {
    // From 60 Mpps to about 31 over the window: every interval slower, the fastest too. The sum's
    // ceilings: the 11th of 12 intervals in each quarter, 58.8 (t = 12) and 36.6 (t = 49); each
    // pair's median over the intervals within 10 % of them: t = 16 of 11..21, t = 52 of 48..55.
    const v = judge(rated((t) => [36 - Math.max(0, t - 10) * 0.36, 24 - Math.max(0, t - 10) * 0.24]), bounds, ['null', 'ring']);
    assert.ok(v.rate.change < -0.4, `change ${v.rate.change}`);
    assert.deepEqual(v.problems, [
      'rate summed over the pairs: its ceiling (the 90th percentile of the sample intervals) fell from 58.8 Mpps in the first quarter of the measured window to 36.6 Mpps in the last (-37.8 %), past the bound of 5 %',
      'rate of null: its median while the machine ran fast fell from 33.8 Mpps in the first quarter of the measured window to 20.9 Mpps in the last (-38.3 %), past the bound of 5 %',
      'rate of ring: its median while the machine ran fast fell from 22.6 Mpps in the first quarter of the measured window to 13.9 Mpps in the last (-38.3 %), past the bound of 5 %',
    ]);
  });

  it('the machine moving between two speed levels passes, a slow spell at the end too: the ceiling holds', () => {
    // Spells of 7 s at 60 % speed every 10 s, then slow from t = 50 to the end (most of the last quarter).
    const slow = (t: number) => (t >= 50 || t % 10 < 7 ? 0.6 : 1);
    const v = judge(rated((t) => [36 * slow(t), 24 * slow(t)]), bounds);
    assert.ok(v.rate.change < -0.05, `a fit over time reads a decline: ${v.rate.change}`);
    assert.deepEqual(v.problems, []);
    assert.deepEqual(v.rate.quarters.map((c) => c.change), [0, 0, 0]);
  });

  it("a pair's rare fast mode of its own early in the run does not read as a decline", () => {
    // nicsim-like: 1.5 Mpps, 2.0 for 3 of the first quarter's 12 intervals (its ceiling 2.0, its median 1.5).
    const v = judge(rated((t) => [30, t >= 12 && t < 15 ? 2 : 1.5]), bounds, ['null', 'nicsim']);
    assert.deepEqual(v.problems, []);
    assert.deepEqual(v.rate.quarters.map((c) => [c.head, c.tail]), [[32e6, 31.5e6], [30e6, 30e6], [1.5e6, 1.5e6]]);
  });

  it('one pair slowing fails, named, while the sum stays within its bound', () => {
    const v = judge(rated((t) => [30, t < 40 ? 2 : 1.5]), bounds, ['null', 'pcap']);
    assert.ok(Math.abs(v.rate.quarters[0]!.change + 0.5 / 32) < 1e-9, `sum ${v.rate.quarters[0]!.change}`);
    assert.deepEqual(v.problems, ['rate of pcap: its median while the machine ran fast fell from 2.0 Mpps in the first quarter of the measured window to 1.5 Mpps in the last (-25.0 %), past the bound of 5 %']);
  });

  it('a window whose quarter is shorter than the slow spells is reported, not judged', () => {
    const v = judge(rated((t) => [t < 40 ? 36 : 18, 24]), { ...bounds, rateQuarter: 60 });
    assert.equal(v.rate.judged, false);
    assert.equal(v.rate.quarters[1]!.change, -0.5);
    assert.deepEqual(v.problems, []);
  });

  it('sums up collections per kind of thread after the warm-up: count, p50, p99, longest pause, share of the time', () => {
    const v = judge(run(() => 200 * MiB), bounds);
    assert.deepEqual(v.problems, []);
    const [main, lcores] = v.gc;
    // 50 measured samples (t = 10..59) cover 50 s, one 1 ms pause in each.
    assert.deepEqual(main, { kind: 'main', count: 50, p50Ms: 1, p99Ms: 1, maxMs: 1, fraction: 50 / 1000 / 50 });
    assert.deepEqual(lcores, { kind: 'lcores', count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0, fraction: 0 });
    assert.equal(percentile([5, 1, 4, 2, 3], 50), 3);
    assert.equal(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 99), 99);
  });

  it('a long pause on a forwarding lcore after the warm-up fails; in the warm-up, or on the main thread, it does not', () => {
    const at = (t0: number, g: Partial<SoakSample['gc']>) => run(() => 200 * MiB).map((s) => (s.t === t0 ? { ...s, gc: { ...s.gc, ...g } } : s));
    assert.deepEqual(judge(at(5, { lcores: span(400) }), bounds).problems, []);
    assert.deepEqual(judge(at(30, { main: span(400) }), bounds).problems, []);
    assert.deepEqual(judge(at(30, { lcores: span(49.9) }), bounds).problems, []);
    const v = judge(at(30, { lcores: span(0.2, 73) }), bounds);
    assert.deepEqual(v.problems, ['a forwarding lcore paused 73.0 ms for garbage collection (in the sample at 30 s; 1 sample(s) past the bound of 50 ms)']);
    assert.equal(v.gc[1]!.maxMs, 73);
  });

  it('forwarding lcores that collect more than once a minute each fail, however short their pauses: the data path allocates', () => {
    // 6 lcores over 50 s: 5 collections allowed in all.
    const often = (every: number) => run(() => 200 * MiB).map((s) => (s.t % every === 0 ? { ...s, gc: { ...s.gc, lcores: span(0.3) } } : s));
    assert.deepEqual(judge(often(10), bounds).problems, []);
    assert.deepEqual(judge(often(2), bounds).problems, ['the forwarding lcores collected garbage 25 times in 50 s over 6 lcores, past the bound of 1 a minute per lcore (5 allowed): something on the data path allocates']);
  });

  it('plots an SVG with the three memory lines and the two pause lines', () => {
    const svg = plot(run(() => 200 * MiB), 'a <title>', 10);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 5);
    assert.ok(svg.includes('a &lt;title>'));
    assert.ok(svg.includes('longest GC pause per sample'));
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
    const p = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes=1', '--pause=0'], { encoding: 'utf8' });
    assert.equal(p.status, 2);
    assert.equal(p.stderr, 'dpkit: soak: --pause 0: expected ms > 0\n');
    const n = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes=1', '--pairs=ring,nope', '--out', dir], { encoding: 'utf8' });
    assert.equal(n.status, 2);
    assert.match(n.stderr, /^dpkit: soak: --pairs ring,nope: expected names from null,ring,pcap,vhost,nicsim(,memif)?\n$/);
  });

  it('a short soak on null, ring, pcap, vhost/virtio, nicsim and memif passes and writes its record and plot, pools full', () => {
    // 10 s after a 5 s warm-up on a loaded machine is no memory verdict (worker heaps still settle):
    // the floor is wide, and so is the pause bound (a collection preempted among six spinning
    // lcores and the other tests lasts scheduler slices), so this checks the harness, the pairs,
    // fds and pools; the verdict's own tests are above, on samples.
    const r = spawnSync(process.execPath, [DPKIT, 'soak', '--minutes', '0.25', '--period', '1', '--floor', '64', '--pause', '200', '--ci', '--out', dir], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const rec = JSON.parse(readFileSync(join(dir, 'soak.json'), 'utf8')) as { pass: boolean; samples: SoakSample[]; pairs: { name: string; rxPackets: number }[]; gc: GcSummary[] };
    assert.equal(rec.pass, true);
    // Without the native shim the memif pair is left out with one line, and the soak still passes.
    const memif = noShim ? [] : ['memif'];
    assert.deepEqual(rec.pairs.map((p) => p.name), ['null', 'ring', 'pcap', 'vhost', 'nicsim', ...memif]);
    if (noShim) assert.match(r.stdout, /^soak: memif: skipped: the native shim is /m);
    for (const p of rec.pairs) assert.ok(p.rxPackets > 0, `${p.name} forwarded`);
    assert.ok(rec.samples.length >= 10);
    // Every lcore answered the sampler at least once (an lcore descheduled past the wait answers at the next sample).
    assert.ok(rec.samples.some((s) => s.gc.nbLcores === rec.pairs.length), 'every lcore answered');
    assert.deepEqual(rec.gc.map((g) => g.kind), ['main', 'lcores']);
    assert.match(r.stdout, /^soak: gc forwarding lcores \(bound 200 ms a pause\): \d+ collections, pause p50 /m);
    assert.ok(!existsSync(join(dir, 'soak-memif.sock')), 'the memif socket file is gone');
    assert.match(readFileSync(join(dir, 'soak.svg'), 'utf8'), /^<svg /);
  });
});
