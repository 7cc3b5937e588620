/** One side of the vhost bench: an lcore running testpmd's txonly or rxonly engine on one queue. */
import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { FS_RX_PACKETS, FS_SLOTS, FS_TX_PACKETS, defaultFwdConfig, type FwdStream } from '../src/fwd/engine.js';
import { engines } from '../src/fwd/index.js';
import { drivers } from '../src/drivers/index.js';
import type { QueueDescriptor } from '../src/ethdev/driver.js';
import { pinThisThread } from '../src/eal/affinity.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';

const job = workerData as {
  ctl: Int32Array;
  thread: number;
  lcore: number;
  cpu: number;
  heap: HeapDescriptor;
  pool: number;
  engine: 'txonly' | 'rxonly';
  rxq: QueueDescriptor;
  txq: QueueDescriptor;
  txPkts: number[];
};
pinThisThread([job.cpu]);
const heap = Heap.attach(job.heap, job.lcore);
const pool = Mempool.attach(heap, { offset: job.pool });
const spec = (d: QueueDescriptor) => drivers.get(d.driver)!;
const config = { ...defaultFwdConfig(), txPkts: job.txPkts };
const engine = engines.get(job.engine)!({ heap, mb: new Mbufs(heap), pool, burst: heap.burst(512), config });
const stats = heap.reserve(FS_SLOTS * 8, 64, 'bench stream') >>> 3;
const fs: FwdStream = {
  rxPort: 0,
  rxQueue: 0,
  txPort: 0,
  txQueue: 0,
  rxq: spec(job.rxq).openRxQueue(heap, job.rxq),
  txq: spec(job.txq).openTxQueue(heap, job.txq),
  stats,
  txMac: Uint8Array.of(2, 0, 0, 0, 0, 1),
  peerMac: Uint8Array.of(2, 0, 0, 0, 0, 2),
};
const slot = stats + (job.engine === 'txonly' ? FS_TX_PACKETS : FS_RX_PACKETS);
const f64 = heap.f64;
// The stream's counters are f64: the difference is returned as an integer,
// or every call would box a double (the garbage of the vhost bench's GCs).
const report = await benchLoop(job.ctl, job.thread, () => {
  const before = f64[slot]!;
  engine.fwd(fs);
  return (f64[slot]! - before) | 0;
});
pool.flushCache();
parentPort!.postMessage(report);
