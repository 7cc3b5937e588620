/**
 * `npm run bench -- memif-copy`: net_memif's copy path in one thread, with no
 * second process and no second CPU: a burst of 32 packets copied into a C2S
 * ring (the client's tx) and out of it into fresh mbufs (the server's rx),
 * counted per packet received. The pair benchmark (`--preset memif`) swings
 * by a factor of five with where the hypervisor puts the two vCPUs; this one
 * shows what a change to the kernels does, alone. 9000 B packets take five
 * buffers and five mbufs each (bsize 2048).
 */
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark } from '../src/apps/bench/types.js';

const cases: { size: number; datapath: 'wasm' | 'ts' }[] = [
  { size: 64, datapath: 'wasm' },
  { size: 1518, datapath: 'wasm' },
  { size: 9000, datapath: 'wasm' },
  { size: 64, datapath: 'ts' },
  { size: 1518, datapath: 'ts' },
];

export const benchmark: Benchmark = {
  name: 'memif-copy',
  title: 'net_memif copy path, 1 thread: tx of 32 into a ring and rx of them into mbufs (rsize 10, bsize 2048)',
  cases: () =>
    cases.map((c) => ({
      name: `tx+rx ${c.size} B, ${c.datapath}`,
      params: { size: c.size, datapath: c.datapath, burst: 32, log2: 10, bsize: 2048 },
      threads: () => [{ counted: true, start: (ctl, thread) => startWorker('memif-copy.worker', import.meta.url, { workerData: { ctl, thread, size: c.size, datapath: c.datapath } }) }],
    })),
};
