/**
 * `npm run bench -- ceiling`: what the bare machinery of dpkit's forwarding
 * loop costs per burst, on one pinned worker thread (CPU 1, where testpmd's
 * first forwarding lcore runs), burst 32, with no engine:
 *
 * - `poll loop`: the worker's poll loop calling an empty step (what a burst of nothing costs);
 * - `ring enqueue+dequeue`: one rte_ring-style burst in and out of one ring on the same thread;
 * - `null rx+tx`: rx from one net_null port, tx to another (its free included): testpmd's io
 *   without testpmd, its engine or its stream statistics.
 *
 * Each row is packets (32 per burst) per second: no engine on these ports can
 * forward faster, so `npm run bench -- testpmd --ceiling` prints each dpkit
 * cell as a fraction of the `null rx+tx` row (times its lcores).
 */
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import { CEILING_ROW } from '../src/apps/bench/report.js';
import { allowedCpus } from '../src/eal/affinity.js';
import { Heap } from '../src/eal/heap.js';
import { startWorker } from '../src/eal/spawn.js';
import { drivers } from '../src/drivers/index.js';
import { Ethdev } from '../src/ethdev/ethdev.js';
import { Mempool } from '../src/mem/mempool.js';
import { Ring } from '../src/ring/ring.js';

const BURST = 32;


type Kind = 'poll' | 'ring' | 'null';

function threads(kind: Kind, size: number): ThreadSpec[] {
  const heap = Heap.create({ size: 64 << 20 });
  const job: Record<string, unknown> = { kind, burst: BURST, heap: heap.descriptor(), lcore: 1, cpus: allowedCpus()?.includes(1) ? [1] : undefined };
  if (kind === 'ring') job.ring = Ring.create(heap, { name: 'ceiling', count: 1024, sp: true, sc: true }).descriptor();
  if (kind === 'null') {
    const pool = Mempool.create(heap, { name: 'ceiling_pool', n: 8192, cacheSize: 256 });
    const ethdev = new Ethdev(heap, drivers);
    const ports = [0, 1].map((i) => {
      const p = ethdev.create(`net_null${i},size=${size}`);
      ethdev.configure(p, 1, 1);
      ethdev.rxQueueSetup(p, 0, 0, pool);
      ethdev.txQueueSetup(p, 0, 0);
      ethdev.start(p);
      return p;
    });
    job.pool = pool.offset;
    job.rxq = ethdev.rxQueue(ports[0]!, 0).descriptor();
    job.txq = ethdev.txQueue(ports[1]!, 0).descriptor();
  }
  return [{ counted: true, start: (ctl, thread) => startWorker('ceiling.worker', import.meta.url, { workerData: { ...job, ctl, thread } }) }];
}

export const benchmark: Benchmark = {
  name: 'ceiling',
  title: 'ceiling: the bare loop, a ring, and null rx+tx with no engine, one pinned worker, burst 32 (Mpps)',
  cases: (opts): BenchCase[] => [
    { name: 'poll loop', params: { kind: 'poll', burst: BURST }, threads: () => threads('poll', 64) },
    { name: 'ring enqueue+dequeue', params: { kind: 'ring', burst: BURST }, threads: () => threads('ring', 64) },
    ...(opts.quick ? [64] : [64, 1518]).map((size) => ({ name: size === 64 ? CEILING_ROW : `${CEILING_ROW} ${size} B`, params: { kind: 'null', burst: BURST, size }, threads: () => threads('null', size) })),
  ],
};
