import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startWorker } from '../../src/eal/spawn.js';
import { Heap } from '../../src/eal/heap.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Ring } from '../../src/ring/ring.js';
import { assertFull, joinWorkers } from '../helpers.js';

for (const datapaths of [['wasm', 'ts'], ['wasm', 'wasm']] as const) it(`a pool shared by 2 worker lcores (${datapaths.join(' + ')}) with caches is full again at the end`, async () => {
  const heap = Heap.create({ size: 64 << 20 });
  const mp = Mempool.create(heap, { name: 'shared', n: 4096, cacheSize: 256 });
  const ab = Ring.create(heap, { name: 'a_to_b', count: 512, sp: true, sc: true });
  const ba = Ring.create(heap, { name: 'b_to_a', count: 512, sp: true, sc: true });
  const per = 200_000;
  const common = { heap: heap.descriptor(), pool: mp.descriptor() };
  const rings = { 1: { tx: ab.descriptor(), rx: ba.descriptor() }, 2: { tx: ba.descriptor(), rx: ab.descriptor() } };
  const results = await joinWorkers<{ sent: number; received: number; bad: number }>(
    [1, 2].map((lcore) => startWorker('mempool-stress.worker', import.meta.url, { workerData: { ...common, ...rings[lcore as 1 | 2], lcore, datapath: datapaths[lcore - 1], send: per, receive: per } })),
    120_000,
  );
  for (const r of results) {
    assert.equal(r.sent, per);
    assert.equal(r.received, per);
    assert.equal(r.bad, 0, 'every packet came from the other lcore intact');
  }
  assert.equal(ab.count() + ba.count(), 0);
  assertFull(mp);
});

// DPKIT_STRESS_HANDLES=100000000 is the long run docs/reliability.md quotes; the suite takes 10^6.
const HANDLES = Number(process.env['DPKIT_STRESS_HANDLES'] ?? 1_000_000);
for (const stalls of [false, true]) it(`a pool 4 lcores take ${HANDLES} handles from, on this machine's CPUs: never one handle to two owners, full at the end${stalls ? ' (workers stalling at random)' : ''}`, async () => {
  const heap = Heap.create({ size: 16 << 20 });
  // Small enough that the lcores' caches and bursts empty the common ring often.
  const mp = Mempool.create(heap, { name: 'contended', n: 1024, cacheSize: 64 });
  const taken = new Int32Array(new SharedArrayBuffer(4));
  // Handles are small integers (mbuf numbers), below the heap's size.
  const held = new Uint8Array(new SharedArrayBuffer(16 << 20));
  const common = { heap: heap.descriptor(), pool: mp.descriptor(), taken, held, total: HANDLES, stalls };
  const results = await joinWorkers<{ doubles: number }>(
    [1, 2, 3, 4].map((lcore) => startWorker('mempool-contention.worker', import.meta.url, { workerData: { ...common, lcore } })),
    Math.max(120_000, HANDLES / 10),
  );
  assert.deepEqual(results.map((r) => r.doubles), [0, 0, 0, 0], 'an mbuf handed to two lcores at once');
  assert.ok(Atomics.load(taken, 0) >= HANDLES);
  assert.ok(held.every((b) => b === 0));
  assertFull(mp);
});
