import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Lcores, LcoreError } from '../../src/eal/launcher.js';

it('stops every lcore on the shared flag and collects their results', async () => {
  const lc = new Lcores('polling.worker', import.meta.url, [1, 2].map((lcoreId) => ({ lcoreId, job: {} })));
  // Stop only once both poll (word 8 + lcore id is set by the worker), so each has polled.
  while (Atomics.load(lc.ctl, 9) === 0 || Atomics.load(lc.ctl, 10) === 0) await new Promise((r) => setTimeout(r, 20));
  lc.requestStop();
  const results = (await lc.wait()) as { lcoreId: number; polls: number }[];
  assert.deepEqual(results.map((r) => r.lcoreId), [1, 2]);
  assert.ok(results.every((r) => r.polls > 0));
});

it('turns a throwing lcore into an LcoreError naming it, and stops the others instead of hanging', async () => {
  const lc = new Lcores('polling.worker', import.meta.url, [
    { lcoreId: 1, job: {} },
    { lcoreId: 3, job: { failAfterMs: 100 } },
  ]);
  await assert.rejects(lc.failed(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 3 && /lcore 3: driver exploded/.test(e.message));
  // Nobody called requestStop: the failure did, so lcore 1 ends and wait() settles.
  await assert.rejects(lc.wait(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 3);
});
