// An lcore that polls until stopped (or throws after failAfterMs, or in its set-up with failSetup), for launcher.test.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { pinThisThread } from '../../src/eal/affinity.js';
import { CTL_STOP, lcoreReady } from '../../src/eal/launcher.js';

const { ctl, lcoreId, job, cpus } = workerData as { ctl: Int32Array; lcoreId: number; job: { failAfterMs?: number; failSetup?: boolean; setupMs?: number }; cpus?: number[] };
const cpu = pinThisThread(cpus);
if (job.failSetup) throw new Error('queue would not open');
if (job.setupMs) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, job.setupMs); // a slow set-up
lcoreReady(ctl, cpu);
const releasedAt = performance.timeOrigin + performance.now();
const failAt = job.failAfterMs === undefined ? Infinity : Date.now() + job.failAfterMs;
let polls = 0;
while (Atomics.load(ctl, CTL_STOP) === 0) {
  polls++;
  if (polls === 1) Atomics.store(ctl, 8 + lcoreId, 1); // tell the test this lcore is polling
  if ((polls & 1023) === 0 && Date.now() > failAt) throw new Error('driver exploded');
}
parentPort!.postMessage({ lcoreId, polls, cpu, releasedAt });
