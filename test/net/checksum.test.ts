import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cksumAdd,
  cksumAdjust,
  cksumFold,
  ipv4Cksum,
  ipv4CksumSet,
  ipv4CksumVerify,
  ipv4UdptcpCksum,
  ipv4UdptcpCksumVerify,
  ipv6UdptcpCksum,
  ipv6UdptcpCksumVerify,
  rawCksum,
} from '../../src/net/checksum.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../src/net/headers.js';

import { CLASSIC_IPV4, DST4, DST6, SRC4, SRC6, be16, ipv4Hdr, ipv6Hdr, payload, refL4Cksum, refSum, scratch, tcp, udp } from './packets.js';

describe('raw sum, fold and adjust', () => {
  it('sums the RFC 1071 example and pads an odd byte as the high half', () => {
    const { u8, base } = scratch();
    u8.set([0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7], base);
    assert.equal(rawCksum(u8, base, 8), 0xddf2);
    assert.equal(~rawCksum(u8, base, 8) & 0xffff, 0x220d);
    u8[base + 8] = 0x01;
    assert.equal(rawCksum(u8, base + 8, 1), 0x0100);
    // Summing in parts equals one pass when all parts but the last are even.
    assert.equal(cksumFold(cksumAdd(u8, base + 4, 5, cksumAdd(u8, base, 4))), rawCksum(u8, base, 9));
    assert.equal(rawCksum(u8, base, 0), 0);
  });

  it('folds sums beyond 32 bits exactly', () => {
    // 2^16 ≡ 1 (mod 0xffff), so 3·2^32 + 5 folds to 8.
    assert.equal(cksumFold(3 * 2 ** 32 + 5), 8);
    assert.equal(cksumFold(0x1fffe), 0xffff);
    assert.equal(cksumFold(0xffff), 0xffff);
  });

  it('matches the reference over a large region at an odd offset', () => {
    const { u8, base } = scratch();
    const data = payload(65_537, 3);
    u8.set(data, base + 1);
    assert.equal(rawCksum(u8, base + 1, data.length), refSum(data));
    u8.fill(0xff, base, base + 100_000);
    assert.equal(rawCksum(u8, base, 100_000), 0xffff);
  });

  it('adjusts a checksum for one changed word as a full recompute would', () => {
    const { u8, base } = scratch();
    const data = payload(64, 9);
    u8.set(data, base);
    const before = ~rawCksum(u8, base, 64) & 0xffff;
    const old = (u8[base + 10]! << 8) | u8[base + 11]!;
    u8[base + 10] = 0x08;
    u8[base + 11] = 0x00;
    assert.equal(cksumAdjust(before, old, 0x0800), ~rawCksum(u8, base, 64) & 0xffff);
  });
});

describe('IPv4 header checksum', () => {
  it('computes b861 for the classic header, whatever the field holds, at any alignment', () => {
    const { u8, base } = scratch();
    for (const at of [base, base + 1, base + 3]) {
      u8.set(CLASSIC_IPV4, at);
      assert.equal(ipv4Cksum(u8, at), 0xb861);
      assert.equal(ipv4CksumVerify(u8, at), true);
      u8[at + 10] = 0;
      u8[at + 11] = 0;
      assert.equal(ipv4Cksum(u8, at), 0xb861);
      assert.equal(ipv4CksumVerify(u8, at), false);
      assert.equal(ipv4CksumSet(u8, at), 0xb861);
      assert.deepEqual([...u8.subarray(at, at + 20)], CLASSIC_IPV4);
    }
  });

  it('covers options (IHL 7) and detects corruption of any byte', () => {
    const { u8, base } = scratch();
    const h = ipv4Hdr(IPPROTO_TCP, 100, 7);
    u8.set(h, base);
    assert.equal(ipv4CksumVerify(u8, base), true);
    const stored = (h[10]! << 8) | h[11]!;
    assert.equal(ipv4Cksum(u8, base), stored);
    for (let i = 0; i < h.length; i++) {
      if (i === 0) continue; // the IHL nibble changes the length covered, tested below
      u8[base + i] ^= 0x40;
      assert.equal(ipv4CksumVerify(u8, base), false, `flip in byte ${i}`);
      u8[base + i] ^= 0x40;
    }
    u8[base] = 0x44; // IHL 4: not a header
    assert.equal(ipv4CksumVerify(u8, base), false);
  });
});

describe('UDP / TCP over IPv4', () => {
  for (const [name, proto, l4, ckOff] of [
    ['UDP, odd payload', IPPROTO_UDP, udp(37, 1), 6],
    ['UDP, even payload', IPPROTO_UDP, udp(200, 2), 6],
    ['TCP with options', IPPROTO_TCP, tcp(101, 3, 3), 16],
    ['TCP, no payload', IPPROTO_TCP, tcp(0, 4), 16],
  ] as const) {
    it(`${name}: computes the reference checksum, verifies it, detects corruption`, () => {
      const { u8, base } = scratch();
      const ip = ipv4Hdr(proto, l4.length, name.startsWith('TCP with') ? 6 : 5);
      const l3 = base + 2;
      const l4Off = l3 + ip.length;
      u8.set(ip, l3);
      u8.set(l4, l4Off);
      const want = refL4Cksum(false, SRC4, DST4, proto, l4, ckOff);
      assert.equal(ipv4UdptcpCksum(u8, l3, l4Off), want);
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), false, 'the garbage field does not verify');
      u8.set(be16(want), l4Off + ckOff);
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), true);
      // Payload, header and pseudo-header (source address) are all covered.
      u8[l4Off + l4.length - 1] ^= 0x10;
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), false);
      u8[l4Off + l4.length - 1] ^= 0x10;
      u8[l4Off + 1] ^= 1;
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), false);
      u8[l4Off + 1] ^= 1;
      u8[l3 + 13] ^= 1;
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), false);
      u8[l3 + 13] ^= 1;
      assert.equal(ipv4UdptcpCksumVerify(u8, l3, l4Off), true);
    });
  }

  it('sends a UDP sum of zero as ffff, a TCP one as 0000, and both verify', () => {
    const { u8, base } = scratch();
    for (const [proto, ckOff, l4] of [
      [IPPROTO_UDP, 6, udp(20, 7)],
      [IPPROTO_TCP, 16, tcp(20, 7)],
    ] as const) {
      // Choose the last payload word so that the true checksum is 0.
      const seg = Uint8Array.from(l4);
      seg[seg.length - 2] = 0;
      seg[seg.length - 1] = 0;
      const partial = refL4Cksum(false, SRC4, DST4, proto, seg, ckOff); // ~fold(S), S the sum without this word
      seg.set(be16(partial), seg.length - 2); // S + ~fold(S) folds to ffff: the checksum becomes 0
      const ip = ipv4Hdr(proto, seg.length);
      u8.set(ip, base);
      u8.set(seg, base + 20);
      const got = ipv4UdptcpCksum(u8, base, base + 20);
      assert.equal(got, proto === IPPROTO_UDP ? 0xffff : 0);
      u8.set(be16(got), base + 20 + ckOff);
      assert.equal(ipv4UdptcpCksumVerify(u8, base, base + 20), true);
    }
  });

  it('returns 0 / false when the total length is shorter than the header', () => {
    const { u8, base } = scratch();
    const ip = ipv4Hdr(IPPROTO_UDP, 8);
    ip.set(be16(10), 2);
    u8.set(ip, base);
    u8.set(udp(0, 1), base + 20);
    assert.equal(ipv4UdptcpCksum(u8, base, base + 20), 0);
    assert.equal(ipv4UdptcpCksumVerify(u8, base, base + 20), false);
  });
});

describe('UDP / TCP over IPv6', () => {
  for (const [name, proto, l4, ckOff] of [
    ['UDP', IPPROTO_UDP, udp(33, 5), 6],
    ['TCP', IPPROTO_TCP, tcp(64, 6, 2), 16],
  ] as const) {
    it(`${name}: computes the reference checksum, verifies it, detects corruption`, () => {
      const { u8, base } = scratch();
      const l3 = base + 1;
      const l4Off = l3 + 40;
      u8.set(ipv6Hdr(proto, l4.length), l3);
      u8.set(l4, l4Off);
      const want = refL4Cksum(true, SRC6, DST6, proto, l4, ckOff);
      assert.equal(ipv6UdptcpCksum(u8, l3, l4Off), want);
      u8.set(be16(want), l4Off + ckOff);
      assert.equal(ipv6UdptcpCksumVerify(u8, l3, l4Off), true);
      u8[l3 + 39] ^= 0x80; // last byte of the destination address
      assert.equal(ipv6UdptcpCksumVerify(u8, l3, l4Off), false);
      u8[l3 + 39] ^= 0x80;
      u8[l4Off + 25] ^= 0x02;
      assert.equal(ipv6UdptcpCksumVerify(u8, l3, l4Off), false);
      u8[l4Off + 25] ^= 0x02;
      u8[l4Off + ckOff] = 0;
      u8[l4Off + ckOff + 1] = 0;
      assert.equal(ipv6UdptcpCksumVerify(u8, l3, l4Off), false, 'a zeroed checksum does not verify');
    });
  }
});
