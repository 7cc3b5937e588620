import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measure } from '../../../src/apps/bench/harness.js';
import { startWorker } from '../../../src/eal/spawn.js';

const thread = (mode: 'alloc' | 'clean') => ({
  start: (ctl: Int32Array, t: number) => startWorker('gc.worker', import.meta.url, { workerData: { ctl, thread: t, mode } }),
  counted: true,
});

describe('bench harness', () => {
  it('counts the garbage collections a thread makes inside the measured window', async () => {
    const m = await measure([thread('alloc')], 100, 300);
    assert.ok(m.mpps > 0);
    assert.ok(m.gc > 0, 'a thread allocating 2 KiB a call collected nothing in the window');
  });

  it('counts none for a loop that allocates nothing, across the switch from warm-up to measuring', async () => {
    const m = await measure([thread('clean'), thread('clean')], 300, 500);
    assert.ok(m.mpps > 0);
    assert.equal(m.gc, 0);
  });
});
