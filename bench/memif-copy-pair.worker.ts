/** One side of memif-copy's two-thread cases: the client's tx or the server's rx on a loopback ring in the shared heap. */
import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { memifOps } from '../src/drivers/memif/memif.twin.js';
import { pinThisThread } from '../src/eal/affinity.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';

const job = workerData as { ctl: Int32Array; thread: number; lcore: number; cpu: number; heap: HeapDescriptor; pool: number; q: number; side: 'tx' | 'rx'; size: number };
const BURST = 32;
pinThisThread([job.cpu]);
const heap = Heap.attach(job.heap, job.lcore);
const mp = Mempool.attach(heap, { offset: job.pool });
const mb = new Mbufs(heap);
const lc = heap.lcore;
const burst = heap.burst(BURST);
let report;
if (job.side === 'tx') {
  // The packets sent, made once: tx copies them into the ring and leaves them to the caller.
  const ops = memifOps(heap, mb, null);
  const bytes = new Uint8Array(job.size).map((_, i) => (i * 7) & 0xff);
  for (let i = 0; i < BURST; i++) burst[i] = mb.fromBytes(mp, bytes);
  report = await benchLoop(job.ctl, job.thread, () => ops.tx(job.q, lc, burst.heapOffset, BURST));
  mb.freeBulk(burst, BURST);
} else {
  const ops = memifOps(heap, mb, mp);
  report = await benchLoop(job.ctl, job.thread, () => {
    const n = ops.rx(job.q, lc, burst.heapOffset, BURST);
    mb.freeBulk(burst, n);
    return n;
  });
}
mp.flushCache();
parentPort!.postMessage(report);
