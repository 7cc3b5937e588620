/**
 * `npm run bench -- mem`: the mempool and pktmbuf hot paths on one lcore,
 * burst 32, through the lcore cache (testpmd's default setup).
 * The last row is the i40e bulk-free study's "base": mbufs freed one by one instead of in bulk.
 */
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark } from '../src/apps/bench/types.js';

export type MemVariant = 'get-put-bulk' | 'alloc-free-bulk' | 'alloc-free-single';

const cases: { name: string; variant: MemVariant; datapath: 'wasm' | 'ts' }[] = [
  { name: 'mempool getBulk+putBulk 32 (cache 256)', variant: 'get-put-bulk', datapath: 'ts' },
  { name: 'pktmbuf allocBulk+freeBulk 32 (reset), wasm', variant: 'alloc-free-bulk', datapath: 'wasm' },
  { name: 'pktmbuf allocBulk+freeBulk 32 (reset), ts', variant: 'alloc-free-bulk', datapath: 'ts' },
  { name: 'pktmbuf allocBulk 32 + free one by one, wasm', variant: 'alloc-free-single', datapath: 'wasm' },
]; // getBulk/putBulk have no kernel of their own: allocBulk/freeBulk are the per-burst kernels

export const benchmark: Benchmark = {
  name: 'mem',
  title: 'mempool / pktmbuf, 1 lcore, burst 32',
  cases: () =>
    cases.map((c) => ({
      name: c.name,
      params: { variant: c.variant, datapath: c.datapath, burst: 32, cache: 256 },
      threads: () => [{ counted: true, start: (ctl, thread) => startWorker('mem.worker', import.meta.url, { workerData: { ctl, thread, variant: c.variant, datapath: c.datapath } }) }],
    })),
};
