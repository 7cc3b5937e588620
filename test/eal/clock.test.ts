import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { clockUncertaintyNs, nowNs } from '../../src/eal/clock.js';
import { startWorker } from '../../src/eal/spawn.js';

describe('nowNs', () => {
  it('reads CLOCK_MONOTONIC: each reading lies between two process.hrtime readings around it', () => {
    const u = clockUncertaintyNs();
    assert.ok(u >= 0 && Number.isFinite(u));
    for (let i = 0; i < 100; i++) {
      const a = Number(process.hrtime.bigint());
      const t = nowNs();
      const b = Number(process.hrtime.bigint());
      assert.ok(t >= a - u - 1 && t <= b + u + 1, `${a} <= ${t} <= ${b} (±${u} ns)`);
    }
  });

  it('never goes backwards and counts whole nanoseconds', () => {
    let last = nowNs();
    for (let i = 0; i < 10_000; i++) {
      const t = nowNs();
      assert.ok(t >= last);
      assert.ok(Number.isInteger(t));
      last = t;
    }
  });

  it('is the same clock on a worker thread: its reading falls between the main thread\'s before the ask and after the answer', async () => {
    const w = startWorker('clock-worker', import.meta.url);
    try {
      for (let i = 0; i < 20; i++) {
        const before = nowNs();
        w.postMessage('now');
        const [{ now, u }] = (await once(w, 'message')) as [{ now: number; u: number }];
        const after = nowNs();
        const slack = u + clockUncertaintyNs() + 1;
        assert.ok(now >= before - slack && now <= after + slack, `${before} <= ${now} <= ${after} (±${slack} ns)`);
      }
    } finally {
      await w.terminate();
    }
  });
});
