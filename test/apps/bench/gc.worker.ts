// A bench thread for the harness test: 'alloc' makes garbage every call,
// 'clean' does what the vhost bench's thread does (reads an f64 counter and
// returns the difference as an integer) and must make none.
import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../../../src/apps/bench/control.js';

const job = workerData as { ctl: Int32Array; thread: number; mode: 'alloc' | 'clean' };
const f64 = new Float64Array(8);
const keep: number[][] = new Array(16);
let i = 0;
const iter =
  job.mode === 'alloc'
    ? () => {
        keep[i++ & 15] = new Array(256).fill(i);
        return 1;
      }
    : () => {
        const before = f64[0]!;
        f64[0] = before + 32;
        return (f64[0]! - before) | 0;
      };
parentPort!.postMessage(await benchLoop(job.ctl, job.thread, iter));
