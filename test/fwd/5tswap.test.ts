import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FS_RX_PACKETS, FS_TX_PACKETS } from '../../src/fwd/engine.js';
import { fiveTupleSwap } from '../../src/fwd/5tswap.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { OlFlags, OlFlagsHi } from '../../src/mem/mbuf-layout.js';
import { IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP } from '../../src/net/headers.js';
import { DST4, DST6, MAC_A, MAC_B, SRC4, SRC6, assertIpv4Valid, assertIpv6L4Valid, eth, ipv4, ipv6, payload, rd16, tcpSeg, udpSeg, vlanEth } from '../net/packets.js';
import { rig } from './harness.js';

describe('5tswap', () => {
  it('swaps MACs, IPv4 addresses and UDP ports, keeping checksums valid', () => {
    const r = rig();
    const pkt = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1111, 2222, payload(30, 1))));
    r.inject(pkt);
    const engine = r.run(fiveTupleSwap);
    assert.equal(engine.name, '5tswap');
    const [p, more] = r.collect();
    assert.equal(more, undefined);
    const b = p!.bytes;
    assert.deepEqual([...b.subarray(0, 6)], MAC_A);
    assert.deepEqual([...b.subarray(6, 12)], MAC_B);
    assert.deepEqual([...b.subarray(26, 30)], DST4);
    assert.deepEqual([...b.subarray(30, 34)], SRC4);
    assert.deepEqual([rd16(b, 34), rd16(b, 36)], [2222, 1111]);
    assert.deepEqual([...b.subarray(42)], [...pkt.subarray(42)], 'payload untouched');
    assertIpv4Valid(b);
    assert.deepEqual([p!.l2, p!.l3, p!.l4, p!.ol, p!.olHi], [14, 20, 8, 0, 0]);
    assert.deepEqual(r.counters(), [1, 1, 0]);
    r.done();
  });

  it('swaps IPv4/TCP (with options), IPv6/UDP and a VLAN-tagged packet in one burst', () => {
    const r = rig();
    const tcp = eth(0x0800, ipv4(IPPROTO_TCP, tcpSeg(40000, 80, payload(11, 1), 2)));
    const v6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpSeg(5353, 53, payload(9, 1))));
    const tagged = vlanEth(0x0064, 0x0800, ipv4(IPPROTO_UDP, udpSeg(7, 9, payload(4, 1))));
    r.inject(tcp, v6, tagged);
    r.run(fiveTupleSwap);
    const [t, s, v] = r.collect();

    assert.deepEqual([...t!.bytes.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([...t!.bytes.subarray(26, 34)], [...DST4, ...SRC4]);
    assert.deepEqual([rd16(t!.bytes, 34), rd16(t!.bytes, 36)], [80, 40000]);
    assertIpv4Valid(t!.bytes);
    assert.deepEqual([t!.l2, t!.l3, t!.l4], [14, 20, 28]);

    const b6 = s!.bytes;
    assert.deepEqual([...b6.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([...b6.subarray(22, 38)], DST6);
    assert.deepEqual([...b6.subarray(38, 54)], SRC6);
    assert.deepEqual([rd16(b6, 54), rd16(b6, 56)], [53, 5353]);
    assertIpv6L4Valid(b6);
    assert.deepEqual([s!.l2, s!.l3, s!.l4], [14, 40, 8]);

    const bv = v!.bytes;
    assert.deepEqual([...bv.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([rd16(bv, 12), rd16(bv, 14), rd16(bv, 16)], [0x8100, 0x0064, 0x0800], 'tag kept');
    assert.deepEqual([...bv.subarray(30, 38)], [...DST4, ...SRC4]);
    assert.deepEqual([rd16(bv, 38), rd16(bv, 40)], [9, 7]);
    assertIpv4Valid(bv, 18);
    assert.deepEqual([v!.l2, v!.l3, v!.l4], [18, 20, 8]);
    assert.equal(r.counter(FS_TX_PACKETS), 3);
    r.done();
  });

  it('swaps only what it parses: ARP and ICMP partly, runts and truncated headers not past what fits', () => {
    const r = rig();
    const arp = eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 1, ...MAC_A, ...SRC4, 0, 0, 0, 0, 0, 0, ...DST4]);
    const icmp = eth(0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, 0, 1, 0, 1, ...payload(8, 1)]));
    const runt = payload(10, 1);
    const full = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(20, 1))));
    const cut = full.slice(0, 38); // UDP header cut after the source port
    r.inject(arp, icmp, runt, cut);
    r.run(fiveTupleSwap);
    const [a, i, t, c] = r.collect();
    assert.deepEqual([...a!.bytes], [...MAC_A, ...MAC_B, ...arp.subarray(12)], 'ARP: MACs only');
    assert.deepEqual([...i!.bytes.subarray(26, 34)], [...DST4, ...SRC4], 'ICMP: addresses swapped');
    assert.deepEqual([...i!.bytes.subarray(34)], [...icmp.subarray(34)], 'ICMP: body untouched');
    assertIpv4Valid(i!.bytes);
    assert.deepEqual([...t!.bytes], [...runt], 'runt forwarded untouched');
    assert.deepEqual([t!.l2, t!.l3, t!.l4], [0, 0, 0]);
    assert.deepEqual([...c!.bytes.subarray(26, 34)], [...DST4, ...SRC4]);
    assert.deepEqual([...c!.bytes.subarray(34)], [...cut.subarray(34)], 'ports not swapped: the UDP header does not fit');
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 4]);
    r.done();
  });

  it('sets VLAN / QinQ insert flags and TCIs from the tx offloads and clears rx flags', () => {
    const r = rig();
    r.ctx.config.txOffloads = TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT;
    r.ctx.config.vlanTci = 100;
    r.ctx.config.vlanTciOuter = 200;
    const [h] = r.inject(eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, []))));
    // What the rx path left: rx flags go, tx flags come from the port.
    r.mb.setOlFlags(h!, OlFlags.RX_RSS_HASH | OlFlags.RX_IP_CKSUM_GOOD);
    r.run(fiveTupleSwap);
    const [p] = r.collect();
    assert.equal(p!.ol, 0);
    assert.equal(p!.olHi, OlFlagsHi.TX_VLAN | OlFlagsHi.TX_QINQ);
    assert.deepEqual([p!.vlan, p!.vlanOuter], [100, 200]);
    r.done();
  });
});
