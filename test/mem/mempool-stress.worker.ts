// One lcore of the shared-pool stress test; see mempool-mt.test.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { Heap, type HeapDescriptor } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool, type MempoolDescriptor } from '../../src/mem/mempool.js';
import { Ring, type RingDescriptor } from '../../src/ring/ring.js';

interface Job {
  heap: HeapDescriptor;
  pool: MempoolDescriptor;
  /** Ring this lcore sends on, and the one it receives from. */
  tx: RingDescriptor;
  rx: RingDescriptor;
  lcore: number;
  /** wasm: bursts in the heap, so pool get/put, refill, flush and free run in the kernels. */
  datapath: 'wasm' | 'ts';
  /** Packets this lcore sends to the other through the ring. */
  send: number;
  /** Packets it expects from the other. */
  receive: number;
}

const job = workerData as Job;
const heap = Heap.attach(job.heap, job.lcore, job.datapath);
const mp = Mempool.attach(heap, job.pool);
const tx = Ring.attach(heap, job.tx);
const rx = Ring.attach(heap, job.rx);
const mb = new Mbufs(heap);
const burst = heap.burst(64);
let sent = 0;
let received = 0;
let bad = 0;
let seq = 0;
let rng = job.lcore;

while (sent < job.send || received < job.receive) {
  rng = (rng * 1103515245 + 12345) & 0x7fffffff;
  const n = 1 + (rng % 48);
  // Local churn: alloc, touch, free, as a forwarding engine would.
  if (mp.allocBulk(burst, n) === n) {
    for (let i = 0; i < n; i++) mb.append(burst[i]!, 64);
    mb.freeBulk(burst, n);
  }
  // Hand packets to the other lcore, each stamped with the sender and a sequence number.
  if (sent < job.send) {
    const k = Math.min(n, job.send - sent);
    if (mp.allocBulk(burst, k) === k) {
      for (let i = 0; i < k; i++) {
        const at = mb.append(burst[i]!, 8);
        heap.view.setUint32(at, job.lcore, true);
        heap.view.setUint32(at + 4, seq++, true);
      }
      const put = tx.enqueueBurst(burst, k);
      mb.freeBulk(burst, k - put, put);
      seq -= k - put;
      sent += put;
    }
  }
  const got = rx.dequeueBurst(burst, 32);
  for (let i = 0; i < got; i++) {
    const at = mb.mtod(burst[i]!);
    if (heap.view.getUint32(at, true) === job.lcore || mb.pktLen(burst[i]!) !== 8) bad++;
  }
  mb.freeBulk(burst, got);
  received += got;
}
mp.flushCache();
parentPort!.postMessage({ sent, received, bad });
