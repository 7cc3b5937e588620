/**
 * The gen forward mode on its own (no testpmd): the split of gen streams
 * over forwarding streams, and an engine made with the default config (its
 * stats blocks its own) sending each stream's count with testpmd's stream
 * counters kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { defaultFwdConfig, FS_FWD_DROPPED, FS_SLOTS, FS_TX_PACKETS, type FwdStream } from '../../src/fwd/engine.js';
import { gen, genShare } from '../../src/fwd/gen.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';

describe('fwd gen', () => {
  it('gen stream k goes to forwarding stream k mod their number; a stream past the count gets none', () => {
    const heap = Heap.create({ size: 8 << 20 });
    const pool = Mempool.create(heap, { name: 'p', n: 255 });
    const g = { ...defaultFwdConfig().gen, streams: [{ name: 'a' }, { name: 'b' }, { name: 'c' }], fwdStreams: 2 };
    const names = (i: number) => genShare(g, i, new Uint8Array(6), pool).map((s) => [s.k, s.p.b.name]);
    assert.deepEqual(names(0), [[0, 'a'], [2, 'c']]);
    assert.deepEqual(names(1), [[1, 'b']]);
    assert.deepEqual(names(2), []);
  });

  it('with the default config the engine sends every stream\'s count on its forwarding stream and counts TX-packets', () => {
    const heap = Heap.create({ size: 16 << 20 });
    const pool = Mempool.create(heap, { name: 'p', n: 1023, cacheSize: 32 });
    const ethdev = new Ethdev(heap, drivers);
    portUp(ethdev, pool, ethdev.create('net_null0'));
    const config = { ...defaultFwdConfig(), burst: 16 };
    // Fast enough that the whole schedule is due after a few passes: the assertion is on counts, not time.
    config.gen = { ...config.gen, streams: [{ rate: '1Gpps' }, { rate: '1Gpps', size: 128 }], count: 1000 };
    const ctx = { heap, mb: new Mbufs(heap), pool, burst: heap.burst(512), config };
    const stats = heap.reserve(FS_SLOTS * 8) >>> 3;
    const fs: FwdStream = { rxPort: 0, rxQueue: 0, txPort: 0, txQueue: 0, rxq: ethdev.rxQueue(0, 0), txq: ethdev.txQueue(0, 0), stats, txMac: new Uint8Array(6), peerMac: new Uint8Array(6), index: 0 };
    const engine = gen(ctx);
    for (let pass = 0; pass < 1_000_000 && heap.f64[stats + FS_TX_PACKETS]! < 2000; pass++) engine.fwd(fs);
    assert.equal(heap.f64[stats + FS_TX_PACKETS], 2000);
    assert.equal(heap.f64[stats + FS_FWD_DROPPED], 0);
    assert.equal(ethdev.stats(0).obytes, 1000 * 64 + 1000 * 128);
    for (let i = 0; i < 10; i++) engine.fwd(fs);
    assert.equal(heap.f64[stats + FS_TX_PACKETS], 2000, 'a stream stops at its count');
    pool.flushCache();
    assertFull(pool);
  });
});
