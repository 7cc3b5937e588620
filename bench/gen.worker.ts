import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { genOps } from '../src/gen/gen.twin.js';

const job = workerData as { ctl: Int32Array; thread: number; datapath: 'wasm' | 'ts'; heap: HeapDescriptor; s: number; burst: number; n: number };
const heap = Heap.attach(job.heap, 1, job.datapath);
// The ops as a run calls them: chosen once, called by heap offsets per burst.
const ops = genOps(heap);
const lc = heap.lcore;
const { s, burst, n } = job;
const iter = (): number => {
  ops.fill(s, lc, burst, n);
  ops.csum(s, lc, burst, n);
  return n;
};
parentPort!.postMessage(await benchLoop(job.ctl, job.thread, iter));
