import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { memifLoopback } from '../src/drivers/memif/loopback.js';
import { memifOps } from '../src/drivers/memif/memif.twin.js';
import { Heap } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';

const { ctl, thread, size, datapath } = workerData as { ctl: Int32Array; thread: number; size: number; datapath: 'wasm' | 'ts' };
const BURST = 32;
const heap = Heap.create({ size: 64 << 20, lcoreId: 1, datapath });
const mp = Mempool.create(heap, { name: 'bench_pool', n: 8192, cacheSize: 256 });
const mb = new Mbufs(heap);
const lb = memifLoopback(heap, mp, { log2: 10, bsize: 2048 });
const rxOps = memifOps(heap, mb, mp);
const txOps = memifOps(heap, mb, null);
const lc = heap.lcore;

// The packets sent, made once: tx copies them into the ring and leaves them to the caller.
const sent = heap.burst(BURST);
const bytes = new Uint8Array(size).map((_, i) => (i * 7) & 0xff);
for (let i = 0; i < BURST; i++) sent[i] = mb.fromBytes(mp, bytes);
const got = heap.burst(BURST);

// Every burst sent must come back whole: a kernel that loses packets fails the run, not the rate.
let short = 0;
const report = await benchLoop(ctl, thread, () => {
  const t = txOps.tx(lb.q.cliTx, lc, sent.heapOffset, BURST);
  const n = rxOps.rx(lb.q.srvRx, lc, got.heapOffset, BURST);
  if (t !== BURST || n !== BURST) short++;
  mb.freeBulk(got, n);
  return n;
});
mb.freeBulk(sent, BURST);
if (short > 0) throw new Error(`memif-copy ${size} B: ${short} bursts did not go through whole`);
mp.checkLeaks();
parentPort!.postMessage(report);
