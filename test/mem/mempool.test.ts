import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgError, LeakError, MbufError, NoMemError } from '../../src/errors.js';
import { Heap } from '../../src/eal/heap.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, setup } from '../helpers.js';

describe('Mempool', () => {
  it('starts full, with every mbuf initialised and owned by the pool', () => {
    const { mp, mb } = setup({ n: 100, dataRoomSize: 2176 });
    assert.equal(mp.avail(), 100);
    assert.equal(mp.inUse(), 0);
    assert.ok(mp.full());
    const h = mp.get();
    assert.ok(mp.owns(h));
    assert.equal(mb.bufLen(h), 2176);
    assert.equal(mb.poolId(h), mp.id);
    assert.equal(mb.refcnt(h), 0, 'raw get does not take a reference: alloc does');
    mp.put(h);
    assertFull(mp);
  });

  it('gives every mbuf its own buffer, inside the heap', () => {
    const { heap, mp, mb } = setup({ n: 64 });
    const all = mp.heap.burst(64);
    assert.equal(mp.getBulk(all, 64), 64);
    const addrs = new Set([...all].map((h) => mb.bufAddr(h)));
    assert.equal(addrs.size, 64);
    for (const h of all) assert.ok(mb.bufAddr(h) + mb.bufLen(h) <= heap.size);
    mp.putBulk(all, 64);
    assertFull(mp);
  });

  it('getBulk is all or nothing: an exhausted pool fails and stays as it was', () => {
    for (const cacheSize of [0, 16]) {
      const { mp } = setup({ n: 40, cacheSize });
      const a = mp.heap.burst(40);
      assert.equal(mp.getBulk(a, 32), 32);
      const before = mp.avail();
      assert.equal(mp.getBulk(a, 9, 32), 0, `cache ${cacheSize}: 8 left, bulk of 9 fails`);
      assert.equal(mp.avail(), before, 'failed bulk leaves the pool unchanged');
      assert.equal(mp.getBulk(a, 8, 32), 8);
      assert.equal(new Set(a).size, 40, 'all 40 distinct');
      assert.equal(mp.get(), 0, 'empty pool: get returns NULL (0)');
      mp.putBulk(a, 40);
      assertFull(mp);
    }
  });

  it('hands back the most recently freed (hot) mbuf first through the lcore cache', () => {
    const { mp } = setup({ n: 256, cacheSize: 32 });
    const a = mp.heap.burst(8);
    mp.getBulk(a, 8);
    mp.putBulk(a, 8);
    const b = mp.heap.burst(8);
    mp.getBulk(b, 8);
    assert.deepEqual([...b], [...a].reverse(), 'the cache is a stack');
    mp.putBulk(b, 8);
    assertFull(mp);
  });

  it('counts mbufs held in lcore caches as available, and flushes them to the ring', () => {
    const { mp } = setup({ n: 256, cacheSize: 32 });
    const a = mp.heap.burst(16);
    mp.getBulk(a, 16); // refills the cache with 32 + 16 - 16 left in it
    assert.equal(mp.inUse(), 16);
    mp.putBulk(a, 16);
    assert.equal(mp.avail(), 256);
    mp.flushCache();
    assert.equal(mp.avail(), 256);
    assertFull(mp);
  });

  it('puts and gets bursts larger than the cache straight through the ring', () => {
    const { mp } = setup({ n: 1024, cacheSize: 32 });
    const a = mp.heap.burst(600);
    assert.equal(mp.getBulk(a, 600), 600);
    assert.equal(new Set(a).size, 600);
    mp.putBulk(a, 600); // > flush threshold (48): bypasses the cache
    assertFull(mp);
  });

  it('keeps every handle exactly once across many cache flushes and refills', () => {
    const { mp } = setup({ n: 512, cacheSize: 64 });
    const held: number[] = [];
    const burst = mp.heap.burst(100);
    let rng = 12345;
    for (let i = 0; i < 5000; i++) {
      rng = (rng * 1103515245 + 12345) & 0x7fffffff;
      const n = 1 + (rng % 100);
      if (rng & 0x100 && held.length >= n) {
        for (let k = 0; k < n; k++) burst[k] = held.pop()!;
        mp.putBulk(burst, n);
      } else if (mp.getBulk(burst, n) === n) {
        for (let k = 0; k < n; k++) held.push(burst[k]!);
      }
      assert.equal(mp.inUse(), held.length);
    }
    assert.equal(new Set(held).size, held.length, 'no handle handed out twice');
    while (held.length) {
      const n = Math.min(100, held.length);
      for (let k = 0; k < n; k++) burst[k] = held.pop()!;
      mp.putBulk(burst, n);
    }
    assertFull(mp);
  });

  it('rejects bad sizes with an error naming the pool and the value', () => {
    const heap = Heap.create({ size: 8 << 20 });
    assert.throws(() => Mempool.create(heap, { name: 'p', n: 0 }), /mempool p: n=0/);
    assert.throws(() => Mempool.create(heap, { name: 'p', n: 1000, cacheSize: 513 }), (e: unknown) => e instanceof ArgError && /cache size 513/.test(e.message));
    assert.throws(() => Mempool.create(heap, { name: 'p', n: 100, cacheSize: 80 }), /1.5 × cache must not exceed n/);
    assert.throws(() => Mempool.create(heap, { name: 'p', n: 10, dataRoomSize: 70000 }), /data room size 70000/);
  });

  it('fails with NoMemError naming the pool when the heap is too small', () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.throws(() => Mempool.create(heap, { name: 'big', n: 4096 }), (e: unknown) => e instanceof NoMemError && /mempool big/.test(e.message));
  });

  it('reports a leak with the number of missing mbufs', () => {
    const { mp } = setup({ name: 'leaky', n: 32 });
    const a = mp.heap.burst(3);
    mp.getBulk(a, 3);
    assert.throws(() => mp.checkLeaks(), (e: unknown) => e instanceof LeakError && e.missing === 3 && /mempool leaky: 3 of 32 mbufs not returned/.test(e.message));
    mp.putBulk(a, 3);
    assertFull(mp);
  });

  it('throws when more mbufs come back than the pool holds', () => {
    const { mp } = setup({ n: 8 });
    const h = mp.get();
    mp.put(h);
    assert.throws(() => mp.put(h), MbufError);
  });

  it('is the same pool, with its own cache, when attached as another lcore', () => {
    const { heap, mp } = setup({ n: 128, cacheSize: 16 });
    const other = Heap.attach(heap.descriptor(), 5);
    const mp5 = Mempool.attach(other, mp.descriptor());
    assert.equal(mp5.id, mp.id);
    assert.equal(mp5.name, mp.name);
    const a = mp.heap.burst(10);
    mp5.getBulk(a, 10);
    assert.equal(mp.inUse(), 10, 'lcore 0 sees what lcore 5 took');
    mp5.putBulk(a, 10);
    assert.equal(mp.avail(), 128, "lcore 5's cache counts as available");
    mp5.flushCache();
    assertFull(mp);
  });

  describe('debug mode', () => {
    it('names the handle of a double free and leaves the pool unchanged', () => {
      const { mp } = setup({ name: 'dbg', n: 16, cacheSize: 4, debug: true });
      const a = mp.heap.burst(2);
      mp.getBulk(a, 2);
      mp.put(a[0]!);
      const before = mp.avail();
      const hex = '0x' + a[0]!.toString(16).padStart(7, '0');
      assert.throws(() => mp.putBulk(a, 2), (e: unknown) => e instanceof MbufError && e.handle === a[0] && e.message === `mempool dbg: double free of mbuf ${hex}`);
      assert.equal(mp.avail(), before);
      mp.put(a[1]!);
      assertFull(mp);
    });

    it('follows mbufs through cache pops and pushes without false alarms', () => {
      const { mp, mb } = setup({ name: 'dbg', n: 64, cacheSize: 16, debug: true });
      const burst = mp.heap.burst(8);
      for (let i = 0; i < 50; i++) {
        assert.equal(mp.allocBulk(burst, 8), 8);
        mb.freeBulk(burst, 8);
      }
      assert.equal(mp.allocBulk(burst, 1), 1);
      mb.free(burst[0]!);
      assert.throws(() => mp.put(burst[0]!), /double free/, 'a raw put after free is caught by the state byte');
      assertFull(mp);
    });

    it('rejects a handle of another pool', () => {
      const { heap, mp } = setup({ name: 'dbg', n: 16, debug: true });
      const other = Mempool.create(heap, { name: 'other', n: 16 });
      const h = other.get();
      assert.throws(() => mp.put(h), /mempool dbg: put of foreign handle/);
      other.put(h);
      assertFull(mp, other);
    });

    it('lists the leaked handles', () => {
      const { mp } = setup({ name: 'dbg', n: 16, debug: true });
      const h = mp.get();
      assert.throws(() => mp.checkLeaks(), new RegExp(`1 of 16 mbufs not returned \\(0x0*${h.toString(16)}\\)`));
      mp.put(h);
      assertFull(mp);
    });
  });
});
