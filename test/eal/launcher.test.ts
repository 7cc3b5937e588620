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

it('releases every lcore at once, after the slowest has finished its set-up', async () => {
  const lc = new Lcores('polling.worker', import.meta.url, [
    { lcoreId: 1, job: {} },
    { lcoreId: 2, job: { setupMs: 300 } },
  ]);
  await lc.launched();
  const t = performance.timeOrigin + lc.startedAt!;
  lc.requestStop();
  const results = (await lc.wait()) as { releasedAt: number }[];
  // Neither polled before the release: the fast lcore waited for the slow one.
  for (const r of results) assert.ok(r.releasedAt >= t - 1, `released ${(t - r.releasedAt).toFixed(1)} ms before the launch`);
});

it('turns a throwing lcore into an LcoreError naming it, and stops the others instead of hanging', async () => {
  const lc = new Lcores('polling.worker', import.meta.url, [
    { lcoreId: 1, job: {} },
    { lcoreId: 3, job: { failAfterMs: 100 } },
  ]);
  await lc.launched();
  await assert.rejects(lc.failed(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 3 && /lcore 3: driver exploded/.test(e.message));
  // Nobody called requestStop: the failure did, so lcore 1 ends and wait() settles.
  await assert.rejects(lc.wait(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 3);
});

it('fails the launch, naming the lcore, when one fails its set-up; the ready ones are let go', async () => {
  const lc = new Lcores('polling.worker', import.meta.url, [
    { lcoreId: 1, job: {} },
    { lcoreId: 2, job: { failSetup: true } },
  ]);
  await assert.rejects(lc.launched(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 2 && /lcore 2: queue would not open/.test(e.message));
  await assert.rejects(lc.wait(), (e: unknown) => e instanceof LcoreError && e.lcoreId === 2);
  assert.equal(lc.startedAt, undefined, 'never launched');
});
