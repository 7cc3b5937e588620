import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  IPPROTO_ICMP,
  IPPROTO_TCP,
  IPPROTO_UDP,
  PARSED_L2,
  PARSED_L3,
  PARSED_L4,
  PARSED_NONE,
  newHdrInfo,
  parseHeaders,
} from '../../src/net/headers.js';
import { ipv4UdptcpCksum } from '../../src/net/checksum.js';
import { be16, ipv4Hdr, ipv6Hdr, scratch, tcp, udp } from './packets.js';

describe('parseHeaders', () => {
  const ether = (type: number) => [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, ...be16(type)];

  it('parses Ethernet / VLAN / QinQ / IPv4 with options / TCP and reports lengths and offsets', () => {
    const { u8, base } = scratch();
    const l4 = tcp(10, 1, 2);
    const ip = ipv4Hdr(IPPROTO_TCP, l4.length, 6);
    const pkt = [...ether(0x88a8), 0x00, 0x07, ...be16(0x8100), 0x00, 0x64, ...be16(0x0800), ...ip, ...l4];
    u8.set(pkt, base);
    const info = newHdrInfo();
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L4);
    assert.deepEqual(
      { ...info },
      { ethertype: 0x0800, vlanTags: 2, l2Len: 22, l3Off: base + 22, l3Len: 24, l4Proto: IPPROTO_TCP, l4Off: base + 46, l4Len: 28, l4DgramLen: l4.length, ipFrag: false, l3Complete: true },
    );
  });

  it('parses IPv6 / UDP and ICMP over IPv4', () => {
    const { u8, base } = scratch();
    const info = newHdrInfo();
    const u = udp(4, 2);
    const p6 = [...ether(0x86dd), ...ipv6Hdr(IPPROTO_UDP, u.length), ...u];
    u8.set(p6, base);
    assert.equal(parseHeaders(u8, base, p6.length, info), PARSED_L4);
    assert.deepEqual([info.l3Len, info.l4Proto, info.l4Off - base, info.l4Len, info.l3Complete], [40, IPPROTO_UDP, 54, 8, true]);
    const icmp = [8, 0, 0, 0, 0, 1, 0, 1];
    const p4 = [...ether(0x0800), ...ipv4Hdr(IPPROTO_ICMP, 8), ...icmp];
    u8.set(p4, base);
    assert.equal(parseHeaders(u8, base, p4.length, info), PARSED_L4);
    assert.deepEqual([info.l4Proto, info.l4Off - base, info.l4Len], [IPPROTO_ICMP, 34, 8]);
  });

  it('stops at the last header that fits, and never throws on short, odd or hostile input', () => {
    const { u8, base } = scratch();
    const info = newHdrInfo();
    const u = udp(20, 3);
    const pkt = [...ether(0x0800), ...ipv4Hdr(IPPROTO_UDP, u.length), ...u];
    u8.set(pkt, base);
    assert.equal(parseHeaders(u8, base, 13, info), PARSED_NONE);
    assert.equal(info.l2Len, 0);
    assert.equal(parseHeaders(u8, base, 14, info), PARSED_L2);
    assert.equal(parseHeaders(u8, base, 33, info), PARSED_L2, 'IPv4 header cut short');
    assert.equal(parseHeaders(u8, base, 40, info), PARSED_L3, 'UDP header cut short');
    assert.equal(info.l3Complete, false);
    assert.equal(parseHeaders(u8, base, 42, info), PARSED_L4);
    assert.equal(info.l3Complete, false, 'payload missing');
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L4);
    assert.equal(info.l3Complete, true);
    // Non-first fragment: no L4 header there.
    u8[base + 14 + 6] = 0x00;
    u8[base + 14 + 7] = 0x10;
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L3);
    assert.equal(info.ipFrag, true);
    // Bad version, IHL below 5, total length below the header.
    u8.set(pkt, base);
    u8[base + 14] = 0x55;
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L2);
    u8[base + 14] = 0x44;
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L2);
    u8.set(pkt, base);
    u8.set(be16(19), base + 16);
    assert.equal(parseHeaders(u8, base, pkt.length, info), PARSED_L2);
    // Three stacked tags: more than QinQ, stop at L2.
    const tags = [...ether(0x8100), 0, 1, ...be16(0x8100), 0, 2, ...be16(0x8100), 0, 3, ...be16(0x0800)];
    u8.set(tags, base);
    assert.equal(parseHeaders(u8, base, tags.length + 40, info), PARSED_L2);
    // Hostile lengths and offsets past the heap's end.
    assert.equal(parseHeaders(u8, base, -5, info), PARSED_NONE);
    assert.equal(parseHeaders(u8, base, NaN, info), PARSED_NONE);
    assert.doesNotThrow(() => parseHeaders(u8, u8.length - 20, 1000, info));
    assert.doesNotThrow(() => ipv4UdptcpCksum(u8, u8.length - 10, u8.length + 10));
  });
});
