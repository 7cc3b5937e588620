import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { ArgError } from '../../src/errors.js';
import { parseDevargs } from '../../src/ethdev/devargs.js';
import { checkTxThresholds, Ethdev, PortStateError } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';

function setup() {
  const heap = Heap.create({ size: 32 << 20 });
  const mp = Mempool.create(heap, { name: 'pool', n: 2048, cacheSize: 64 });
  const ethdev = new Ethdev(heap, drivers);
  return { heap, mp, ethdev, mb: new Mbufs(heap) };
}

function up(ethdev: Ethdev, mp: Mempool, devargs: string, queues = 1): number {
  return portUp(ethdev, mp, ethdev.create(devargs), queues);
}

describe('devargs', () => {
  it('splits name, driver and keys as DPDK does', () => {
    const d = parseDevargs('net_null0,size=128,copy=1', ['net_null', 'net_ring']);
    assert.equal(d.name, 'net_null0');
    assert.equal(d.driver, 'net_null');
    assert.deepEqual([...d.args], [['size', '128'], ['copy', '1']]);
  });

  it('names the problem: unknown driver, unknown key, bad pair, bad value', () => {
    const { ethdev } = setup();
    assert.throws(() => ethdev.create('net_bogus0'), /--vdev net_bogus0: unknown driver \(known: ([a-z_]+, )*net_null, net_pcap, net_ring(, [a-z_]+)*\)/);
    assert.throws(() => ethdev.create('net_null0,sise=64'), (e: unknown) => e instanceof ArgError && /net_null0: unknown devarg 'sise' for net_null \(known: size, copy, no-rx\)/.test(e.message));
    assert.throws(() => ethdev.create('net_null0,size'), /'size' is not key=value/);
    assert.throws(() => ethdev.create('net_null0,size=big'), /net_null0: size=big: expected an integer in \[1, 65535\]/);
    assert.throws(() => ethdev.create('net_null0,copy=2'), /copy=2/);
    ethdev.create('net_null0');
    assert.throws(() => ethdev.create('net_null0'), /net_null0: device already exists/);
  });
});

describe('ethdev', () => {
  it('checks queue counts, descriptor counts and queue numbers, naming the argument', () => {
    const { ethdev, mp } = setup();
    const p = ethdev.create('net_ring0');
    assert.throws(() => ethdev.rxQueueSetup(p, 0, 0, mp), PortStateError, 'not configured yet');
    assert.throws(() => ethdev.configure(p, 17, 1), /port 0: nb_rx_queues=17: must be in \[1, 16\]/);
    assert.throws(() => ethdev.configure(p, 1, 0), /nb_tx_queues=0/);
    ethdev.configure(p, 2, 2);
    assert.throws(() => ethdev.rxQueueSetup(p, 2, 0, mp), /rx queue 2 out of range \(configured 2\)/);
    assert.throws(() => ethdev.txQueueSetup(p, 0, 70000), /port 0 txq 0: nb_tx_desc=70000: net_ring allows 0..65535/);
    ethdev.rxQueueSetup(p, 0, 0, mp);
    assert.throws(() => ethdev.start(p), /rx queue 1 not set up/);
  });

  it("applies DPDK's tx threshold rules when thresholds are given", () => {
    assert.throws(() => checkTxThresholds('q', 512, { txRsThresh: 100, txFreeThresh: 100 }), /tx_rs_thresh=100 must be a divisor of nb_desc=512/);
    assert.throws(() => checkTxThresholds('q', 512, { txRsThresh: 64, txFreeThresh: 32 }), /tx_rs_thresh=64 must be less than or equal to tx_free_thresh=32/);
    assert.throws(() => checkTxThresholds('q', 512, { txRsThresh: 32, txFreeThresh: 510 }), /tx_free_thresh=510 must be less than nb_desc - 3 \(509\)/);
    assert.throws(() => checkTxThresholds('q', 64, { txRsThresh: 64, txFreeThresh: 64 }), /tx_rs_thresh=64 must be less than nb_desc - 2/);
    for (const [rs, free] of [[32, 32], [64, 128], [256, 256]] as const) checkTxThresholds('q', 1024, { txRsThresh: rs, txFreeThresh: free });
    // i40e's last rule: otherwise the DD bit at tx_next_dd could be a write-back from the ring's previous lap.
    assert.throws(() => checkTxThresholds('q', 512, { txRsThresh: 256, txFreeThresh: 384 }), /tx_rs_thresh=256 \+ tx_free_thresh=384 must not exceed nb_desc=512/);
    // An aggressive tx_free_thresh alone lowers the default tx_rs_thresh to fit, as i40e does (64 - 48 = 16).
    checkTxThresholds('q', 64, { txFreeThresh: 48 });
    const { ethdev, mp } = setup();
    const p = ethdev.create('net_null0');
    ethdev.configure(p, 1, 1);
    ethdev.rxQueueSetup(p, 0, 0, mp);
    assert.throws(() => ethdev.txQueueSetup(p, 0, 512, { txRsThresh: 100 }), /port 0 txq 0: tx_rs_thresh=100 must be less than or equal to tx_free_thresh=32/);
  });

  it('counts packets and bytes per queue, resets to a baseline, and names xstats as DPDK', () => {
    const { ethdev, mp, heap } = setup();
    const p = up(ethdev, mp, 'net_null0,size=100');
    const burst = heap.burst(32);
    assert.equal(ethdev.rxBurst(p, 0, burst, 32), 32);
    assert.equal(ethdev.txBurst(p, 0, burst, 32), 32);
    let s = ethdev.stats(p);
    assert.deepEqual([s.ipackets, s.ibytes, s.opackets, s.obytes], [32, 3200, 32, 3200]);
    ethdev.statsReset(p);
    s = ethdev.stats(p);
    assert.deepEqual([s.ipackets, s.opackets], [0, 0]);
    ethdev.rxBurst(p, 0, burst, 8);
    ethdev.txBurst(p, 0, burst, 8);
    const x = ethdev.xstats(p);
    assert.equal(x['rx_good_packets'], 8);
    assert.equal(x['tx_good_bytes'], 800);
    assert.equal(x['rx_q0_packets'], 8);
    ethdev.close(p);
    assertFull(mp);
  });

  it('has a MAC, promiscuous mode and link status', () => {
    const { ethdev, mp } = setup();
    const p = up(ethdev, mp, 'net_null0');
    assert.equal(ethdev.macAddr(p).length, 6);
    assert.equal(ethdev.macAddr(p)[0]! & 0x03, 0x02, 'locally administered unicast');
    assert.ok(ethdev.linkUp(p));
    ethdev.stop(p);
    assert.equal(ethdev.linkUp(p), false, 'a stopped port has no link');
    ethdev.promiscuousDisable(p);
    assert.equal(ethdev.promiscuousGet(p), false);
    ethdev.promiscuousEnable(p);
    assert.equal(ethdev.promiscuousGet(p), true);
    ethdev.close(p);
    assert.throws(() => ethdev.stats(p), /port 0: no such port/);
  });
});
