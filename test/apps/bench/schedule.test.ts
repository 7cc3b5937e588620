import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { schedule } from '../../../src/apps/bench/schedule.js';

describe('bench schedule', () => {
  it('runs every arm once per pair and cell, pair after pair over all cells', () => {
    const runs = schedule(3, 2, 6, 7);
    assert.equal(runs.length, 3 * 2 * 6);
    for (let pair = 0; pair < 6; pair++) {
      const block = runs.slice(pair * 6, pair * 6 + 6);
      assert.ok(block.every((r) => r.pair === pair), 'pair-major: pair p of every cell before pair p + 1');
      for (let cell = 0; cell < 3; cell++) {
        const arms = block.filter((r) => r.cell === cell).map((r) => r.arm);
        assert.deepEqual([...arms].sort(), [0, 1], `cell ${cell} pair ${pair}: each arm once`);
        assert.deepEqual(block.slice(cell * 2, cell * 2 + 2).map((r) => r.cell), [cell, cell], 'a pair runs back to back');
      }
    }
  });

  it('randomizes which arm goes first, pair by pair, and replays from its seed', () => {
    const runs = schedule(1, 2, 40, 3);
    const firsts = runs.filter((_, i) => i % 2 === 0).map((r) => r.arm);
    const bFirst = firsts.filter((a) => a === 1).length;
    assert.ok(bFirst >= 10 && bFirst <= 30, `B first in ${bFirst} of 40 pairs`);
    assert.deepEqual(schedule(1, 2, 40, 3), runs, 'same seed, same schedule');
    assert.notDeepEqual(schedule(1, 2, 40, 4), runs, 'another seed, another order');
  });

  it('shuffles more than two arms over all their orders', () => {
    const runs = schedule(1, 3, 60, 11);
    const orders = new Set<string>();
    for (let p = 0; p < 60; p++) orders.add(runs.slice(p * 3, p * 3 + 3).map((r) => r.arm).join(''));
    assert.equal(orders.size, 6, `orders seen: ${[...orders].join(' ')}`);
  });
});
