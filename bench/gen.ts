/**
 * `npm run bench -- gen`: the traffic generator's per-burst work, genFill
 * then genCsum over a burst of 32 mbufs already taken from the pool (the
 * pool and the port are not in it), on one worker thread: packets filled a
 * second, by packet size, with no field variable and with one (the IPv4
 * source stepped, both checksums fixed up), wasm kernels and TypeScript twins.
 */
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import { Heap } from '../src/eal/heap.js';
import { Mempool } from '../src/mem/mempool.js';
import { buildStream, writeStream, type StreamSpec } from '../src/gen/stream.js';

interface GenCase {
  name: string;
  size: number;
  vars: number;
  datapath: 'wasm' | 'ts';
}

const BURST = 32;
const rows: GenCase[] = [
  { name: '64 B, no variable, wasm', size: 64, vars: 0, datapath: 'wasm' },
  { name: '64 B, 1 variable, wasm', size: 64, vars: 1, datapath: 'wasm' },
  { name: '512 B, 1 variable, wasm', size: 512, vars: 1, datapath: 'wasm' },
  { name: '1518 B, 1 variable, wasm', size: 1518, vars: 1, datapath: 'wasm' },
  { name: '64 B, 1 variable, ts', size: 64, vars: 1, datapath: 'ts' },
];

function threads(c: GenCase): ThreadSpec[] {
  const heap = Heap.create({ size: 8 << 20, datapath: c.datapath });
  const pool = Mempool.create(heap, { name: 'bench', n: 255, cacheSize: 0 });
  const spec: StreamSpec = { size: c.size, vary: c.vars ? [{ field: 'ipv4.src', mode: 'inc', count: 1 << 16 }] : [] };
  const s = writeStream(heap, buildStream(spec, 0, Uint8Array.of(2, 0, 0, 0, 0, 1)));
  const burst = heap.burst(BURST);
  if (pool.allocBulk(burst, BURST) !== BURST) throw new Error('bench gen: pool too small');
  return [
    {
      counted: true,
      start: (ctl, thread) => startWorker('gen.worker', import.meta.url, { workerData: { ctl, thread, datapath: c.datapath, heap: heap.descriptor(), s, burst: burst.byteOffset, n: BURST } }),
    },
  ];
}

export const benchmark: Benchmark = {
  name: 'gen',
  title: 'gen: genFill + genCsum over a burst of 32, one thread (packets filled)',
  cases: (): BenchCase[] => rows.map((c) => ({ name: c.name, params: { size: c.size, vars: c.vars, datapath: c.datapath }, threads: () => threads(c) })),
};
