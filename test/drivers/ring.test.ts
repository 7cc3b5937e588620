import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { ringPortDriver } from '../../src/drivers/ring/ring.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Ring } from '../../src/ring/ring.js';
import { IPPROTO_UDP } from '../../src/net/headers.js';
import { assertFull, portUp } from '../helpers.js';
import { eth, ipv4, udpSeg } from '../net/packets.js';

function setup() {
  const heap = Heap.create({ size: 16 << 20 });
  const mp = Mempool.create(heap, { name: 'pool', n: 4096, cacheSize: 32 });
  return { heap, mp, ethdev: new Ethdev(heap, drivers), mb: new Mbufs(heap) };
}

const start = portUp;

describe('net_ring', () => {
  it('loops each queue back: what a queue sends, the same queue receives, in order', () => {
    const { heap, mp, ethdev, mb } = setup();
    const p = start(ethdev, mp, ethdev.create('net_ring0'), 2);
    const b = heap.burst(32);
    assert.equal(mp.allocBulk(b, 10), 10);
    for (let i = 0; i < 10; i++) mb.write(b[i]!, Uint8Array.of(i));
    const sent = [...b.subarray(0, 10)];
    assert.equal(ethdev.txBurst(p, 1, b, 10), 10);
    assert.equal(ethdev.rxBurst(p, 0, b, 32), 0, 'queue 0 has its own ring');
    assert.equal(ethdev.rxBurst(p, 1, b, 32), 10);
    assert.deepEqual([...b.subarray(0, 10)], sent);
    const s = ethdev.stats(p);
    assert.deepEqual([s.opackets, s.ipackets, s.obytes, s.qIpackets[1]], [10, 10, 10, 10]);
    mb.freeBulk(b, 10);
    ethdev.close(p);
    assertFull(mp);
  });

  it('accepts only what fits: tx on a full ring returns the count taken', () => {
    const { heap, mp, ethdev, mb } = setup();
    const p = start(ethdev, mp, ethdev.create('net_ring0'));
    const b = heap.burst(512);
    let total = 0;
    for (let k = 0; k < 3; k++) {
      assert.equal(mp.allocBulk(b, 500), 500);
      const sent = ethdev.txBurst(p, 0, b, 500);
      total += sent;
      mb.freeBulk(b, 500 - sent, sent);
    }
    assert.equal(total, 1023, 'a 1024-slot ring holds 1023');
    assert.equal(ethdev.stats(p).oerrors, 1500 - 1023, "refusals count as tx errors, as DPDK's ring PMD");
    ethdev.close(p); // drains the ring back to the pool
    assertFull(mp);
  });

  it('wires two ports to each other through rings (rte_eth_from_rings)', () => {
    const { heap, mp, ethdev, mb } = setup();
    const ab = Ring.create(heap, { name: 'ab', count: 256, sp: true, sc: true });
    const ba = Ring.create(heap, { name: 'ba', count: 256, sp: true, sc: true });
    const a = start(ethdev, mp, ethdev.createWith('net_ring', 'net_ring_a', (ctx) => ringPortDriver(ctx, [ba], [ab])));
    const b = start(ethdev, mp, ethdev.createWith('net_ring', 'net_ring_b', (ctx) => ringPortDriver(ctx, [ab], [ba])));
    const burst = heap.burst(8);
    mp.allocBulk(burst, 8);
    assert.equal(ethdev.txBurst(a, 0, burst, 8), 8);
    assert.equal(ethdev.rxBurst(a, 0, burst, 8), 0, 'A does not hear itself');
    assert.equal(ethdev.rxBurst(b, 0, burst, 8), 8, 'B receives what A sent');
    assert.equal(ethdev.txBurst(b, 0, burst, 8), 8);
    assert.equal(ethdev.rxBurst(a, 0, burst, 8), 8, 'and A what B sent');
    mb.freeBulk(burst, 8);
    ethdev.close(a);
    ethdev.close(b);
    assertFull(mp);
  });

  it('shares named rings with nodeaction CREATE / ATTACH, and rejects bad ones', () => {
    const { heap, mp, ethdev, mb } = setup();
    const a = start(ethdev, mp, ethdev.create('net_ring0,nodeaction=r0:0:CREATE'));
    const b = start(ethdev, mp, ethdev.create('net_ring1,nodeaction=r0:0:ATTACH'));
    const burst = heap.burst(4);
    mp.allocBulk(burst, 4);
    ethdev.txBurst(a, 0, burst, 4);
    assert.equal(ethdev.rxBurst(b, 0, burst, 4), 4);
    mb.freeBulk(burst, 4);
    assert.throws(() => ethdev.create('net_ring2,nodeaction=r9:0:ATTACH'), /no rings named 'r9'/);
    assert.throws(() => ethdev.create('net_ring3,nodeaction=r0:0:CREATE'), /rings 'r0' already exist/);
    assert.throws(() => ethdev.create('net_ring4,nodeaction=r1:0:DESTROY'), /expected NAME:NODE:CREATE or NAME:NODE:ATTACH/);
    ethdev.close(b);
    ethdev.close(a);
    assertFull(mp);
  });

  it('rss=1 spreads what it sends over its rx queues by Toeplitz hash, and stamps the hash', async () => {
    const { Toeplitz, packetRssHash } = await import('../../src/net/rss.js');
    const { newHdrInfo } = await import('../../src/net/headers.js');
    const { OlFlags } = await import('../../src/mem/mbuf-layout.js');
    const { heap, mp, ethdev, mb } = setup();
    const p = start(ethdev, mp, ethdev.create('net_ring0,rss=1'), 4);
    const b = heap.burst(256);
    const flows = 200;
    assert.equal(mp.allocBulk(b, flows), flows);
    for (let i = 0; i < flows; i++) {
      // Ethernet / IPv4 / UDP from 10.0.x.y:1000+i to 10.1.0.1:9, 60 bytes
      mb.write(b[i]!, eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1000 + i, 9, new Uint8Array(18)), [10, 0, i >> 8, i & 0xff], [10, 1, 0, 1])));
    }
    assert.equal(ethdev.txBurst(p, 0, b, flows), flows, 'rss mode takes every packet');
    const t = new Toeplitz();
    const info = newHdrInfo();
    let total = 0;
    for (let q = 0; q < 4; q++) {
      const got = ethdev.rxBurst(p, q, b, 256);
      assert.ok(got > 20, `queue ${q} received ${got} of ${flows}: the flows spread`);
      for (let i = 0; i < got; i++) {
        const h = b[i]!;
        const expect = packetRssHash(t, mb.u8, mb.mtod(h), mb.dataLen(h), info);
        assert.equal(mb.hash(h), expect, 'the hash lands in the mbuf');
        assert.ok(mb.olFlags(h) & OlFlags.RX_RSS_HASH);
        assert.equal((expect % 128) % 4, q, 'queue = RETA[hash % 128]');
      }
      total += got;
      mb.freeBulk(b, got);
    }
    assert.equal(total, flows);
    assert.throws(() => ethdev.create('net_ring1,rss=1,nodeaction=x:0:CREATE'), /rss=1 and nodeaction cannot be combined/);
    ethdev.close(p);
    assertFull(mp);
  });
});
