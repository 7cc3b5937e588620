/**
 * `npm run bench -- ring`: a ring between two worker threads (one producer,
 * one consumer, each on its own core), counted at the consumer. SPSC at bursts
 * 1, 8, 32; MP/MC (compare-and-swap heads) at 32; and 2 producers + 2
 * consumers at 32, which oversubscribes this 2-core machine on purpose.
 */
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import { Heap } from '../src/eal/heap.js';
import { Ring } from '../src/ring/ring.js';

interface RingCase {
  name: string;
  burst: number;
  mode: 'spsc' | 'mpmc';
  producers: number;
  consumers: number;
}

const rows: RingCase[] = [
  { name: 'SPSC burst 1', burst: 1, mode: 'spsc', producers: 1, consumers: 1 },
  { name: 'SPSC burst 8', burst: 8, mode: 'spsc', producers: 1, consumers: 1 },
  { name: 'SPSC burst 32', burst: 32, mode: 'spsc', producers: 1, consumers: 1 },
  { name: 'MPMC burst 32, 1P/1C', burst: 32, mode: 'mpmc', producers: 1, consumers: 1 },
  { name: 'MPMC burst 32, 2P/2C (4 threads, 2 cores)', burst: 32, mode: 'mpmc', producers: 2, consumers: 2 },
];

function threads(c: RingCase): ThreadSpec[] {
  const heap = Heap.create({ size: 1 << 20 });
  const ring = Ring.create(heap, { name: 'bench', count: 1024, sp: c.mode === 'spsc', sc: c.mode === 'spsc' });
  const spec = (role: 'producer' | 'consumer', lcore: number): ThreadSpec => ({
    counted: role === 'consumer',
    start: (ctl, thread) =>
      startWorker('ring.worker', import.meta.url, { workerData: { ctl, thread, role, lcore, burst: c.burst, heap: heap.descriptor(), ring: ring.descriptor() } }),
  });
  const out: ThreadSpec[] = [];
  for (let i = 0; i < c.producers; i++) out.push(spec('producer', 1 + i));
  for (let i = 0; i < c.consumers; i++) out.push(spec('consumer', 1 + c.producers + i));
  return out;
}

export const benchmark: Benchmark = {
  name: 'ring',
  title: 'ring between worker threads, counted at the consumer',
  cases: (): BenchCase[] => rows.map((c) => ({ name: c.name, params: { burst: c.burst, mode: c.mode, producers: c.producers, consumers: c.consumers }, threads: () => threads(c) })),
};
