/**
 * `npm run bench -- machine`: the machine's own scaling from one busy core
 * to two, with a bare typed-array loop on each lcore's CPU (the placement
 * testpmd runs use). No forwarding scaling figure can beat this ceiling;
 * read `bench testpmd`'s 2c / 1c against it.
 */
import type { Benchmark } from '../src/apps/bench/types.js';
import { allowedCpus } from '../src/eal/affinity.js';
import { startWorker } from '../src/eal/spawn.js';
import { summarize } from '../src/apps/bench/stats.js';

export const benchmark: Benchmark = {
  name: 'machine',
  title: 'bare loop on 1 and 2 pinned threads (M iterations/s; 64 per count)',
  cases: () =>
    [1, 2].map((threads) => ({
      name: `bare loop ${threads}c`,
      params: { threads },
      threads: () =>
        [[1], [0]].slice(0, threads).map((cpus) => ({
          counted: true,
          start: (ctl: Int32Array, thread: number) =>
            startWorker('spin.worker', import.meta.url, { workerData: { ctl, thread, cpus: allowedCpus()?.includes(cpus[0]!) ? cpus : undefined } }),
        })),
    })),
  summary: (results) => {
    const med = (t: number) => summarize(results.find((r) => r.params['threads'] === t)?.samples ?? []).median;
    return `machine scaling 2c / 1c: ${(med(2) / med(1)).toFixed(2)}`;
  },
};
