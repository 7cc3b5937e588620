import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FS_FWD_DROPPED, FS_TX_PACKETS } from '../../src/fwd/engine.js';
import { flowgen } from '../../src/fwd/flowgen.js';
import { ArgError } from '../../src/errors.js';
import { IPPROTO_UDP } from '../../src/net/headers.js';
import { assertIpv4Valid, eth, ipv4, payload, rd16, rd32, udpSeg } from '../net/packets.js';
import { PEER, rig } from './harness.js';

describe('flowgen', () => {
  it('frees what it receives and generates valid IPv4/UDP packets cycling through the flows', () => {
    const r = rig();
    const cfg = r.ctx.config;
    cfg.burst = 8;
    cfg.flowgenFlows = 5;
    cfg.txPkts = [60, 4];
    r.inject(eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, []))), payload(60, 1), payload(70, 1));
    const engine = flowgen(r.ctx);
    assert.equal(engine.name, 'flowgen');
    for (let i = 0; i < 3; i++) engine.fwd(r.fs);
    const got = r.collect();
    assert.equal(got.length, 24);
    got.forEach((p, i) => {
      const b = p.bytes;
      assert.equal(b.length, 64);
      assert.deepEqual([...b.subarray(0, 6)], PEER);
      assert.deepEqual([...b.subarray(6, 12)], [...r.fs.txMac]);
      assert.equal(rd16(b, 12), 0x0800);
      assert.deepEqual([b[14], rd16(b, 16), b[22], b[23]], [0x45, 50, 64, IPPROTO_UDP]);
      assertIpv4Valid(b);
      assert.equal(rd32(b, 26), cfg.txIpSrc);
      assert.equal(rd32(b, 30), cfg.txIpDst + (i % 5), `packet ${i}: flow ${i % 5}`);
      assert.deepEqual([rd16(b, 34), rd16(b, 36), rd16(b, 38), rd16(b, 40)], [cfg.txUdpSrc, cfg.txUdpDst, 30, 0]);
      assert.deepEqual([p.l2, p.l3, p.olHi], [14, 20, 0]);
    });
    assert.deepEqual(r.counters(), [3, 24, 0]);
    r.done();
  });

  it('backs the flow walk out for packets the tx queue refuses, so no flow is skipped', () => {
    const r = rig({ poolSize: 2048 });
    const cfg = r.ctx.config;
    cfg.burst = 32;
    cfg.flowgenFlows = 7;
    const engine = flowgen(r.ctx);
    for (let i = 0; i < 40; i++) engine.fwd(r.fs); // 1280 packets into a 1024-slot ring
    const dropped = r.counter(FS_FWD_DROPPED);
    assert.ok(dropped > 0, 'the ring filled up');
    assert.equal(r.counter(FS_TX_PACKETS) + dropped, 40 * 32);
    const flows: number[] = [];
    for (let got; (got = r.collect()).length > 0; ) for (const p of got) flows.push(rd32(p.bytes, 30) - cfg.txIpDst);
    engine.fwd(r.fs); // after the drain: the walk resumes right after the last packet delivered
    for (const p of r.collect()) flows.push(rd32(p.bytes, 30) - cfg.txIpDst);
    assert.equal(flows.length, r.counter(FS_TX_PACKETS));
    flows.forEach((f, i) => assert.equal(f, i % 7, `packet ${i}`));
    r.done();
  });

  it('refuses at creation a packet that cannot be built in one mbuf, and bad flow counts', () => {
    const r = rig();
    const cfg = r.ctx.config;
    cfg.txPkts = [2000, 49];
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /2049 .* does not fit one mbuf of pool fwd_pool \(2048 bytes/.test(e.message));
    cfg.txPkts = [40];
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /below the 42 bytes/.test(e.message));
    cfg.txPkts = [2048];
    cfg.flowgenFlows = 0;
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /flowgen-flows=0/.test(e.message));
    cfg.flowgenFlows = 1;
    r.run(flowgen);
    const got = r.collect();
    assert.equal(got.length, 32);
    assert.equal(got[0]!.bytes.length, 2048);
    r.done();
  });
});
