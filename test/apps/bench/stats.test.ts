import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapRatio, summarize, verdict } from '../../../src/apps/bench/stats.js';

/** Samples around `center` with a deterministic spread of ±`spread` (fraction). */
const around = (center: number, spread: number, n = 7) => Array.from({ length: n }, (_, i) => center * (1 + spread * Math.sin(i * 2.3 + center)));

describe('bench statistics', () => {
  it('summarizes: median of odd and even counts, min, max', () => {
    assert.deepEqual(summarize([3, 1, 2]), { median: 2, min: 1, max: 3, n: 3 });
    assert.equal(summarize([4, 1, 3, 2]).median, 2.5);
    assert.ok(Number.isNaN(summarize([]).median));
  });

  it('calls a clear 10 % gain faster, with the interval around 1.10 and excluding 1', () => {
    const ci = bootstrapRatio(around(100, 0.01), around(110, 0.01));
    assert.ok(Math.abs(ci.ratio - 1.1) < 0.01, `ratio ${ci.ratio}`);
    assert.ok(ci.lo > 1 && ci.lo <= ci.ratio && ci.ratio <= ci.hi);
    assert.equal(verdict(ci), 'faster');
  });

  it('calls a clear 10 % loss slower', () => {
    assert.equal(verdict(bootstrapRatio(around(100, 0.01), around(90, 0.01))), 'slower');
  });

  it('finds no significant difference in a 2 % change drowned in ±5 % noise (what the macswap reviewers asked)', () => {
    const ci = bootstrapRatio(around(100, 0.05), around(102, 0.05));
    assert.ok(ci.lo < 1 && ci.hi > 1, `[${ci.lo}, ${ci.hi}]`);
    assert.equal(verdict(ci), 'no significant difference');
  });

  it('is reproducible for a given seed, and narrows with less noise', () => {
    const a = around(100, 0.03);
    const b = around(103, 0.03);
    assert.deepEqual(bootstrapRatio(a, b, 0.95, 2000, 7), bootstrapRatio(a, b, 0.95, 2000, 7));
    const wide = bootstrapRatio(around(100, 0.05), around(100, 0.05));
    const narrow = bootstrapRatio(around(100, 0.005), around(100, 0.005));
    assert.ok(narrow.hi - narrow.lo < wide.hi - wide.lo);
  });
});
