// A bare typed-array loop on one pinned thread: the machine's own scaling
// from 1 to 2 busy cores, the ceiling for any forwarding scaling figure.
import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { pinThisThread } from '../src/eal/affinity.js';

const job = workerData as { ctl: Int32Array; thread: number; cpus?: number[] };
pinThisThread(job.cpus);
const a = new Uint32Array(4096);
let i = 0;
const report = await benchLoop(job.ctl, job.thread, () => {
  for (let k = 0; k < 64; k++, i++) a[i & 4095] = (a[(i * 7) & 4095]! + i) | 0;
  return 64;
});
parentPort!.postMessage(report);
