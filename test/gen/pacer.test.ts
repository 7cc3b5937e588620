import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { init } from '../../src/api/eal.js';
import { generate } from '../../src/gen/generate.js';
import { countBefore, makePacer, parseRate, type PatternSpec } from '../../src/gen/pacer.js';
import { assertFull, portUp } from '../helpers.js';
import { fakeClock } from './clock.js';

describe('pacer: deadlines are absolute', () => {
  it('constant: packet i is due at i / rate, with no drift after 10^9 packets', () => {
    const p = makePacer(3e6, undefined, 64, 't');
    assert.equal(p.deadline(0), 0);
    assert.equal(p.deadline(3), 1000);
    assert.ok(Math.abs(p.deadline(3e9) - 1e12) < 1, 'the billionth deadline is where i / rate says');
    assert.equal(countBefore(p, 1e9), 3e6);
    assert.equal(countBefore(p, 1e9 + 1), 3e6 + 1);
  });

  it('burst: m packets at the rate, then silence for off', () => {
    const p = makePacer(1e6, { kind: 'burst', on: 10e-6, off: 30e-6 }, 64, 't');
    assert.deepEqual([0, 9, 10, 19, 20].map((i) => p.deadline(i)), [0, 9000, 40000, 49000, 80000]);
  });

  it('ramp: the rate rises linearly from `from` to the stream rate, then holds', () => {
    const p = makePacer(2e6, { kind: 'ramp', from: '1Mpps', over: 1e-3 }, 64, 't');
    // ∫ rate over 1 ms = (1 + 2) / 2 Mpps × 1 ms = 1500 packets.
    assert.ok(Math.abs(p.deadline(1500) - 1e6) < 1e-3);
    assert.ok(Math.abs(p.deadline(1502) - p.deadline(1500) - 1000) < 1e-6, 'after the ramp: 2 Mpps');
    assert.ok(Math.abs(p.deadline(1) - 1000) < 1, 'at the start: about 1 Mpps');
  });

  it('poisson: repeatable, the same deadline whichever order it is asked in, mean gap 1 / rate', () => {
    const a = makePacer(1e6, { kind: 'poisson', seed: 7 }, 64, 't');
    const b = makePacer(1e6, { kind: 'poisson', seed: 7 }, 64, 't');
    const inOrder = Array.from({ length: 5000 }, (_, i) => a.deadline(i));
    // b is asked backwards and out of order: checkpoints and the cursor must give the same sums.
    for (const i of [4999, 17, 3000, 1024, 1023, 0, 2048, 4000]) assert.equal(b.deadline(i), inOrder[i], `deadline(${i})`);
    assert.equal(a.deadline(0), 0);
    for (let i = 1; i < 5000; i++) assert.ok(inOrder[i]! > inOrder[i - 1]!, 'strictly increasing');
    const other = makePacer(1e6, { kind: 'poisson', seed: 8 }, 64, 't');
    assert.notEqual(other.deadline(10), inOrder[10], 'another seed, other departures');
    // 200 000 gaps of mean 1 us: the mean is within 1 % (its standard error is 0.22 %).
    const far = makePacer(1e6, { kind: 'poisson' }, 64, 't').deadline(200_000);
    assert.ok(Math.abs(far / 200_000 - 1000) < 10, `mean gap ${far / 200_000} ns`);
    assert.throws(() => makePacer(1, { kind: 'poisson', seed: -1 }, 64, 'gen'), /^ArgError: gen: pattern.seed: -1 must be an integer in \[0, 2\^32\)$/);
  });

  it('schedule: each step at its own rate, silent steps, then held or looped', () => {
    const steps = [
      { for: 1e-3, rate: '1Mpps' },
      { for: 1e-3, rate: 0 },
      { for: 1e-3, rate: 2e6 },
    ];
    const held = makePacer(5, { kind: 'schedule', steps }, 64, 't');
    // 1000 packets 1 us apart, 1 ms silent, 2000 packets 0.5 us apart, then 2 Mpps held.
    assert.deepEqual([0, 1, 999, 1000, 1001, 2999, 3000, 3002].map((i) => held.deadline(i)), [0, 1000, 999_000, 2e6, 2e6 + 500, 2e6 + 999_500, 3e6, 3e6 + 1000]);
    const looped = makePacer(5, { kind: 'schedule', steps, loop: true }, 64, 't');
    assert.deepEqual([2999, 3000, 3999, 4000, 6000].map((i) => looped.deadline(i)), [2e6 + 999_500, 3e6, 3e6 + 999_000, 5e6, 6e6]);
    assert.equal(countBefore(looped, 3e6 + 1), 3001);
    assert.throws(() => makePacer(1, { kind: 'schedule', steps: [] }, 64, 'gen'), /^ArgError: gen: pattern.steps: give at least one \{for, rate\} step$/);
    assert.throws(() => makePacer(1, { kind: 'schedule', steps: [{ for: 1, rate: 'lots' }] }, 64, 'gen'), /^ArgError: gen: pattern.steps\[0\].rate: 'lots' is not a rate/);
    assert.throws(() => makePacer(1, { kind: 'schedule', steps: [{ for: 0, rate: 1 }] }, 64, 'gen'), /gen: pattern.steps\[0\].for: 0 must be a positive number of seconds/);
    assert.throws(() => makePacer(1, { kind: 'schedule', steps: [{ for: 1, rate: 1 }, { for: 1, rate: 0 }] }, 64, 'gen'), /the last step is held after the schedule, so it may not be silent/);
  });

  it('rates: pps units, and bit rates divided by the mean frame', () => {
    assert.equal(parseRate('1.5Mpps', 64, 'r'), 1.5e6);
    assert.equal(parseRate(1000, 64, 'r'), 1000);
    assert.equal(parseRate('512kbps', 64, 'r'), 1000);
    assert.equal(parseRate('1Gbps', 125, 'r'), 1e6);
    assert.throws(() => parseRate('fast', 64, 'gen: rate'), /^ArgError: gen: rate: 'fast' is not a rate/);
    assert.throws(() => parseRate(0, 64, 'gen: rate'), /must be a positive rate/);
    assert.throws(() => makePacer(1, { kind: 'sine' } as unknown as PatternSpec, 64, 'gen'), /pattern kind "sine" must be constant, burst, ramp, poisson or schedule/);
    assert.throws(() => makePacer(1, { kind: 'burst', on: -1, off: 1 }, 64, 'gen'), /gen: pattern.on: -1 must be a positive number of seconds/);
  });
});

/** Kolmogorov-Smirnov statistic of the samples against the CDF `F`. */
function ksStatistic(samples: number[], F: (t: number) => number): number {
  const xs = [...samples].sort((a, b) => a - b);
  let d = 0;
  xs.forEach((x, i) => {
    const f = F(x);
    d = Math.max(d, Math.abs((i + 1) / xs.length - f), Math.abs(i / xs.length - f));
  });
  return d;
}

describe('a paced stream over a ring port: departures follow the pattern (KS, alpha 0.01)', () => {
  // Each case's N(t): packets the pattern puts before t seconds, written from the pattern's
  // definition, not from the pacer; durations end off the packets' boundaries.
  const cases: { name: string; pattern: PatternSpec; rate: number; D: number; N: (t: number) => number }[] = [
    { name: 'constant 800 kpps', pattern: { kind: 'constant' }, rate: 8e5, D: 1.0005e-3, N: (t) => t * 8e5 },
    {
      name: 'on/off bursts, 100 us on, 100 us off at 1 Mpps',
      pattern: { kind: 'burst', on: 1e-4, off: 1e-4 },
      rate: 1e6,
      D: 1.0505e-3,
      N: (t) => {
        const ns = Math.round(t * 1e9);
        const k = Math.floor(ns / 200_000);
        return 100 * k + Math.min(100_000, ns - k * 200_000) / 1000;
      },
    },
    {
      name: 'schedule 1 Mpps 300 us, silent 200 us, 2 Mpps 300 us',
      pattern: {
        kind: 'schedule',
        steps: [
          { for: 3e-4, rate: '1Mpps' },
          { for: 2e-4, rate: 0 },
          { for: 3e-4, rate: '2Mpps' },
        ],
      },
      rate: 1,
      D: 0.79e-3,
      N: (t) => (t <= 3e-4 ? t * 1e6 : t <= 5e-4 ? 300 : 300 + (t - 5e-4) * 2e6),
    },
    { name: 'ramp 100 kpps to 1 Mpps over 1 ms', pattern: { kind: 'ramp', from: 1e5, over: 1e-3 }, rate: 1e6, D: 0.9e-3, N: (t) => 1e5 * t + (9e5 * t * t) / (2 * 1e-3) },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const eal = init({ lcores: [0], vdevs: ['net_ring0'], mbufs: 2047, memory: 8 << 20 });
      try {
        portUp(eal.ethdev, eal.pool, 0);
        const depart = new Float64Array(2048).fill(NaN);
        const due = new Float64Array(2048).fill(NaN);
        const report = await generate(eal, {
          streams: [{ rate: c.rate, pattern: c.pattern, vary: [{ field: { offset: 42, width: 4 }, mode: 'inc' }] }],
          duration: c.D,
          burst: 4,
          clock: fakeClock(),
          onBurst: (_s, first, n, deadline, departNs) => {
            for (let i = first; i < first + n; i++) (depart[i] = departNs), (due[i] = deadline);
          },
        });
        const st = report.streams[0]!;
        assert.equal(st.planned, Math.ceil(c.N(c.D)), 'the schedule over the duration');
        assert.equal(st.sent, st.planned);
        assert.equal(st.txDropped, 0);
        assert.ok(report.kept, report.verdict);
        // Read every packet back off the ring: its sequence number says which departure it was.
        const burst = eal.burst(64);
        const times: number[] = [];
        for (let n; (n = eal.ethdev.rxBurst(0, 0, burst, 64)) > 0; ) {
          for (let i = 0; i < n; i++) {
            const p = eal.mbufs.mtod(burst[i]!);
            const seq = eal.heap.view.getUint32(p + 42);
            assert.equal(seq, times.length, 'in order, none missing');
            assert.ok(depart[seq]! >= due[seq]!, 'never before its deadline');
            times.push(due[seq]! / 1e9);
          }
          eal.mbufs.freeBulk(burst, n);
        }
        assert.equal(times.length, st.sent);
        const d = ksStatistic(times, (t) => c.N(t) / c.N(c.D));
        assert.ok(d < 1.63 / Math.sqrt(times.length), `KS D = ${d.toFixed(4)} over ${times.length} packets`);
        assertFull(eal.pool);
      } finally {
        await eal.close();
      }
    });
  }

  it('poisson 200 kpps: inter-departure gaps are exponential with mean 5 us', async () => {
    const eal = init({ lcores: [0], vdevs: ['net_ring0'], mbufs: 2047, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0);
      const due: number[] = [];
      const report = await generate(eal, {
        streams: [{ rate: '200kpps', pattern: { kind: 'poisson', seed: 3 } }],
        count: 1000,
        burst: 1,
        clock: fakeClock(),
        onBurst: (_s, _first, _n, deadline, departNs) => {
          assert.ok(departNs >= deadline, 'never before its deadline');
          due.push(deadline);
        },
      });
      assert.equal(report.streams[0]!.sent, 1000);
      assert.ok(report.kept, report.verdict);
      let got = 0;
      const burst = eal.burst(64);
      for (let n; (n = eal.ethdev.rxBurst(0, 0, burst, 64)) > 0; got += n) eal.mbufs.freeBulk(burst, n);
      assert.equal(got, 1000, 'every departure is on the ring');
      const gaps = due.slice(1).map((d, i) => (d - due[i]!) / 1e9);
      const expCdf = (x: number) => 1 - Math.exp(-x * 2e5);
      const d = ksStatistic(gaps, expCdf);
      assert.ok(d < 1.63 / Math.sqrt(gaps.length), `KS D = ${d.toFixed(4)} over ${gaps.length} gaps`);
      // The same check refuses constant gaps of the same mean.
      assert.ok(ksStatistic(gaps.map(() => 5e-6), expCdf) > 1.63 / Math.sqrt(gaps.length));
      assertFull(eal.pool);
    } finally {
      await eal.close();
    }
  });

  it('the KS check fails a schedule that is not the pattern (a constant stream against the ramp)', () => {
    const p = makePacer(550e3, undefined, 64, 't');
    const times = Array.from({ length: 550 }, (_, i) => p.deadline(i) / 1e9);
    const ramp = (t: number) => 1e5 * t + (9e5 * t * t) / (2 * 1e-3);
    assert.ok(ksStatistic(times, (t) => ramp(t) / ramp(1e-3)) > 1.63 / Math.sqrt(times.length));
  });
});
