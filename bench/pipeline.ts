/**
 * `npm run bench -- pipeline`: a two-stage pipeline through a ring. Lcore A
 * receives from a null port and enqueues to an SPSC ring; lcore B dequeues,
 * swaps MACs and transmits on another null port. Counted at B. Compare with
 * `bench testpmd`'s macswap on 2 lcores, where each lcore runs the whole path
 * on its own queue (with bare loops, crossing cores per packet cost ~7×).
 */
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import type { Benchmark } from '../src/apps/bench/types.js';
import { drivers } from '../src/drivers/index.js';
import { Ethdev } from '../src/ethdev/ethdev.js';
import { startWorker } from '../src/eal/spawn.js';
import { Heap } from '../src/eal/heap.js';
import { Mempool } from '../src/mem/mempool.js';
import { Ring } from '../src/ring/ring.js';

function threads(size: number, burst: number): ThreadSpec[] {
  const heap = Heap.create({ size: 256 << 20 });
  const pool = Mempool.create(heap, { name: 'pipe_pool', n: 16384, cacheSize: 256 });
  const ethdev = new Ethdev(heap, drivers);
  for (const name of [`net_null0,size=${size}`, `net_null1,size=${size}`]) {
    const p = ethdev.create(name);
    ethdev.configure(p, 1, 1);
    ethdev.rxQueueSetup(p, 0, 0, pool);
    ethdev.txQueueSetup(p, 0, 0);
    ethdev.start(p);
  }
  const ring = Ring.create(heap, { name: 'pipe', count: 1024, sp: true, sc: true });
  const common = { heap: heap.descriptor(), pool: pool.offset, ring: ring.descriptor(), burst };
  return [
    {
      counted: false,
      start: (ctl, thread) => startWorker('pipeline.worker', import.meta.url, { workerData: { ...common, ctl, thread, stage: 'rx', lcore: 1, q: ethdev.rxQueue(0, 0).descriptor() } }),
    },
    {
      counted: true,
      start: (ctl, thread) => startWorker('pipeline.worker', import.meta.url, { workerData: { ...common, ctl, thread, stage: 'tx', lcore: 2, q: ethdev.txQueue(1, 0).descriptor() } }),
    },
  ];
}

export const benchmark: Benchmark = {
  name: 'pipeline',
  title: 'pipeline: lcore A null rx -> ring -> lcore B macswap + null tx, counted at B',
  cases: (opts) =>
    (opts.quick ? [64] : [64, 1518]).map((size) => ({
      name: `${size} B, burst 32`,
      params: { size, burst: 32 },
      threads: () => threads(size, 32),
    })),
};
