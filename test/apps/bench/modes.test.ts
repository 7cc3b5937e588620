import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { CpuProbe, type CpuProbeResult } from '../../../src/apps/bench/cpu-probe.js';
import { runMatrix } from '../../../src/apps/bench/matrix-run.js';
import { renderTable, runBenchmark } from '../../../src/apps/bench/runner.js';
import type { Benchmark } from '../../../src/apps/bench/types.js';
import type { MatrixConfig } from '../../../src/apps/bench/matrix.js';
import { compareByMode, modesText, probeSummary, rateModes } from '../../../src/apps/bench/modes.js';
import { renderText } from '../../../src/apps/bench/render-text.js';
import { native } from '../../../src/native/native.js';

const probe = (roundTripNs: number, spin = 2): CpuProbeResult => ({ cpus: [0, 1], roundTripNs, spinNs: [spin, spin] });
const noProbe = !native() ? 'native shim not built' : availableParallelism() < 2 ? 'one CPU' : false;

describe('bimodal arms and the CPU probe', () => {
  it('splits a bimodal arm at its widest gap and gives each mode its probe medians', () => {
    const samples = [7.1, 14.2, 6.9, 7.3, 15.0, 7.0];
    const probes = [probe(1000), probe(300, 1.9), probe(980), probe(NaN), probe(320, 1.9), probe(1020)];
    const m = rateModes({ samples, probes })!;
    assert.deepEqual(m.slow, { runs: 4, samples: [7.1, 6.9, 7.3, 7.0], mpps: 7.05, roundTripNs: 1000, spinNs: 2 }, 'the timed-out probe (NaN) is left out of the median');
    assert.deepEqual(m.fast, { runs: 2, samples: [14.2, 15.0], mpps: 14.6, roundTripNs: 310, spinNs: 1.9 });
    assert.equal(modesText(m), 'slow 4 runs 7.05 Mpps, round trip 1000 ns, spin 2.00 ns | fast 2 runs 14.60 Mpps, 310 ns, 1.90 ns');
  });

  it('splits at the two levels, not at one stray run below them', () => {
    // The memif pair's DPDK arm at 1518 B, 30 runs: one at 0.64, 12 near 2, one at 5.0, 16 near 8 to 12.
    const samples = [0.64, 1.4, 1.6, 1.7, 2.0, 2.0, 2.1, 2.2, 2.2, 2.2, 2.3, 2.3, 2.5, 5.0, 7.7, 8.3, 8.6, 8.9, 10.2, 10.4, 10.5, 10.7, 11.0, 11.2, 11.3, 11.5, 11.6, 11.9, 12.1, 12.2];
    const m = rateModes({ samples, probes: samples.map(() => probe(200)) })!;
    assert.equal(m.slow.runs, 13);
    assert.equal(m.fast.runs, 17);
    assert.deepEqual([m.slow.samples.at(-1), m.fast.samples[0]], [2.5, 5.0]);
    // A lone run far off an otherwise tight arm is still its own mode (too few runs for a verdict later).
    const lone = rateModes({ samples: [10, 10.2, 9.9, 10.1, 21], probes: [1, 2, 3, 4, 5].map(() => probe(200)) })!;
    assert.deepEqual([lone.slow.runs, lone.fast.runs], [4, 1]);
  });

  it('finds no modes in a tight arm, one without probes, or one whose probes do not match its samples', () => {
    assert.equal(rateModes({ samples: [10, 10.5, 11, 12], probes: [probe(1), probe(1), probe(1), probe(1)] }), null, 'max/min 1.2 < MODE_GAP');
    assert.equal(rateModes({ samples: [7, 14] }), null);
    assert.equal(rateModes({ samples: [7, 14, 7], probes: [probe(1), probe(1)] }), null);
  });

  it('compares two bimodal arms mode by mode, and only where their modes line up', () => {
    const arm = (slow: number[], fast: number[]) => ({ samples: [...slow, ...fast], probes: [...slow, ...fast].map(() => probe(500)) });
    const a = arm([10, 10.2, 9.9, 10.1, 10.3, 9.8], [20, 21, 20.5, 19.8, 20.2]);
    const b = arm([10.1, 10.0, 10.2, 10.3, 9.9], [24, 25, 24.5, 23.8, 24.2, 25.1, 24.9]);
    const [slow, fast] = compareByMode(a, b)!;
    assert.equal(slow!.mode, 'slow');
    assert.equal(slow!.verdict, 'no significant difference');
    assert.ok(slow!.lo < 1 && slow!.hi > 1);
    assert.equal(fast!.mode, 'fast');
    assert.equal(fast!.verdict, 'faster');
    assert.ok(Math.abs(fast!.ratio - 24.5 / 20.2) < 1e-9, `fast ratio ${fast!.ratio}`);
    assert.equal(compareByMode(a, arm([20, 20.1, 20.2], [40, 41, 42]))?.length, undefined, "B's slow level is A's fast one: no line-up");
    assert.equal(compareByMode(a, { samples: [10, 10.1, 10.2, 10.1, 10, 9.9], probes: a.probes.slice(0, 6) }), null, 'B is not bimodal');
    const few = compareByMode(a, arm([10, 10.1, 10.2, 10, 10.1, 10.2], [20, 20.4]))!;
    assert.equal(few[1]!.verdict, 'too few runs', 'a mode of 2 runs gets no verdict');
  });

  it('summarizes the run\'s probes, or says nothing when none finished', () => {
    assert.equal(probeSummary([probe(300, 1.9), probe(1000, 2.1), probe(500, 2)]), 'round trip 500 ns [300..1000], spin 2.00 ns [1.90..2.10]');
    assert.equal(probeSummary([probe(NaN)]), null);
    assert.equal(probeSummary([]), null);
  });

  it('probes two pinned CPUs: both threads finish every round trip and time their loops', { skip: noProbe }, async () => {
    const p = (await CpuProbe.start())!;
    try {
      for (let i = 0; i < 2; i++) {
        const r = await p.probe();
        assert.deepEqual(r.cpus, [0, 1]);
        assert.ok(Number.isFinite(r.roundTripNs) && r.roundTripNs > 0, `round trip ${r.roundTripNs}`);
        for (const s of r.spinNs) assert.ok(Number.isFinite(s) && s > 0, `spin ${s}`);
      }
    } finally {
      await p.close();
    }
  });

  it('records a probe beside every sample of a matrix and prints the modes of a bimodal arm', { skip: noProbe }, async () => {
    const config: MatrixConfig = { name: 'synthetic', title: 'a bimodal arm', matrix: [{ engines: ['io'], sizes: [64], lcores: [1] }], variants: [{ name: 'steady' }, { name: 'jumpy' }], pairs: 6, seconds: 1, warmup: 0 };
    let k = 0;
    const r = await runMatrix(config, { measure: async (_c, v) => (v.name === 'jumpy' && k++ % 3 === 0 ? 20 : 10), dpdk: false, probe: true });
    for (const a of r.cells[0]!.arms) {
      assert.equal(a.probes?.length, a.samples.length, `${a.name}: one probe per sample`);
      assert.ok(a.probes!.every((p) => Number.isFinite(p.roundTripNs)));
    }
    const text = renderText(r);
    assert.match(text, /^CPU probe before each run \(CPUs 0 <-> 1\): cache-line round trip \d+ ns/m);
    assert.match(text, /^ ~ jumpy is bimodal: slow 4 runs 10\.00 Mpps, round trip \d+ ns, spin [\d.]+ ns \| fast 2 runs 20\.00 Mpps/m);
    assert.doesNotMatch(text, /steady is bimodal/);
    const plain = await runMatrix(config, { measure: async () => 10, dpdk: false });
    assert.equal(plain.cells[0]!.arms[0]!.probes, undefined, 'a synthetic measure is not probed unless asked');
    assert.doesNotMatch(renderText(plain), /CPU probe/);
  });

  it('probes before each repetition of a micro-benchmark that asks for it, and prints its bimodal cases', { skip: noProbe }, async () => {
    let k = 0;
    const benchmark: Benchmark = {
      name: 'pair',
      title: 'a synthetic pair',
      probe: true,
      cases: () => [
        { name: 'steady', params: {}, measure: async () => ({ mpps: 10, gc: 0 }) },
        { name: 'jumpy', params: {}, measure: async () => ({ mpps: k++ % 2 ? 20 : 10, gc: 0 }) },
      ],
    };
    const results = await runBenchmark(benchmark, { reps: 4, durationMs: 1, warmupMs: 0, quick: true });
    for (const r of results) assert.equal(r.probes?.length, 4, `${r.name}: a probe per repetition`);
    const text = renderTable('t', results);
    assert.match(text, /^CPU probe before each repetition: cache-line round trip \d+ ns/m);
    assert.match(text, /^  ~ jumpy is bimodal: slow 2 runs 10\.00 Mpps/m);
    assert.doesNotMatch(text, /steady is bimodal/);
    const plain = await runBenchmark({ ...benchmark, probe: undefined }, { reps: 2, durationMs: 1, warmupMs: 0, quick: true });
    assert.equal(plain[0]!.probes, undefined);
  });
});
