import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { lpmOps } from '../src/lpm/lpm.twin.js';

const job = workerData as { ctl: Int32Array; thread: number; op: 'bulk' | 'x4'; burst: number; datapath: 'wasm' | 'ts'; heap: HeapDescriptor; lpm: number };
const heap = Heap.attach(job.heap, 1, job.datapath);
// The ops by heap offset, as the lcores call them: no view made per burst.
const ops = lpmOps(heap);
// 64 Ki random addresses walked a burst at a time, so the tables are hit as random traffic does.
const N = 1 << 16;
const ips = heap.burst(N);
let x = 0x1234567;
for (let i = 0; i < N; i++) ips[i] = ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
const hops = heap.burst(64);
const n = job.burst;
let at = 0;
const iter =
  job.op === 'x4'
    ? () => {
        ops.lookupX4(job.lpm, ips.byteOffset + 4 * at, hops.byteOffset, 0);
        at = (at + 4) & (N - 1);
        return 4;
      }
    : () => {
        ops.lookupBulk(job.lpm, ips.byteOffset + 4 * at, hops.byteOffset, n);
        at = (at + n) & (N - 1);
        return n;
      };
parentPort!.postMessage(await benchLoop(job.ctl, job.thread, iter));
