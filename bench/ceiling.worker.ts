// One lcore of the ceiling benchmark: the bare machinery of a forwarding loop, burst by burst,
// with no engine (bench/ceiling.ts says what each case leaves out).
import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { drivers } from '../src/drivers/index.js';
import type { QueueDescriptor } from '../src/ethdev/driver.js';
import { pinThisThread } from '../src/eal/affinity.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';
import { Ring, type RingDescriptor } from '../src/ring/ring.js';

const job = workerData as {
  ctl: Int32Array;
  thread: number;
  lcore: number;
  cpus?: number[];
  kind: 'poll' | 'ring' | 'null';
  burst: number;
  heap: HeapDescriptor;
  ring?: RingDescriptor;
  pool?: number;
  rxq?: QueueDescriptor;
  txq?: QueueDescriptor;
};
pinThisThread(job.cpus);
const heap = Heap.attach(job.heap, job.lcore);
const n = job.burst;
const burst = heap.burst(n);
let iter: () => number;
let done = () => {};
if (job.kind === 'poll') {
  // The loop testpmd's lcore runs around its engine, with the engine's call left empty: what
  // a burst of nothing costs (the phase check every 64 calls is the loop's own stop flag).
  iter = () => n;
} else if (job.kind === 'ring') {
  const ring = Ring.attach(heap, job.ring!);
  for (let i = 0; i < n; i++) burst[i] = 1000 + i;
  iter = () => {
    ring.enqueueBurst(burst, n);
    return ring.dequeueBurst(burst, n);
  };
} else {
  const pool = Mempool.attach(heap, { offset: job.pool! });
  const mb = new Mbufs(heap);
  const rxq = drivers.get(job.rxq!.driver)!.openRxQueue(heap, job.rxq!);
  const txq = drivers.get(job.txq!.driver)!.openTxQueue(heap, job.txq!);
  // io without its engine: rx from one null port, tx to the other, free what tx refused.
  iter = () => {
    const got = rxq.rxBurst(burst, n);
    const sent = txq.txBurst(burst, got);
    if (sent < got) mb.freeBulk(burst, got - sent, sent);
    return sent;
  };
  done = () => pool.flushCache();
}
const report = await benchLoop(job.ctl, job.thread, iter);
done();
parentPort!.postMessage(report);
