import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCheckout, renderMicroArms, THIS_ARM } from '../../../src/apps/bench/micro-arms.js';
import { filterCases } from '../../../src/apps/bench/runner.js';
import type { Benchmark } from '../../../src/apps/bench/types.js';
import { ArgError } from '../../../src/errors.js';

describe('bench --checkout for micro-benchmarks', () => {
  it('refuses what is not NAME=DIR, the name of this tree, and a folder without a built dpkit', () => {
    assert.throws(() => parseCheckout('/tmp/before'), (e: unknown) => e instanceof ArgError && /expected NAME=DIR/.test(e.message));
    assert.throws(() => parseCheckout(`${THIS_ARM}=.`), (e: unknown) => e instanceof ArgError && /names this tree's arm/.test(e.message));
    assert.throws(() => parseCheckout('before=/nonexistent/dpkit'), (e: unknown) => e instanceof ArgError && /holds no built dpkit/.test(e.message));
  });

  it('takes a built checkout (this one) by name', () => {
    assert.deepEqual(parseCheckout('again=.'), { name: 'again', dir: process.cwd() });
  });

  it('reports each arm and the ratio with its interval and verdict per case', () => {
    const text = renderMicroArms('t', [
      {
        name: 'host-to-guest 64 B dpkit',
        arms: [
          { name: 'before', samples: [10, 11], summary: { median: 10.5, min: 10, max: 11, n: 2 } },
          { name: THIS_ARM, samples: [20, 21], summary: { median: 20.5, min: 20, max: 21, n: 2 } },
        ],
        ratios: [{ a: 'before', b: THIS_ARM, ci: { ratio: 1.952, lo: 1.8, hi: 2.1, level: 0.95 }, verdict: 'faster' }],
      },
    ]);
    assert.match(text, /before Mpps \(min\.\.max\)/);
    assert.match(text, /10\.5 \(10\.0\.\.11\.0\)/);
    assert.match(text, /1\.952 \(1\.800\.\.2\.100\)/);
    assert.match(text, /▲ faster/);
  });

  it('splits bimodal arms by their probes and compares this tree level by level, as a matrix report does', () => {
    const probe = (ns: number) => ({ cpus: [0, 1] as [number, number], roundTripNs: ns, spinNs: [2, 2] as [number, number] });
    const arm = (name: string, slow: number[], fast: number[]) => {
      const samples = [...slow, ...fast];
      return { name, samples, summary: { median: 0, min: 0, max: 0, n: samples.length }, probes: [...slow.map(() => probe(550)), ...fast.map(() => probe(150))] };
    };
    const before = arm('before', [5.0, 5.1, 4.9, 5.2, 5.0], [10.0, 10.4, 9.8, 10.1, 10.2]);
    const self = arm(THIS_ARM, [6.0, 6.1, 5.9, 6.2, 6.0], [10.1, 10.3, 9.9, 10.0, 10.2]);
    const text = renderMicroArms('t', [{ name: 'host-to-guest 256 B dpkit', arms: [before, self], ratios: [{ a: 'before', b: THIS_ARM, ci: { ratio: 1, lo: 0.6, hi: 1.7, level: 0.95 }, verdict: 'no significant difference' }] }]);
    assert.match(text, /CPU probe before each repetition: cache-line round trip/);
    assert.match(text, /~ host-to-guest 256 B dpkit \(before\) is bimodal: slow 5 runs 5\.00 Mpps, round trip 550 ns/);
    assert.match(text, /~ host-to-guest 256 B dpkit: this vs before by mode: slow 5\.00 : 6\.00 \(\+20\.0 %, 95 % CI [\d.]+\.\.[\d.]+: faster\), fast 10\.10 : 10\.10 \([^)]*: no significant difference\)/);
    // Without probes (a checkout from before them) nothing is split.
    const bare = renderMicroArms('t', [{ name: 'x', arms: [{ ...before, probes: undefined }, { ...self, probes: undefined }], ratios: [] }]);
    assert.doesNotMatch(bare, /~|CPU probe/);
  });

  it("names one case to a checkout's process exactly, though case names hold commas", () => {
    const names = ['hash lookupBulk 16, wasm', 'hash lookupBulk 64, wasm', 'hash lookupBulk 16, ts', 'hash lookupBulk, DPDK'];
    const b = { name: 'lpm', cases: () => names.map((name) => ({ name, params: {} })) } as unknown as Benchmark;
    const opts = { reps: 1, durationMs: 1, warmupMs: 0, quick: false };
    assert.deepEqual(filterCases(b, opts, 'hash lookupBulk 16, wasm').map((c) => c.name), ['hash lookupBulk 16, wasm']);
    // Not a whole name: comma-separated substrings, as a user types them.
    assert.deepEqual(filterCases(b, opts, 'wasm,ts').map((c) => c.name), names.slice(0, 3));
    // "!" leaves out what holds it, with or without parts that select.
    assert.deepEqual(filterCases(b, opts, 'lookupBulk 16,!ts').map((c) => c.name), ['hash lookupBulk 16, wasm']);
    assert.deepEqual(filterCases(b, opts, '!wasm').map((c) => c.name), names.slice(2));
    assert.throws(() => filterCases(b, opts, 'ts,!hash'), (e: unknown) => e instanceof ArgError && /no case matches --filter ts,!hash/.test(e.message));
    assert.throws(() => filterCases(b, opts, 'lpm6'), (e: unknown) => e instanceof ArgError && /no case matches --filter lpm6/.test(e.message));
  });
});
