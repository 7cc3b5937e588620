import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { clockIsNative, clockUncertaintyNs, nowNs } from '../../src/eal/clock.js';
import { nativeUnavailable } from '../../src/native/native.js';
import { startWorker } from '../../src/eal/spawn.js';
import { bytesPerCall } from '../helpers.js';

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
    await sameClockOnWorker({});
  });

  it('is the same clock on a worker without the native shim (performance.now() calibrated to CLOCK_MONOTONIC)', async () => {
    await sameClockOnWorker({ env: { ...process.env, DPKIT_NO_NATIVE: '1' } }, false);
  });

  it('allocates nothing a reading when the native shim reads it (performance.now() boxes each in 16 bytes)', async (t) => {
    if (!clockIsNative()) return t.skip(`native shim ${nativeUnavailable() ?? 'without clockBind (rebuild it)'}`);
    // The meter (bytesPerCall) reads only optimized code's allocations once V8 has installed it.
    // The meter sees an allocation that must happen: an object kept past its call.
    const keep: { i: number }[] = new Array(1024);
    const kept = await bytesPerCall((n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += (keep[i & 1023] = { i }).i;
      return acc;
    }, 0);
    assert.ok(kept >= 8, `the meter counts allocations: ${kept} bytes a call`);
    const reading = await bytesPerCall((n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) acc += nowNs();
      return acc;
    }, 2);
    assert.ok(reading < 2, `nowNs: ${reading} bytes a reading`);
  });
});

/**
 * Asks a worker (started with `options`) for its reading 20 times: each falls between the main
 * thread's before the ask and after the answer. `native`: whether the worker must read through the shim.
 */
async function sameClockOnWorker(options: { env?: NodeJS.ProcessEnv }, native?: boolean): Promise<void> {
  const w = startWorker('clock-worker', import.meta.url, options);
  try {
    for (let i = 0; i < 20; i++) {
      const before = nowNs();
      w.postMessage('now');
      const [m] = (await once(w, 'message')) as [{ now: number; u: number; native: boolean }];
      const after = nowNs();
      if (native !== undefined) assert.equal(m.native, native, 'the worker\'s reading path');
      const slack = m.u + clockUncertaintyNs() + 1;
      assert.ok(m.now >= before - slack && m.now <= after + slack, `${before} <= ${m.now} <= ${after} (±${slack} ns)`);
    }
  } finally {
    await w.terminate();
  }
}
