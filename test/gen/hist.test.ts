import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { histBytes, histHighest, histIndex, histLowest, LatencyHistogram } from '../../src/gen/hist.js';
import { Heap } from '../../src/eal/heap.js';

/** A seeded generator (mulberry32): the same samples on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Latencies from 1 ns to 10 s, spread evenly over the decades. */
function samples(n: number, seed: number): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => Math.floor(10 ** (r() * 10)));
}

describe('latency histogram', () => {
  it('puts every value in a bucket whose bounds hold it, no wider than 1/2^(bits-1) of it, buckets in order', () => {
    for (const bits of [4, 7, 11]) {
      let last = -1;
      for (const v of [0, 1, 2, 2 ** bits - 1, 2 ** bits, 2 ** bits + 1, 12345, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 7, 99_999_999_999, 2 ** 50 + 3]) {
        const i = histIndex(bits, v);
        assert.ok(histLowest(bits, i) <= v && v <= histHighest(bits, i), `bits ${bits}: ${v} in bucket ${i} [${histLowest(bits, i)}, ${histHighest(bits, i)}]`);
        assert.ok(histHighest(bits, i) - histLowest(bits, i) + 1 <= Math.max(1, v / 2 ** (bits - 1)));
        assert.ok(i >= last);
        last = i;
      }
      for (let i = 0; i < 5000; i++) assert.equal(histLowest(bits, i + 1), histHighest(bits, i) + 1, 'buckets tile the values');
    }
  });

  it('answers percentiles as a sorted reference does, to the bucket: p50 .. p99.99 are the highest value of the reference sample\'s bucket', () => {
    for (const bits of [7, 11]) {
      const xs = samples(100_000, bits);
      const h = LatencyHistogram.detached({ bits, maxNs: 100e9 });
      for (const x of xs) h.record(x);
      const sorted = [...xs].sort((a, b) => a - b);
      for (const p of [1, 10, 50, 90, 99, 99.9, 99.99]) {
        const ref = sorted[Math.ceil((p / 100) * sorted.length) - 1]!;
        assert.equal(h.valueAt(p), Math.min(histHighest(bits, histIndex(bits, ref)), sorted.at(-1)!), `bits ${bits} p${p} (reference ${ref})`);
      }
      assert.equal(h.valueAt(100), sorted.at(-1));
      assert.equal(h.valueAt(0), sorted[0]);
      const s = h.summary();
      assert.deepEqual([s.count, s.min, s.max, s.overflow], [xs.length, sorted[0], sorted.at(-1), 0]);
      assert.ok(Math.abs(s.mean - xs.reduce((a, b) => a + b, 0) / xs.length) < 1e-6 * s.mean);
    }
  });

  it('merges lcores\' histograms into one equal to a histogram of all their samples', () => {
    const heap = Heap.create({ size: 4 << 20 });
    const parts = [0, 1, 2].map(() => LatencyHistogram.create(heap, { bits: 9 }));
    const all = LatencyHistogram.detached({ bits: 9 });
    samples(30_000, 7).forEach((x, i) => {
      parts[i % 3]!.record(x);
      all.record(x);
    });
    const merged = LatencyHistogram.detached({ bits: 9 });
    for (const p of parts) merged.merge(p);
    assert.deepEqual(merged.summary(), all.summary());
    for (let i = 0; i < all.nbCounts; i++) assert.equal(merged.bucket(i), all.bucket(i));
    assert.throws(() => merged.merge(LatencyHistogram.detached({ bits: 10 })), /shapes differ/);
  });

  it('counts values past its top in the last bucket and as overflow; refuses a bad shape in one line', () => {
    const h = LatencyHistogram.detached({ bits: 7, maxNs: 1_000_000 });
    h.record(5);
    h.record(2e9);
    assert.equal(h.overflow, 1);
    assert.equal(h.max, 2e9);
    assert.equal(h.valueAt(100), 2e9);
    assert.equal(h.bucket(h.nbCounts - 1), 1);
    h.reset();
    assert.deepEqual([h.count, h.max, h.overflow, h.valueAt(50)], [0, 0, 0, 0]);
    assert.throws(() => histBytes({ bits: 3 }), /bits=3: must be an integer in \[4, 16\]/);
    assert.throws(() => histBytes({ maxNs: 10 }), /maxNs=10/);
    assert.throws(() => h.valueAt(101), /percentile 101/);
    assert.throws(() => new LatencyHistogram(new ArrayBuffer(256), 8), /no valid header/);
    assert.equal(histBytes(), 64 + 8 * 28115, '1 ns .. 100 s at 3 significant digits: 28 115 buckets');
  });
});
