import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_TX_PACKETS } from '../../src/fwd/engine.js';
import { csum } from '../../src/fwd/csum.js';
import { OlFlags, OlFlagsHi } from '../../src/mem/mbuf-layout.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../src/net/headers.js';
import { assertIpv4Valid, assertIpv6L4Valid, be16, eth, ipv4, ipv6, payload, refCksum, tcpSeg, udpSeg, vlanEth } from '../net/packets.js';
import { PEER, rig } from './harness.js';

describe('csum', () => {
  /** Zeroes bytes [at, at + 2) of a copy: a checksum field "not filled in". */
  const zeroAt = (p: Uint8Array, at: number) => {
    const q = Uint8Array.from(p);
    q[at] = 0;
    q[at + 1] = 0;
    return q;
  };

  it('fixes zeroed L4 checksums over IPv4 and IPv6, sets tx metadata and counts the bad arrivals', () => {
    const r = rig();
    const udp4 = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1000, 2000, payload(25, 1))));
    const tcp4 = eth(0x0800, ipv4(IPPROTO_TCP, tcpSeg(1000, 2000, payload(31, 1), 1)));
    const udp6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpSeg(1000, 2000, payload(17, 1))));
    const tcp6 = eth(0x86dd, ipv6(IPPROTO_TCP, tcpSeg(1000, 2000, payload(40, 1))));
    const badUdp4 = Uint8Array.from(udp4);
    badUdp4[40] ^= 0x5a; // a wrong, non-zero UDP checksum
    r.inject(badUdp4, zeroAt(tcp4, 14 + 20 + 16), zeroAt(udp6, 14 + 40 + 6), zeroAt(tcp6, 14 + 40 + 16));
    const engine = r.run(csum);
    assert.equal(engine.name, 'csum');
    const [u4, t4, u6, t6] = r.collect();
    const fixed = (got: Uint8Array, want: Uint8Array) => {
      assert.deepEqual([...got.subarray(0, 6)], PEER, 'dst = peer (csum mac-swap)');
      assert.deepEqual([...got.subarray(6, 12)], [...r.fs.txMac], 'src = tx port');
      assert.deepEqual([...got.subarray(12)], [...want.subarray(12)], 'checksums as the reference computes them');
    };
    fixed(u4!.bytes, udp4);
    fixed(t4!.bytes, tcp4);
    fixed(u6!.bytes, udp6);
    fixed(t6!.bytes, tcp6);
    assertIpv4Valid(u4!.bytes);
    assertIpv4Valid(t4!.bytes);
    assertIpv6L4Valid(u6!.bytes);
    assertIpv6L4Valid(t6!.bytes);
    assert.deepEqual([u4!.l2, u4!.l3, u4!.l4, u4!.olHi], [14, 20, 8, OlFlagsHi.TX_IPV4]);
    assert.deepEqual([t4!.l2, t4!.l3, t4!.l4, t4!.olHi], [14, 20, 24, OlFlagsHi.TX_IPV4]);
    assert.deepEqual([u6!.l2, u6!.l3, u6!.l4, u6!.olHi], [14, 40, 8, OlFlagsHi.TX_IPV6]);
    assert.deepEqual([t6!.l2, t6!.l3, t6!.l4, t6!.olHi], [14, 40, 20, OlFlagsHi.TX_IPV6]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [0, 4]);
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 4]);
    r.done();
  });

  it('fixes a zeroed IPv4 header checksum, leaves good packets alone, keeps an IPv4 UDP "no checksum" 0', () => {
    const r = rig();
    const good = eth(0x0800, ipv4(IPPROTO_TCP, tcpSeg(1, 2, payload(9, 1))));
    const badIp = zeroAt(good, 14 + 10);
    const noCksum = zeroAt(eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(3, 4, payload(12, 1)))), 14 + 20 + 6);
    const tagged = vlanEth(0x0033, 0x0800, ipv4(IPPROTO_UDP, udpSeg(5, 6, payload(3, 1))));
    r.inject(good, badIp, noCksum, Uint8Array.from(tagged));
    r.run(csum);
    const [g, b, n, v] = r.collect();
    assert.deepEqual([...g!.bytes.subarray(12)], [...good.subarray(12)]);
    assert.deepEqual([...b!.bytes.subarray(12)], [...good.subarray(12)], 'IP checksum restored');
    assert.deepEqual([...n!.bytes.subarray(12)], [...noCksum.subarray(12)], 'UDP checksum 0 over IPv4 stays 0 (RFC 768, testpmd)');
    assert.deepEqual([...v!.bytes.subarray(12)], [...tagged.subarray(12)]);
    assert.deepEqual([v!.l2, v!.l3, v!.l4], [18, 20, 8]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [1, 0]);
    r.done();
  });

  it('trusts the rx checksum status a driver reported, and verifies only when it is unknown', () => {
    const r = rig();
    const pkt = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(10, 1))));
    const badIp = zeroAt(pkt, 14 + 10);
    const [h1, h2] = r.inject(badIp, pkt);
    r.mb.setOlFlags(h1!, OlFlags.RX_IP_CKSUM_GOOD | OlFlags.RX_L4_CKSUM_GOOD); // the driver says fine: not counted
    r.mb.setOlFlags(h2!, OlFlags.RX_IP_CKSUM_BAD | OlFlags.RX_L4_CKSUM_BAD); // the driver says bad: counted
    r.run(csum);
    const got = r.collect();
    assert.equal(got.length, 2);
    for (const p of got) {
      assertIpv4Valid(p.bytes);
      assert.equal(p.ol, 0, 'rx flags cleared');
    }
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [1, 1]);
    r.done();
  });

  it('forwards truncated, fragmented and non-IP packets without touching what it cannot check', () => {
    const r = rig();
    const full = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(40, 1))));
    const cut = full.slice(0, 50); // IP total length says more than arrived
    const frag = Uint8Array.from(full);
    frag[14 + 6] = 0x20; // more fragments
    frag.set(be16(refCksum([...frag.subarray(14, 24), 0, 0, ...frag.subarray(26, 34)])), 24);
    frag[40] ^= 0xff; // an L4 checksum nobody can check on a fragment
    const arp = eth(0x0806, payload(28, 1));
    const runt = payload(9, 1);
    r.inject(cut, frag, arp, runt);
    r.run(csum);
    const [c, f, a, t] = r.collect();
    assert.deepEqual([...c!.bytes.subarray(12)], [...cut.subarray(12)]);
    assert.deepEqual([...f!.bytes.subarray(12)], [...frag.subarray(12)]);
    assert.deepEqual([...a!.bytes.subarray(12)], [...arp.subarray(12)]);
    assert.deepEqual([a!.l2, a!.l3, a!.l4, a!.olHi], [14, 0, 0, 0]);
    assert.deepEqual([...t!.bytes], [...runt]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM), r.counter(FS_TX_PACKETS)], [0, 0, 4]);
    r.done();
  });
});
