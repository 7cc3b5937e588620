/**
 * `npm run bench -- lpm`: IPv4 LPM lookups on one worker thread, in the spirit
 * of `dpdk-test`'s lpm_perf_autotest: a table of 1000 random prefixes
 * (depths 8..32, so tbl8 groups are hit), lookups of random addresses through
 * lookupBulk (bursts of 32 and 64) and lookupX4, wasm kernels and TypeScript
 * twins. Counted in lookups (reported as M lookups/s in the Mpps column).
 */
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import { Heap } from '../src/eal/heap.js';
import { Lpm, lpmFootprint } from '../src/lpm/lpm.js';

interface LpmCase {
  name: string;
  op: 'bulk' | 'x4';
  burst: number;
  datapath: 'wasm' | 'ts';
}

const rows: LpmCase[] = [
  { name: 'lookupBulk 32, wasm', op: 'bulk', burst: 32, datapath: 'wasm' },
  { name: 'lookupBulk 64, wasm', op: 'bulk', burst: 64, datapath: 'wasm' },
  { name: 'lookupX4, wasm', op: 'x4', burst: 4, datapath: 'wasm' },
  { name: 'lookupBulk 32, ts', op: 'bulk', burst: 32, datapath: 'ts' },
];

const CONFIG = { maxRules: 2048, numberTbl8s: 1024 };

function threads(c: LpmCase): ThreadSpec[] {
  const heap = Heap.create({ size: lpmFootprint(CONFIG) + (1 << 20), datapath: c.datapath });
  const lpm = Lpm.create(heap, 'bench', CONFIG);
  let x = 0x2545f491;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  for (let i = 0; i < 1000; i++) lpm.add(next(), 8 + (next() % 25), next() & 0xff);
  return [
    {
      counted: true,
      start: (ctl, thread) => startWorker('lpm.worker', import.meta.url, { workerData: { ctl, thread, op: c.op, burst: c.burst, datapath: c.datapath, heap: heap.descriptor(), lpm: lpm.offset } }),
    },
  ];
}

export const benchmark: Benchmark = {
  name: 'lpm',
  title: 'IPv4 LPM lookups (1000 random prefixes, random addresses), one thread',
  cases: (): BenchCase[] => rows.map((c) => ({ name: c.name, params: { op: c.op, burst: c.burst, datapath: c.datapath }, threads: () => threads(c) })),
};
