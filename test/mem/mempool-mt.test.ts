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
