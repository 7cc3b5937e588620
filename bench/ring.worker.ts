import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Ring, type RingDescriptor } from '../src/ring/ring.js';

const job = workerData as { ctl: Int32Array; thread: number; role: 'producer' | 'consumer'; lcore: number; burst: number; heap: HeapDescriptor; ring: RingDescriptor };
const heap = Heap.attach(job.heap, job.lcore);
const ring = Ring.attach(heap, job.ring);
const burst = new Uint32Array(job.burst);
for (let i = 0; i < job.burst; i++) burst[i] = 1000 + i;
const n = job.burst;

const iter = job.role === 'producer' ? () => ring.enqueueBurst(burst, n) : () => ring.dequeueBurst(burst, n);
parentPort!.postMessage(await benchLoop(job.ctl, job.thread, iter));
