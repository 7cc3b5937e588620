import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultFwdConfig, FS_FWD_DROPPED, FS_RX_PACKETS, FS_TX_PACKETS, type FwdContext, type FwdStream } from '../../../src/fwd/engine.js';
import { engines } from '../../../src/fwd/index.js';
import { drivers } from '../../../src/drivers/index.js';
import { TxOffload } from '../../../src/ethdev/driver.js';
import { Ethdev } from '../../../src/ethdev/ethdev.js';
import { Heap } from '../../../src/eal/heap.js';
import { Mbufs } from '../../../src/mem/mbuf.js';
import { OlFlags, OlFlagsHi } from '../../../src/mem/mbuf-layout.js';
import { Mempool } from '../../../src/mem/mempool.js';
import { assertFull, burstOf, portUp } from '../../helpers.js';

const PEER = Uint8Array.of(2, 0, 0, 0, 0, 1);
const A = Uint8Array.of(0xaa, 1, 2, 3, 4, 5);
const B = Uint8Array.of(0xbb, 6, 7, 8, 9, 10);

/** Two looped-back net_ring ports; the stream receives on port 0 and sends on port 1. */
function bench(mode: string, tweak: (c: ReturnType<typeof defaultFwdConfig>) => void = () => {}) {
  const heap = Heap.create({ size: 32 << 20 });
  const pool = Mempool.create(heap, { name: 'pool', n: 2048, cacheSize: 64 });
  const ethdev = new Ethdev(heap, drivers);
  for (const name of ['net_ring0', 'net_ring1']) portUp(ethdev, pool, ethdev.create(name));
  const mb = new Mbufs(heap);
  const config = defaultFwdConfig();
  tweak(config);
  const ctx: FwdContext = { heap, mb, pool, burst: heap.burst(512), config };
  const fs: FwdStream = { rxPort: 0, rxQueue: 0, txPort: 1, txQueue: 0, rxq: ethdev.rxQueue(0, 0), txq: ethdev.txQueue(1, 0), stats: heap.reserve(64) >>> 3, txMac: ethdev.macAddr(1), peerMac: PEER };
  const engine = engines.get(mode)!(ctx);
  const inject = (packets: Uint8Array[]) => {
    const b = heap.burst(packets.length);
    assert.equal(pool.allocBulk(b, packets.length), packets.length);
    packets.forEach((p, i) => mb.write(b[i]!, p));
    for (let i = 0; i < packets.length; i++) mb.setOlFlags(b[i]!, OlFlags.RX_RSS_HASH);
    assert.equal(ethdev.txBurst(0, 0, b, packets.length), packets.length);
  };
  const collect = () => {
    const out = heap.burst(512);
    const n = ethdev.rxBurst(1, 0, out, 512);
    return [...out.subarray(0, n)];
  };
  const counters = () => [heap.f64[fs.stats + FS_RX_PACKETS], heap.f64[fs.stats + FS_TX_PACKETS], heap.f64[fs.stats + FS_FWD_DROPPED]];
  const done = () => {
    ethdev.close(0);
    ethdev.close(1);
    assertFull(pool);
  };
  return { heap, pool, ethdev, mb, ctx, fs, engine, inject, collect, counters, done };
}

const frame = (dst: Uint8Array, src: Uint8Array, len = 64) => {
  const f = new Uint8Array(len);
  f.set(dst, 0);
  f.set(src, 6);
  f[12] = 0x08;
  for (let i = 14; i < len; i++) f[i] = i;
  return f;
};

describe('forwarding engines', () => {
  it('io forwards packets untouched and counts rx = tx', () => {
    const t = bench('io');
    const pkts = [frame(A, B), frame(B, A, 100)];
    t.inject(pkts);
    t.engine.fwd(t.fs);
    const out = t.collect();
    assert.deepEqual(out.map((h) => t.mb.read(h)), pkts);
    assert.deepEqual(t.counters(), [2, 2, 0]);
    t.mb.freeBulk(burstOf(t.heap, out), out.length);
    t.done();
  });

  it('macswap swaps source and destination and sets the tx fields as do_macswap', () => {
    const t = bench('macswap', (c) => {
      c.txOffloads = TxOffload.VLAN_INSERT;
      c.vlanTci = 42;
    });
    t.inject([frame(A, B), frame(B, A, 1500)]);
    t.engine.fwd(t.fs);
    const out = t.collect();
    assert.equal(out.length, 2);
    assert.deepEqual(t.mb.read(out[0]!), frame(B, A));
    assert.deepEqual(t.mb.read(out[1]!), frame(A, B, 1500));
    for (const h of out) {
      assert.equal(t.mb.olFlags(h), 0, 'rx flags cleared');
      assert.equal(t.mb.olFlagsHi(h), OlFlagsHi.TX_VLAN);
      assert.equal(t.mb.vlanTci(h), 42);
      assert.deepEqual([t.mb.l2Len(h), t.mb.l3Len(h)], [14, 20]);
    }
    t.mb.freeBulk(burstOf(t.heap, out), out.length);
    t.done();
  });

  it('mac writes the peer as destination and the tx port as source', () => {
    const t = bench('mac');
    t.inject([frame(A, B)]);
    t.engine.fwd(t.fs);
    const [h] = t.collect();
    const bytes = t.mb.read(h!);
    assert.deepEqual(bytes.subarray(0, 6), PEER);
    assert.deepEqual(bytes.subarray(6, 12), t.ethdev.macAddr(1));
    assert.deepEqual(bytes.subarray(12), frame(A, B).subarray(12), 'payload untouched');
    t.mb.free(h!);
    t.done();
  });

  it('rxonly receives and frees everything', () => {
    const t = bench('rxonly');
    t.inject([frame(A, B), frame(A, B), frame(A, B)]);
    t.engine.fwd(t.fs);
    assert.equal(t.collect().length, 0);
    assert.deepEqual(t.counters(), [3, 0, 0]);
    t.done();
  });

  it('txonly sends IPv4/UDP packets from the tx port to its peer with a valid header checksum', () => {
    const t = bench('txonly', (c) => {
      c.txPkts = [128];
      c.burst = 16;
    });
    t.engine.fwd(t.fs);
    const out = t.collect();
    assert.equal(out.length, 16);
    const p = t.mb.read(out[0]!);
    assert.equal(p.length, 128);
    assert.deepEqual(p.subarray(0, 6), PEER);
    assert.deepEqual(p.subarray(6, 12), t.ethdev.macAddr(1));
    const v = new DataView(p.buffer);
    assert.equal(v.getUint16(12), 0x0800);
    assert.equal(v.getUint16(16), 128 - 14, 'IPv4 total length');
    assert.equal(p[23], 17, 'UDP');
    assert.equal([...p.subarray(26, 34)].join('.'), '198.18.0.1.198.18.0.2');
    assert.equal(v.getUint16(38), 128 - 34, 'UDP length');
    let sum = 0;
    for (let i = 14; i < 34; i += 2) sum += v.getUint16(i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    assert.equal(sum, 0xffff, 'IPv4 header checksum verifies');
    assert.deepEqual(t.counters(), [0, 16, 0]);
    t.mb.freeBulk(burstOf(t.heap, out), out.length);
    t.done();
  });

  it('txonly builds multi-segment packets from --txpkts, with headers across short segments', () => {
    const t = bench('txonly', (c) => {
      c.txPkts = [30, 40, 50];
      c.burst = 4;
      c.txOnlyMultiFlow = true;
    });
    t.engine.fwd(t.fs);
    const out = t.collect();
    assert.equal(out.length, 4);
    const srcs = new Set<string>();
    for (const h of out) {
      assert.equal(t.mb.nbSegs(h), 3);
      assert.equal(t.mb.pktLen(h), 120);
      const p = t.mb.read(h);
      const v = new DataView(p.buffer);
      assert.equal(v.getUint16(16), 106);
      let sum = 0;
      for (let i = 14; i < 34; i += 2) sum += v.getUint16(i);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      assert.equal(sum, 0xffff, 'checksum valid after the multi-flow source rewrite');
      srcs.add([...p.subarray(26, 30)].join('.'));
    }
    assert.equal(srcs.size, 4, 'multi-flow varies the source address per packet');
    t.mb.freeBulk(burstOf(t.heap, out), out.length);
    t.done();
  });

  it('frees and counts as dropped what the tx queue refuses', () => {
    const t = bench('txonly', (c) => (c.burst = 512));
    t.engine.fwd(t.fs);
    t.engine.fwd(t.fs);
    t.engine.fwd(t.fs); // 1536 offered to a ring that holds 1023
    const [, tx, dropped] = t.counters();
    assert.equal(tx, 1023);
    assert.equal(dropped, 1536 - 1023);
    t.done();
  });
});
