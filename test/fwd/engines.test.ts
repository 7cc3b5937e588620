import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engines } from '../../src/fwd/index.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { OlFlags, OlFlagsHi } from '../../src/mem/mbuf-layout.js';
import { eth, payload, rd16, sumsOk } from '../net/packets.js';
import { PEER, rig } from './harness.js';

// The engines as testpmd selects them by name (src/fwd/index.ts).
const engine = (mode: string) => engines.get(mode)!;

const A = [0xaa, 1, 2, 3, 4, 5];
const B = [0xbb, 6, 7, 8, 9, 10];
/** An IPv4-typed frame of `len` bytes from `src` to `dst`. */
const frame = (dst: number[], src: number[], len = 64) => eth(0x0800, payload(len - 14, 1), dst, src);

describe('forwarding engines', () => {
  it('io forwards packets untouched and counts rx = tx', () => {
    const r = rig();
    const pkts = [frame(A, B), frame(B, A, 100)];
    r.inject(...pkts);
    r.run(engine('io'));
    assert.deepEqual(r.collect().map((p) => p.bytes), pkts);
    assert.deepEqual(r.counters(), [2, 2, 0]);
    r.done();
  });

  it('macswap swaps source and destination and sets the tx fields as do_macswap', () => {
    const r = rig();
    r.ctx.config.txOffloads = TxOffload.VLAN_INSERT;
    r.ctx.config.vlanTci = 42;
    for (const h of r.inject(frame(A, B), frame(B, A, 1500))) r.mb.setOlFlags(h, OlFlags.RX_RSS_HASH);
    r.run(engine('macswap'));
    const out = r.collect();
    assert.equal(out.length, 2);
    assert.deepEqual(out[0]!.bytes, frame(B, A));
    assert.deepEqual(out[1]!.bytes, frame(A, B, 1500));
    for (const p of out) {
      assert.equal(p.ol, 0, 'rx flags cleared');
      assert.equal(p.olHi, OlFlagsHi.TX_VLAN);
      assert.equal(p.vlan, 42);
      assert.deepEqual([p.l2, p.l3], [14, 20]);
    }
    r.done();
  });

  it('mac writes the peer as destination and the tx port as source', () => {
    const r = rig();
    r.inject(frame(A, B));
    r.run(engine('mac'));
    const [p] = r.collect();
    const bytes = p!.bytes;
    assert.deepEqual([...bytes.subarray(0, 6)], PEER);
    assert.deepEqual(bytes.subarray(6, 12), r.ethdev.macAddr(1));
    assert.deepEqual(bytes.subarray(12), frame(A, B).subarray(12), 'payload untouched');
    r.done();
  });

  it('rxonly receives and frees everything', () => {
    const r = rig();
    r.inject(frame(A, B), frame(A, B), frame(A, B));
    r.run(engine('rxonly'));
    assert.equal(r.collect().length, 0);
    assert.deepEqual(r.counters(), [3, 0, 0]);
    r.done();
  });

  it('txonly sends IPv4/UDP packets from the tx port to its peer with a valid header checksum', () => {
    const r = rig();
    r.ctx.config.txPkts = [128];
    r.ctx.config.burst = 16;
    r.run(engine('txonly'));
    const out = r.collect();
    assert.equal(out.length, 16);
    const p = out[0]!.bytes;
    assert.equal(p.length, 128);
    assert.deepEqual([...p.subarray(0, 6)], PEER);
    assert.deepEqual(p.subarray(6, 12), r.ethdev.macAddr(1));
    assert.equal(rd16(p, 12), 0x0800);
    assert.equal(rd16(p, 16), 128 - 14, 'IPv4 total length');
    assert.equal(p[23], 17, 'UDP');
    assert.equal([...p.subarray(26, 34)].join('.'), '198.18.0.1.198.18.0.2');
    assert.equal(rd16(p, 38), 128 - 34, 'UDP length');
    assert.ok(sumsOk(p.subarray(14, 34)), 'IPv4 header checksum verifies');
    assert.deepEqual(r.counters(), [0, 16, 0]);
    r.done();
  });

  it('txonly builds multi-segment packets from --txpkts, with headers across short segments', () => {
    const r = rig();
    r.ctx.config.txPkts = [30, 40, 50];
    r.ctx.config.burst = 4;
    r.ctx.config.txOnlyMultiFlow = true;
    r.run(engine('txonly'));
    const out = r.collect();
    assert.equal(out.length, 4);
    const srcs = new Set<string>();
    for (const { bytes: p, nbSegs, pktLen } of out) {
      assert.equal(nbSegs, 3);
      assert.equal(pktLen, 120);
      assert.equal(rd16(p, 16), 106);
      assert.ok(sumsOk(p.subarray(14, 34)), 'checksum valid after the multi-flow source rewrite');
      srcs.add([...p.subarray(26, 30)].join('.'));
    }
    assert.equal(srcs.size, 4, 'multi-flow varies the source address per packet');
    r.done();
  });

  it('frees and counts as dropped what the tx queue refuses', () => {
    const r = rig({ poolSize: 2048 });
    r.ctx.config.burst = 512;
    const txonly = r.run(engine('txonly'));
    txonly.fwd(r.fs);
    txonly.fwd(r.fs); // 1536 offered to a ring that holds 1023
    const [, tx, dropped] = r.counters();
    assert.equal(tx, 1023);
    assert.equal(dropped, 1536 - 1023);
    r.done();
  });
});
