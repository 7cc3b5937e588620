import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { PORT_INVALID } from '../../src/mem/mbuf-layout.js';
import { assertFull, firstHeapDifference, portUp } from '../helpers.js';

for (const datapath of ['wasm', 'ts'] as const) {
  describe(`net_null (${datapath} datapath)`, () => {
    const make = (devargs: string) => {
      const heap = Heap.create({ size: 16 << 20, datapath });
      const mp = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 32 });
      const ethdev = new Ethdev(heap, drivers);
      ethdev.create('net_null9'); // port 0, so the port under test is 1
      const p = portUp(ethdev, mp, ethdev.create(devargs));
      return { heap, mp, ethdev, p, mb: new Mbufs(heap), burst: heap.burst(64) };
    };

    it('receives freshly reset mbufs of `size` bytes stamped with the port', () => {
      const { mp, ethdev, p, mb, burst } = make('net_null0,size=200');
      assert.equal(ethdev.rxBurst(p, 0, burst, 64), 64);
      assert.equal(mp.inUse(), 64);
      for (let i = 0; i < 64; i++) {
        const h = burst[i]!;
        assert.equal(mb.pktLen(h), 200);
        assert.equal(mb.dataLen(h), 200);
        assert.equal(mb.port(h), p);
        assert.equal(mb.refcnt(h), 1);
        assert.equal(mb.nbSegs(h), 1);
      }
      assert.equal(ethdev.txBurst(p, 0, burst, 64), 64, 'tx takes everything');
      assertFull(mp);
      assert.notEqual(p, PORT_INVALID);
    });

    it('copy=1 fills received packets from its dummy packet and reads sent ones into it', () => {
      const { mp, ethdev, p, mb, burst } = make('net_null0,size=64,copy=1');
      assert.equal(ethdev.rxBurst(p, 0, burst, 1), 1);
      mb.u8.fill(0xab, mb.mtod(burst[0]!), mb.mtod(burst[0]!) + 64);
      ethdev.txBurst(p, 0, burst, 1); // the dummy packet is now all 0xab
      assert.equal(ethdev.rxBurst(p, 0, burst, 2), 2);
      assert.deepEqual([...mb.read(burst[1]!)], new Array(64).fill(0xab));
      ethdev.txBurst(p, 0, burst, 2);
      assertFull(mp);
    });

    it('no-rx=1 receives nothing', () => {
      const { mp, ethdev, p, burst } = make('net_null0,no-rx=1');
      assert.equal(ethdev.rxBurst(p, 0, burst, 32), 0);
      assertFull(mp);
    });

    it('counts rx_nombuf when the pool is empty, and receives again once mbufs return', () => {
      const { mp, ethdev, p, burst, heap } = make('net_null0');
      const held = heap.burst(512);
      assert.equal(mp.allocBulk(held, 500), 500);
      assert.equal(ethdev.rxBurst(p, 0, burst, 32), 0);
      assert.equal(ethdev.stats(p).rxNombuf, 32);
      new Mbufs(heap).freeBulk(held, 500);
      assert.equal(ethdev.rxBurst(p, 0, burst, 32), 32);
      ethdev.txBurst(p, 0, burst, 32);
      assertFull(mp);
    });

    it('refuses a size larger than the pool data room', () => {
      assert.throws(() => make('net_null0,size=4000'), /net_null0: size=4000 does not fit the pool's 2048-byte data room/);
    });
  });
}

describe('net_null kernels and their twins', () => {
  for (const args of ['size=77', 'size=200,copy=1']) {
    it(`leave the heap byte for byte as the twins do (${args})`, () => {
      const run = (datapath: 'wasm' | 'ts') => {
        const heap = Heap.create({ size: 8 << 20, datapath });
        const mp = Mempool.create(heap, { name: 'pool', n: 256, cacheSize: 32 });
        const clones = Mempool.create(heap, { name: 'clones', n: 64 });
        const ethdev = new Ethdev(heap, drivers);
        const p = portUp(ethdev, mp, ethdev.create(`net_null0,${args}`));
        const mb = new Mbufs(heap);
        const burst = heap.burst(64);
        let rng = 5;
        const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
        for (let round = 0; round < 300; round++) {
          const n = 1 + rand(64);
          const got = ethdev.rxBurst(p, 0, burst, n); // now and then more than the pool holds: rx_nombuf
          for (let i = 0; i < got; i++) mb.u8[mb.mtod(burst[i]!) + rand(64)] = round; // bytes for copy=1's tx
          // Now and then a clone among them: the tx kernel stops there, the general free takes the rest.
          let m = got;
          const c = got > 0 && got < 64 && rand(4) === 0 ? mb.clone(burst[0]!, clones) : 0;
          if (c !== 0) {
            const j = rand(m);
            burst[m++] = burst[j]!;
            burst[j] = c;
          }
          if (m > 0) ethdev.txBurst(p, 0, burst, m);
        }
        ethdev.close(p);
        assertFull(mp, clones);
        return heap;
      };
      const [w, t] = [run('wasm'), run('ts')];
      assert.ok(w.kernels && !t.kernels);
      const first = firstHeapDifference(w, t);
      assert.equal(first, -1, `heaps differ first at byte ${first}`);
    });
  }
});
