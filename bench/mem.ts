/**
 * `npm run bench -- mem`: the mempool and pktmbuf hot paths on one lcore,
 * burst 32, through the lcore cache (testpmd's default setup).
 * The last row is seed 002's "base": mbufs freed one by one instead of in bulk.
 */
import { startWorker } from '../src/lcore/spawn.js';
import type { Benchmark } from '../src/apps/bench/types.js';

export type MemVariant = 'get-put-bulk' | 'alloc-free-bulk' | 'alloc-free-single';

const cases: { name: string; variant: MemVariant }[] = [
  { name: 'mempool getBulk+putBulk 32 (cache 256)', variant: 'get-put-bulk' },
  { name: 'pktmbuf allocBulk+freeBulk 32 (reset)', variant: 'alloc-free-bulk' },
  { name: 'pktmbuf allocBulk 32 + free one by one', variant: 'alloc-free-single' },
];

export const benchmark: Benchmark = {
  name: 'mem',
  title: 'mempool / pktmbuf, 1 lcore, burst 32',
  cases: () =>
    cases.map((c) => ({
      name: c.name,
      params: { variant: c.variant, burst: 32, cache: 256 },
      threads: () => [{ counted: true, start: (ctl, thread) => startWorker('mem.worker', import.meta.url, { workerData: { ctl, thread, variant: c.variant } }) }],
    })),
};
