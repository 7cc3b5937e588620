import { workerData, parentPort } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { Heap } from '../src/eal/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';
import type { MemVariant } from './mem.js';

const { ctl, thread, variant, datapath } = workerData as { ctl: Int32Array; thread: number; variant: MemVariant; datapath: 'wasm' | 'ts' };
const BURST = 32;
const heap = Heap.create({ size: 64 << 20, lcoreId: 1, datapath });
const mp = Mempool.create(heap, { name: 'bench_pool', n: 8192, cacheSize: 256 });
const mb = new Mbufs(heap);
const burst = heap.burst(BURST); // in the heap, so kernels work on it in place

const iters: Record<MemVariant, () => number> = {
  'get-put-bulk': () => {
    mp.getBulk(burst, BURST);
    mp.putBulk(burst, BURST);
    return BURST;
  },
  'alloc-free-bulk': () => {
    mp.allocBulk(burst, BURST);
    mb.freeBulk(burst, BURST);
    return BURST;
  },
  'alloc-free-single': () => {
    mp.allocBulk(burst, BURST);
    for (let i = 0; i < BURST; i++) mb.free(burst[i]!);
    return BURST;
  },
};

const report = await benchLoop(ctl, thread, iters[variant]);
mp.checkLeaks();
parentPort!.postMessage(report);
