import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startWorker } from '../../src/eal/spawn.js';
import { Heap } from '../../src/eal/heap.js';
import { Ring } from '../../src/ring/ring.js';
import { joinWorkers } from '../helpers.js';

// DPKIT_STRESS_HANDLES=100000000 is the long run docs/reliability.md quotes; the suite moves 10^6.
const LONG = Number(process.env['DPKIT_STRESS_HANDLES'] ?? 1_000_000);
const TIMEOUT_MS = Math.max(60_000, LONG / 10);

for (const stalls of [false, true]) it(`MPMC ring: 2 producers and 2 consumers move ${stalls ? LONG / 4 : LONG} distinct handles, each exactly once${stalls ? ', workers stalling at random' : ''}`, async () => {
  const N = stalls ? LONG / 4 : LONG;
  const heap = Heap.create({ size: 1 << 20 });
  const ring = Ring.create(heap, { name: 'mpmc', count: 1024 });
  const consumed = new Int32Array(new SharedArrayBuffer(4));
  const seen = new Uint8Array(new SharedArrayBuffer(N + 1));
  const common = { heap: heap.descriptor(), ring: ring.descriptor(), consumed, seen, total: N, stalls };
  const half = 1 + N / 2;
  const jobs = [
    { role: 'producer', lcore: 1, from: 1, to: half },
    { role: 'producer', lcore: 2, from: half, to: N + 1 },
    { role: 'consumer', lcore: 3, from: 0, to: 0 },
    { role: 'consumer', lcore: 4, from: 0, to: 0 },
  ];
  await joinWorkers(jobs.map((j) => startWorker('ring-stress.worker', import.meta.url, { workerData: { ...common, ...j } })), TIMEOUT_MS);
  assert.equal(Atomics.load(consumed, 0), N);
  assert.equal(seen[0], 0, 'value 0 was never sent');
  let missing = 0;
  let dup = 0;
  for (let v = 1; v <= N; v++) {
    if (seen[v] === 0) missing++;
    else if (seen[v]! > 1) dup++;
  }
  assert.equal(missing, 0, 'handles lost');
  assert.equal(dup, 0, 'handles delivered twice');
  assert.ok(ring.empty());
});
