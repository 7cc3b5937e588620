import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { drivers } from '../src/drivers/index.js';
import type { QueueDescriptor } from '../src/ethdev/driver.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';
import { engineBlock } from '../src/fwd/blocks.js';
import { defaultFwdConfig } from '../src/fwd/engine.js';
import { macswapOps } from '../src/fwd/macswap.twin.js';
import { Ring, type RingDescriptor } from '../src/ring/ring.js';

const job = workerData as { ctl: Int32Array; thread: number; stage: 'rx' | 'tx'; lcore: number; heap: HeapDescriptor; pool: number; ring: RingDescriptor; q: QueueDescriptor; burst: number };
const heap = Heap.attach(job.heap, job.lcore);
const pool = Mempool.attach(heap, { offset: job.pool });
const mb = new Mbufs(heap);
const ring = Ring.attach(heap, job.ring);
const burst = heap.burst(job.burst);
const n = job.burst;
const spec = drivers.get(job.q.driver)!;
// macswap's simd kernel over an engine block with no tx offloads: rx flags cleared, INDIRECT and EXTERNAL kept.
const swap = macswapOps(heap, 'simd');
const engine = engineBlock({ heap, mb, pool, burst, config: defaultFwdConfig() }, 'macswap');
const lc = heap.lcore;

let iter: () => number;
if (job.stage === 'rx') {
  const rxq = spec.openRxQueue(heap, job.q);
  iter = () => {
    const got = rxq.rxBurst(burst, n);
    const sent = ring.enqueueBurst(burst, got);
    if (sent < got) mb.freeBulk(burst, got - sent, sent);
    return sent;
  };
} else {
  const txq = spec.openTxQueue(heap, job.q);
  iter = () => {
    const got = ring.dequeueBurst(burst, n);
    if (got === 0) return 0;
    swap(engine, lc, burst.byteOffset, got);
    const sent = txq.txBurst(burst, got);
    if (sent < got) mb.freeBulk(burst, got - sent, sent);
    return sent;
  };
}

const report = await benchLoop(job.ctl, job.thread, iter);
pool.flushCache();
parentPort!.postMessage(report);
