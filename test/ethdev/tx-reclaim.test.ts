import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgError, MbufError } from '../../src/errors.js';
import { TX_FREE_MODES, TxReclaim, parseTxFreeMode } from '../../src/ethdev/tx-reclaim.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, setup } from '../helpers.js';

describe('tx reclaim', () => {
  for (const mode of TX_FREE_MODES) {
    for (const fastFree of [true, false]) {
      it(`${mode}${fastFree ? ' fast free' : ''}: returns every segment of a batch and clears the slots`, () => {
        const { heap, mp, mb } = setup({ n: 1024, cacheSize: 256 });
        const sw = heap.burst(1024);
        const r = new TxReclaim(heap, mode, fastFree);
        // Batches of the i40e bulk-free study's thresholds, and an odd tail, from a ring that wraps.
        for (const batch of [32, 256, 512, 100, 1]) {
          assert.equal(mp.allocBulk(sw, batch, 7), batch);
          assert.equal(mp.inUse(), batch);
          const handles = sw.slice(7, 7 + batch);
          r.segments(sw, 7, batch);
          assert.ok(handles.every((h) => mb.refcnt(h) === 0), 'free mbufs are at refcnt 0, so a double free is caught');
          assert.equal(mp.inUse(), 0, `${batch} back`);
          assert.ok(sw.subarray(7, 7 + batch).every((h) => h === 0));
        }
        // Handed out again, every mbuf is whole: the pool's invariants held.
        assert.equal(mp.allocBulk(sw, 1024), 1024);
        r.segments(sw, 0, 1024);
        assertFull(mp);
      });
    }
    it(`${mode}: without fast free, two pools and shared segments go back only when their last reference does`, () => {
      const { heap, mp, mb } = setup({ n: 128 });
      const mp2 = Mempool.create(heap, { name: 'other', n: 128 });
      const sw = heap.burst(64);
      const r = new TxReclaim(heap, mode, false);
      for (let i = 0; i < 64; i++) sw[i] = (i % 3 === 0 ? mp2 : mp).alloc();
      const shared = sw[5]!;
      mb.refcntUpdate(shared, 1); // the application still holds it (a clone's direct mbuf)
      r.segments(sw, 0, 64);
      assert.equal(mp.inUse() + mp2.inUse(), 1);
      assert.equal(mb.refcnt(shared), 1);
      mb.free(shared);
      assertFull(mp, mp2);
    });
    it(`${mode}: packets with chains and clones`, () => {
      const { heap, mp, mb } = setup({ n: 256 });
      const clones = Mempool.create(heap, { name: 'clones', n: 64 });
      const sw = heap.burst(64);
      const r = new TxReclaim(heap, mode, false);
      for (let i = 0; i < 40; i++) {
        sw[i] = mp.alloc();
        for (let k = 0; k < i % 3; k++) mb.chain(sw[i]!, mp.alloc());
      }
      const orig = mp.alloc();
      sw[40] = mb.clone(orig, clones);
      r.packets(sw, 0, 41);
      assert.equal(mp.inUse(), 1);
      mb.free(orig);
      assertFull(mp, clones);
    });
  }

  it('a double free through the reclaim path is reported, not absorbed', () => {
    const { heap, mp } = setup({ n: 64 });
    const sw = heap.burst(4);
    const r = new TxReclaim(heap, 'bulk64', false);
    assert.equal(mp.allocBulk(sw, 2), 2);
    const h = sw[0]!;
    r.segments(sw, 0, 2);
    sw[0] = h;
    assert.throws(() => r.segments(sw, 0, 1), MbufError);
    assertFull(mp);
  });

  it('names a bad mode', () => {
    assert.equal(parseTxFreeMode('net_x0', undefined), 'bulk64');
    assert.equal(parseTxFreeMode('net_x0', 'single'), 'single');
    assert.throws(() => parseTxFreeMode('net_x0', 'bulk'), (e: Error) => e instanceof ArgError && /net_x0: tx_free_mode=bulk: expected one of single, bulk64, bulkall/.test(e.message));
  });
});
