import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { ProbeRx, ProbeTx } from '../../src/gen/probe.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { IPPROTO_UDP } from '../../src/net/headers.js';
import { assertFull, portUp } from '../helpers.js';
import { eth, ipv4, payload, udpSeg } from '../net/packets.js';

const FRAME = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(30, 1))));

/** Sends `bursts` bursts of 32 stamped packets through `devargs`, receiving everything back; returns the counts. */
function through(devargs: string, bursts: number) {
  const heap = Heap.create({ size: 32 << 20 });
  const pool = Mempool.create(heap, { name: 'faulty', n: 2048, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const ethdev = new Ethdev(heap, drivers);
  const port = portUp(ethdev, pool, ethdev.create(devargs));
  const tx = ProbeTx.create(heap, 0);
  const rx = ProbeRx.create(heap, { streams: 1, histogram: { bits: 7 } });
  const burst = heap.burst(32);
  const got = heap.burst(64);
  /** Receives until every packet the port took (less drops, plus duplicates) came back. */
  const drain = (until: () => boolean) => {
    while (!until()) {
      const n = ethdev.rxBurst(port, 0, got, 64);
      rx.check(got, n);
      mb.freeBulk(got, n);
    }
  };
  for (let b = 0; b < bursts; b++) {
    assert.equal(pool.allocBulk(burst, 32), 32);
    for (let i = 0; i < 32; i++) mb.write(burst[i]!, FRAME);
    tx.stamp(burst, 32);
    assert.equal(ethdev.txBurst(port, 0, burst, 32), 32);
    drain(() => ethdev.stats(port).opackets - ethdev.xstats(port).faulty_dropped! + ethdev.xstats(port).faulty_duplicated! === ethdev.stats(port).ipackets);
  }
  const xs = ethdev.xstats(port);
  const s = rx.stream(0, tx.sent);
  ethdev.close(port);
  assertFull(pool);
  return { s, xs, rx };
}

describe('net_faulty', () => {
  it('drops, duplicates and swaps as its seed says, and the probes count exactly the faults it made', () => {
    const { s, xs } = through('net_faulty0,drop=0.03,dup=0.02,swap=0.04,seed=7', 100);
    assert.ok(xs.faulty_dropped! > 0 && xs.faulty_duplicated! > 0 && xs.faulty_swapped! > 0, JSON.stringify(xs));
    assert.equal(s.lost, xs.faulty_dropped);
    assert.equal(s.duplicates, xs.faulty_duplicated);
    assert.equal(s.reordered, xs.faulty_swapped);
    assert.equal(s.received, 3200 - xs.faulty_dropped!);
    assert.equal(s.latency.count, s.received + s.duplicates);
    // The same seed makes the same faults.
    assert.deepEqual(through('net_faulty0,drop=0.03,dup=0.02,swap=0.04,seed=7', 100).xs, xs);
  });

  it('holds every packet delay_ns, and the latency measured is at least that', () => {
    const { s } = through('net_faulty0,delay_ns=200000', 4);
    assert.equal(s.received, 128);
    assert.deepEqual([s.lost, s.duplicates, s.reordered], [0, 0, 0]);
    assert.ok(s.latency.min >= 200_000, `min ${s.latency.min} ns`);
  });

  it('refuses bad devargs in one line naming the key', () => {
    const heap = Heap.create({ size: 4 << 20 });
    const ethdev = new Ethdev(heap, drivers);
    assert.throws(() => ethdev.create('net_faulty0,drop=1.5'), /net_faulty0: drop=1.5: must be a probability in \[0, 1\]/);
    assert.throws(() => ethdev.create('net_faulty0,dup=x'), /dup=x: must be a probability/);
    assert.throws(() => ethdev.create('net_faulty0,drop=0.6,swap=0.6'), /must add up to at most 1/);
    assert.throws(() => ethdev.create('net_faulty0,delay_ns=-3'), /delay_ns=-3: must be an integer/);
    assert.throws(() => ethdev.create('net_faulty0,jitter=3'), /jitter/);
  });
});
