import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { probeLoopbackBias } from '../../src/gen/bias.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull } from '../helpers.js';

it('probeLoopbackBias measures every packet of its loopback, returns its mbufs and refuses bad options in one line', () => {
  const heap = Heap.create({ size: 16 << 20 });
  const pool = Mempool.create(heap, { name: 'bias', n: 256, cacheSize: 32 });
  const s = probeLoopbackBias(heap, pool, { bursts: 50, burst: 16 });
  assert.equal(s.count, 800);
  assert.ok(s.min >= 0 && s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max && s.overflow === 0);
  assert.throws(() => probeLoopbackBias(heap, pool, { size: 8 }), /probe bias: size=8: must be an integer in \[16, 2048\]/);
  assert.throws(() => probeLoopbackBias(heap, pool, { burst: 0 }), /burst=0/);
  assertFull(pool);
});
