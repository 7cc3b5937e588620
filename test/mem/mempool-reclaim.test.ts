// Mempool.reclaim: what a dead thread held comes back, what live owners hold stays theirs.
// A "dead lcore" here is a second view of the heap as lcore 3 whose holdings are dropped
// without a put, as a killed worker's are; test/apps/testpmd/faults.test.ts kills real ones.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { Mempool } from '../../src/mem/mempool.js';
import { CACHE_STRIDE, CACHE_W_OBJS, P_CACHE_BASE, P_RING } from '../../src/mem/mempool-layout.js';
import { Ring } from '../../src/ring/ring.js';
import { RING_W_CONS_HEAD, RING_W_PROD_HEAD } from '../../src/ring/ring-layout.js';
import { assertFull, setup } from '../helpers.js';

const DEAD = 3;

/** The pool as lcore DEAD sees it (its own cache), from this thread. */
function deadView(heap: Heap, mp: Mempool): Mempool {
  return Mempool.attach(Heap.attach(heap.descriptor(), DEAD), mp.descriptor());
}

/** Word index of lcore `l`'s cache of `mp` (its length; the handles follow at CACHE_W_OBJS). */
function cacheOf(heap: Heap, mp: Mempool, l: number): number {
  return (heap.u32[(mp.offset >>> 2) + P_CACHE_BASE]! + l * CACHE_STRIDE) >>> 2;
}

describe('Mempool.reclaim', () => {
  for (const debug of [false, true]) {
    it(`returns a dead lcore's bursts and cache, and nothing a live owner holds${debug ? ' (debug pool)' : ''}`, () => {
      const { heap, mp, mb } = setup({ n: 512, cacheSize: 64, debug });
      const dead = deadView(heap, mp);
      const inFlight = dead.heap.burst(32);
      assert.equal(dead.allocBulk(inFlight, 32), 32, 'the dead lcore holds a burst');
      const cached = dead.heap.burst(20);
      assert.equal(dead.getBulk(cached, 20), 20);
      dead.putBulk(cached, 20); // ... and mbufs in its cache
      const held = heap.burst(10);
      assert.equal(mp.allocBulk(held, 10), 10, 'a live owner (a port) holds 10');
      const mine = heap.burst(5);
      assert.equal(mp.getBulk(mine, 5), 5);
      mp.putBulk(mine, 5); // the live lcore's cache is the pool's
      assert.equal(mp.inUse(), 42);

      const deadCached = heap.u32[cacheOf(heap, mp, DEAD)]!;
      assert.ok(deadCached >= 20);
      assert.equal(mp.reclaim([DEAD], held), 32 + deadCached, 'the burst comes back, and the cache goes to the ring');
      assert.equal(mp.inUse(), 10, 'what the live owner holds stays out');
      for (const h of inFlight) assert.equal(mb.refcnt(h), 0, 'reset as a free mbuf');
      assert.equal(mp.reclaim([DEAD], held), 0, 'a second walk finds nothing');
      mp.putBulk(held, 10);
      mp.flushCache();
      assertFull(mp);
      // Every mbuf is in the pool exactly once: all of them can be taken, none twice.
      const all = heap.burst(512);
      assert.equal(mp.getBulk(all, 512), 512);
      assert.equal(new Set(all).size, 512);
      mp.putBulk(all, 512);
      assertFull(mp);
    });
  }

  it('counts once the handles a worker killed during a cache flush left in both its cache and the ring', () => {
    const { heap, mp } = setup({ n: 256, cacheSize: 32 });
    const dead = deadView(heap, mp);
    const b = dead.heap.burst(16);
    assert.equal(dead.getBulk(b, 16), 16);
    dead.putBulk(b, 16);
    // The flush's ring enqueue happened; the store of the cache's new length did not.
    const cache = cacheOf(heap, mp, DEAD);
    const len = heap.u32[cache]!;
    assert.ok(len >= 16);
    const ring = Ring.attach(heap, { offset: heap.u32[(mp.offset >>> 2) + P_RING]!, name: 'test_pool.ring' });
    assert.equal(ring.enqueueBulk(heap.u32.slice(cache + CACHE_W_OBJS, cache + CACHE_W_OBJS + len), len), len);
    assert.equal(mp.avail(), 256 + len, 'the pool counts them twice');
    assert.equal(mp.reclaim([DEAD]), 0);
    assert.equal(mp.avail(), 256, 'and once after the walk');
    assertFull(mp);
  });

  it("settles a ring operation a killed thread left half done, so the next one does not wait forever", () => {
    const heap = Heap.create({ size: 1 << 20 });
    const r = Ring.create(heap, { name: 'mpmc', count: 64 });
    const objs = heap.burst(8);
    objs.set([1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(r.enqueueBulk(objs, 8), 8);
    // A consumer reserved 3 and died; a producer reserved 2 and died.
    const w = r.offset >>> 2;
    Atomics.add(heap.i32, w + RING_W_CONS_HEAD, 3);
    Atomics.add(heap.i32, w + RING_W_PROD_HEAD, 2);
    assert.equal(r.repair(), 5);
    assert.equal(r.count(), 5, 'what the consumer took is gone; what the producer reserved never came');
    assert.equal(r.dequeueBulk(objs, 5), 5, 'a dequeue after the repair does not wait');
    assert.deepEqual([...objs.subarray(0, 5)], [4, 5, 6, 7, 8]);
    assert.equal(r.enqueueBulk(objs, 5), 5, 'nor does an enqueue');
    assert.equal(r.repair(), 0);
  });
});
