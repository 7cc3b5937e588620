// One lcore of the mempool contention test; see mempool-mt.test.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { Heap, type HeapDescriptor } from '../../src/eal/heap.js';
import { Mempool, type MempoolDescriptor } from '../../src/mem/mempool.js';

interface Job {
  heap: HeapDescriptor;
  pool: MempoolDescriptor;
  lcore: number;
  /** Handles every lcore together takes from the pool; [0] counts them. */
  taken: Int32Array;
  total: number;
  /** One byte per handle: 1 while some lcore holds that mbuf. */
  held: Uint8Array;
  stalls: boolean;
}

const job = workerData as Job;
const heap = Heap.attach(job.heap, job.lcore);
const mp = Mempool.attach(heap, job.pool);
const burst = heap.burst(64);
const nap = new Int32Array(new SharedArrayBuffer(4));
let rng = job.lcore * 104729 + 3;
const rand = (n: number) => {
  rng = (rng * 1103515245 + 12345) & 0x7fffffff;
  return 1 + (rng % n);
};
let doubles = 0;
while (Atomics.load(job.taken, 0) < job.total) {
  const n = rand(48);
  // Half bulk gets (all or nothing), half burst allocs, as engines use both.
  const got = (rng & 1) === 0 ? mp.getBulk(burst, n) : mp.allocBulk(burst, n);
  for (let i = 0; i < got; i++) if (Atomics.add(job.held, burst[i]!, 1) !== 0) doubles++;
  // Held a while (a stall now and then: descheduled while owning mbufs), then given back.
  if (job.stalls && rand(2048) === 1) Atomics.wait(nap, 0, 0, rand(3) - 1);
  for (let i = 0; i < got; i++) Atomics.sub(job.held, burst[i]!, 1);
  if (got) {
    mp.putBulk(burst, got);
    Atomics.add(job.taken, 0, got);
  }
}
mp.flushCache();
parentPort!.postMessage({ doubles });
