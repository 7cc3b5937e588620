import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/mem/heap.js';
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

// ---- an independent reference: RFC 1071 done the obvious way ------------------------

/** One's-complement sum of the bytes, as 16-bit big-endian words, folded. */
function refSum(bytes: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    s += (bytes[i]! << 8) + (i + 1 < bytes.length ? bytes[i + 1]! : 0);
    s = (s & 0xffff) + Math.floor(s / 0x10000);
  }
  return s;
}
const refCksum = (bytes: ArrayLike<number>): number => ~refSum(bytes) & 0xffff;
const be16 = (v: number) => [(v >>> 8) & 0xff, v & 0xff];

/** The L4 checksum by the book: pseudo-header bytes + L4 bytes with the checksum field zeroed. */
function refL4Cksum(v6: boolean, src: number[], dst: number[], proto: number, l4: Uint8Array, cksumOff: number): number {
  const seg = Uint8Array.from(l4);
  seg[cksumOff] = 0;
  seg[cksumOff + 1] = 0;
  const len = seg.length;
  const phdr = v6 ? [...src, ...dst, 0, 0, ...be16(len), 0, 0, 0, proto] : [...src, ...dst, 0, proto, ...be16(len)];
  const c = refCksum([...phdr, ...seg]);
  return c === 0 && proto === IPPROTO_UDP ? 0xffff : c;
}

const CLASSIC_IPV4 = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
const SRC4 = [10, 0, 0, 1];
const DST4 = [192, 168, 7, 200];
const SRC6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const DST6 = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55];

const payload = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + seed * 11 + 5) & 0xff);

function udp(len: number, seed: number, cksum = 0xdead): Uint8Array {
  const p = new Uint8Array(8 + len);
  p.set([...be16(1234), ...be16(53), ...be16(8 + len), ...be16(cksum)]);
  p.set(payload(len, seed), 8);
  return p;
}

function tcp(len: number, seed: number, optWords = 0, cksum = 0xbeef): Uint8Array {
  const hl = 20 + optWords * 4;
  const p = new Uint8Array(hl + len);
  p.set([...be16(40000), ...be16(80), 0, 0, 1, 0, 0, 0, 2, 0, ((5 + optWords) << 4) & 0xf0, 0x18, ...be16(512), ...be16(cksum), 0, 0]);
  for (let i = 20; i < hl; i++) p[i] = i & 1 ? 0x01 : 0x02;
  p.set(payload(len, seed), hl);
  return p;
}

function ipv4Hdr(proto: number, l4Len: number, ihl = 5): Uint8Array {
  const h = new Uint8Array(ihl * 4);
  h.set([0x40 | ihl, 0, ...be16(ihl * 4 + l4Len), 0x12, 0x34, 0x40, 0, 64, proto, 0, 0, ...SRC4, ...DST4]);
  for (let i = 20; i < h.length; i++) h[i] = 0x01; // NOP options
  const c = refCksum(h);
  h.set(be16(c), 10);
  return h;
}

function ipv6Hdr(next: number, l4Len: number): Uint8Array {
  return Uint8Array.from([0x60, 0, 0, 0, ...be16(l4Len), next, 64, ...SRC6, ...DST6]);
}

/** A scratch area in a real heap, so the functions run on heap offsets as the engines use them. */
function scratch() {
  const heap = Heap.create({ size: 1 << 20 });
  const base = heap.reserve(128 * 1024);
  return { u8: heap.u8, base };
}

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
