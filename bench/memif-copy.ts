/**
 * `npm run bench -- memif-copy`: net_memif's copy path in one thread, with no
 * second process and no second CPU: a burst of 32 packets copied into a C2S
 * ring (the client's tx) and out of it into fresh mbufs (the server's rx),
 * counted per packet received. The pair benchmark (`--preset memif`) swings
 * by a factor of five with where the hypervisor puts the two vCPUs; this one
 * shows what a change to the kernels does, alone. 9000 B packets take five
 * buffers and five mbufs each (bsize 2048).
 *
 * The "2 threads" cases split the same ring between two lcores on two CPUs,
 * the client's tx on CPU 0 and the server's rx on CPU 1, in one shared heap:
 * what crosses between the CPUs (descriptors, indices, buffers) counts there,
 * as in a pair of processes, without the processes' start-up and sockets.
 */
import { memifLoopback } from '../src/drivers/memif/loopback.js';
import { startWorker } from '../src/eal/spawn.js';
import { Heap } from '../src/eal/heap.js';
import { Mempool } from '../src/mem/mempool.js';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import type { Benchmark } from '../src/apps/bench/types.js';

const cases: { size: number; datapath: 'wasm' | 'ts' }[] = [
  { size: 64, datapath: 'wasm' },
  { size: 1518, datapath: 'wasm' },
  { size: 9000, datapath: 'wasm' },
  { size: 64, datapath: 'ts' },
  { size: 1518, datapath: 'ts' },
];

/** A C2S loopback ring in a fresh shared heap: the client's tx on CPU 0, the server's rx (counted) on CPU 1. */
function pairThreads(size: number): ThreadSpec[] {
  const heap = Heap.create({ size: 64 << 20 });
  const mp = Mempool.create(heap, { name: 'bench_pool', n: 8192, cacheSize: 256 });
  const lb = memifLoopback(heap, mp, { log2: 10, bsize: 2048 });
  const side = (s: 'tx' | 'rx', q: number, lcore: number, cpu: number): ThreadSpec => ({
    counted: s === 'rx',
    start: (ctl, thread) => startWorker('memif-copy-pair.worker', import.meta.url, { workerData: { ctl, thread, lcore, cpu, heap: heap.descriptor(), pool: mp.offset, q, side: s, size } }),
  });
  // Copy mode leaves no mbuf in the ring: once both sides are done, every mbuf is back.
  return [side('tx', lb.q.cliTx, 1, 0), { ...side('rx', lb.q.srvRx, 2, 1), after: () => mp.checkLeaks() }];
}

export const benchmark: Benchmark = {
  name: 'memif-copy',
  title: 'net_memif copy path, 1 thread: tx of 32 into a ring and rx of them into mbufs (rsize 10, bsize 2048)',
  // The two-thread cases' CPUs pass descriptors and buffers between them: bimodal here, as the pairs.
  probe: true,
  cases: () => [
    ...cases.map((c) => ({
      name: `tx+rx ${c.size} B, ${c.datapath}`,
      params: { size: c.size, datapath: c.datapath, burst: 32, log2: 10, bsize: 2048 },
      threads: () => [{ counted: true, start: (ctl: Int32Array, thread: number) => startWorker('memif-copy.worker', import.meta.url, { workerData: { ctl, thread, size: c.size, datapath: c.datapath } }) }],
    })),
    ...[64, 1518].map((size) => ({
      name: `2 threads ${size} B, wasm`,
      params: { size, datapath: 'wasm', burst: 32, log2: 10, bsize: 2048, threads: 2 },
      threads: () => pairThreads(size),
    })),
  ],
};
