// One producer or consumer of the MPMC stress test; see ring-mt.test.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { Heap, type HeapDescriptor } from '../../src/eal/heap.js';
import { Ring, type RingDescriptor } from '../../src/ring/ring.js';

interface Job {
  heap: HeapDescriptor;
  ring: RingDescriptor;
  role: 'producer' | 'consumer';
  lcore: number;
  from: number;
  to: number;
  /** Shared counters: [consumed] and one seen counter per value. */
  consumed: Int32Array;
  seen: Uint8Array;
  total: number;
  /** Sleep 0..2 ms now and then (a worker descheduled between operations, on purpose). */
  stalls: boolean;
}

const job = workerData as Job;
const heap = Heap.attach(job.heap, job.lcore);
const ring = Ring.attach(heap, job.ring);
const burst = new Uint32Array(64);
let rng = job.lcore * 7919 + 1;
const rand = (n: number) => {
  rng = (rng * 1103515245 + 12345) & 0x7fffffff;
  return 1 + (rng % n);
};
const nap = new Int32Array(new SharedArrayBuffer(4));
const maybeStall = () => {
  if (job.stalls && rand(4096) === 1) Atomics.wait(nap, 0, 0, rand(3) - 1);
};

if (job.role === 'producer') {
  let v = job.from;
  while (v < job.to) {
    const n = Math.min(rand(32), job.to - v);
    for (let i = 0; i < n; i++) burst[i] = v + i;
    const bulk = (rng & 1) === 0;
    const put = bulk ? ring.enqueueBulk(burst, n) : ring.enqueueBurst(burst, n);
    if (bulk && put !== 0 && put !== n) throw new Error(`bulk enqueue returned ${put} of ${n}`);
    v += put;
    maybeStall();
  }
} else {
  while (Atomics.load(job.consumed, 0) < job.total) {
    const n = rand(32);
    const bulk = (rng & 2) === 0;
    const got = bulk ? ring.dequeueBulk(burst, n) : ring.dequeueBurst(burst, n);
    if (bulk && got !== 0 && got !== n) throw new Error(`bulk dequeue returned ${got} of ${n}`);
    for (let i = 0; i < got; i++) Atomics.add(job.seen, burst[i]!, 1);
    if (got) Atomics.add(job.consumed, 0, got);
    maybeStall();
  }
}
parentPort!.postMessage('done');
