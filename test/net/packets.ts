// Packet builders and a by-the-book checksum reference, shared by every test that needs a packet
// (checksum, header parsing, engines, drivers): build frames here rather than byte by byte.
import assert from 'node:assert/strict';
import { Heap } from '../../src/eal/heap.js';
import { IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP } from '../../src/net/headers.js';

// ---- an independent reference: RFC 1071 done the obvious way ------------------------

/** One's-complement sum of the bytes, as 16-bit big-endian words, folded. */
export function refSum(bytes: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    s += (bytes[i]! << 8) + (i + 1 < bytes.length ? bytes[i + 1]! : 0);
    s = (s & 0xffff) + Math.floor(s / 0x10000);
  }
  return s;
}
export const refCksum = (bytes: ArrayLike<number>): number => ~refSum(bytes) & 0xffff;
/** True when the region, checksum field included, sums to ffff: the checksum verifies. */
export const sumsOk = (bytes: ArrayLike<number>): boolean => refSum(bytes) === 0xffff;
export const be16 = (v: number) => [(v >>> 8) & 0xff, v & 0xff];
export const rd16 = (b: ArrayLike<number>, o: number) => (b[o]! << 8) | b[o + 1]!;
export const rd32 = (b: ArrayLike<number>, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

/** The L4 checksum by the book: pseudo-header bytes + L4 bytes with the checksum field zeroed. */
export function refL4Cksum(v6: boolean, src: number[], dst: number[], proto: number, l4: Uint8Array, cksumOff: number): number {
  const seg = Uint8Array.from(l4);
  seg[cksumOff] = 0;
  seg[cksumOff + 1] = 0;
  const len = seg.length;
  const phdr = v6 ? [...src, ...dst, 0, 0, ...be16(len), 0, 0, 0, proto] : [...src, ...dst, 0, proto, ...be16(len)];
  const c = refCksum([...phdr, ...seg]);
  return c === 0 && proto === IPPROTO_UDP ? 0xffff : c;
}

export const CLASSIC_IPV4 = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];
export const SRC4 = [10, 0, 0, 1];
export const DST4 = [192, 168, 7, 200];
export const SRC6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
export const DST6 = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55];

export const payload = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + seed * 11 + 5) & 0xff);

/** A UDP header from `sport` to `dport`, then `body`; the checksum field holds `cksum`. */
export function udpSeg(sport: number, dport: number, body: ArrayLike<number>, cksum = 0): Uint8Array {
  const p = new Uint8Array(8 + body.length);
  p.set([...be16(sport), ...be16(dport), ...be16(8 + body.length), ...be16(cksum)]);
  p.set(body, 8);
  return p;
}

/** A TCP header (PSH|ACK, `optWords` words of option bytes) from `sport` to `dport`, then `body`; checksum field `cksum`. */
export function tcpSeg(sport: number, dport: number, body: ArrayLike<number>, optWords = 0, cksum = 0): Uint8Array {
  const hl = 20 + optWords * 4;
  const p = new Uint8Array(hl + body.length);
  p.set([...be16(sport), ...be16(dport), 0, 0, 1, 0, 0, 0, 2, 0, ((5 + optWords) << 4) & 0xf0, 0x18, ...be16(512), ...be16(cksum), 0, 0]);
  for (let i = 20; i < hl; i++) p[i] = i & 1 ? 0x01 : 0x02;
  p.set(body, hl);
  return p;
}

/** UDP 1234 -> 53 with `len` bytes of payload from `seed`. */
export const udp = (len: number, seed: number, cksum = 0xdead): Uint8Array => udpSeg(1234, 53, payload(len, seed), cksum);

/** TCP 40000 -> 80 with `len` bytes of payload from `seed`. */
export const tcp = (len: number, seed: number, optWords = 0, cksum = 0xbeef): Uint8Array => tcpSeg(40000, 80, payload(len, seed), optWords, cksum);

/** An IPv4 header (`ihl` words, NOP options, DF, TTL 64) for `l4Len` bytes of `proto`, its checksum filled in. */
export function ipv4Hdr(proto: number, l4Len: number, ihl = 5, src = SRC4, dst = DST4): Uint8Array {
  const h = new Uint8Array(ihl * 4);
  h.set([0x40 | ihl, 0, ...be16(ihl * 4 + l4Len), 0x12, 0x34, 0x40, 0, 64, proto, 0, 0, ...src, ...dst]);
  for (let i = 20; i < h.length; i++) h[i] = 0x01; // NOP options
  const c = refCksum(h);
  h.set(be16(c), 10);
  return h;
}

export function ipv6Hdr(next: number, l4Len: number, src = SRC6, dst = DST6): Uint8Array {
  return Uint8Array.from([0x60, 0, 0, 0, ...be16(l4Len), next, 64, ...src, ...dst]);
}

/** `l4` with its checksum filled in by the reference: UDP and TCP over the pseudo-header, ICMP over itself. */
function withL4Cksum(v6: boolean, proto: number, l4: ArrayLike<number>, src: number[], dst: number[]): Uint8Array {
  const out = Uint8Array.from(l4);
  const off = proto === IPPROTO_UDP ? 6 : proto === IPPROTO_TCP ? 16 : -1;
  if (off >= 0) out.set(be16(refL4Cksum(v6, src, dst, proto, out, off)), off);
  else if (proto === IPPROTO_ICMP) {
    out.set([0, 0], 2);
    out.set(be16(refCksum(out)), 2);
  }
  return out;
}

/** An IPv4 datagram: header and `l4`, every checksum right. */
export function ipv4(proto: number, l4: ArrayLike<number>, src = SRC4, dst = DST4): Uint8Array {
  return Uint8Array.from([...ipv4Hdr(proto, l4.length, 5, src, dst), ...withL4Cksum(false, proto, l4, src, dst)]);
}

/** An IPv6 packet: header and `l4`, its L4 checksum right. */
export function ipv6(proto: number, l4: ArrayLike<number>, src = SRC6, dst = DST6): Uint8Array {
  return Uint8Array.from([...ipv6Hdr(proto, l4.length, src, dst), ...withL4Cksum(true, proto, l4, src, dst)]);
}

export const MAC_A = [0x02, 0, 0, 0, 0, 0xaa];
export const MAC_B = [0x02, 0, 0, 0, 0, 0xbb];

/** An Ethernet frame: `dst`, `src`, `type`, then `rest`. */
export function eth(type: number, rest: ArrayLike<number>, dst: ArrayLike<number> = MAC_B, src: ArrayLike<number> = MAC_A): Uint8Array {
  return Uint8Array.from([...Array.from(dst), ...Array.from(src), ...be16(type), ...Array.from(rest)]);
}

/** An Ethernet frame with one 802.1Q tag (`tci`) before `type`. */
export function vlanEth(tci: number, type: number, rest: ArrayLike<number>, dst: ArrayLike<number> = MAC_B, src: ArrayLike<number> = MAC_A): Uint8Array {
  return eth(0x8100, [...be16(tci), ...be16(type), ...Array.from(rest)], dst, src);
}

/** Checks an IPv4 packet's header and L4 checksums with the reference; `l2` is the IP header's offset. */
export function assertIpv4Valid(p: Uint8Array, l2 = 14): void {
  const ihl = (p[l2]! & 0xf) * 4;
  assert.ok(sumsOk(p.subarray(l2, l2 + ihl)), 'IPv4 header checksum');
  const proto = p[l2 + 9]!;
  const total = rd16(p, l2 + 2);
  const l4 = p.subarray(l2 + ihl, l2 + total);
  if (proto === IPPROTO_ICMP) return assert.ok(sumsOk(l4), 'ICMP checksum');
  if (proto === IPPROTO_UDP && rd16(l4, 6) === 0) return;
  assert.ok(sumsOk([...p.subarray(l2 + 12, l2 + 20), 0, proto, ...be16(l4.length), ...l4]), 'L4 checksum over IPv4');
}

/** Checks an IPv6 packet's L4 checksum with the reference; `l2` is the IP header's offset. */
export function assertIpv6L4Valid(p: Uint8Array, l2 = 14): void {
  const len = rd16(p, l2 + 4);
  const l4 = p.subarray(l2 + 40, l2 + 40 + len);
  assert.ok(sumsOk([...p.subarray(l2 + 8, l2 + 40), 0, 0, ...be16(len), 0, 0, 0, p[l2 + 6]!, ...l4]), 'L4 checksum over IPv6');
}

/** A scratch area in a real heap, so the functions run on heap offsets as the engines use them. */
export function scratch() {
  const heap = Heap.create({ size: 1 << 20 });
  const base = heap.reserve(128 * 1024);
  return { u8: heap.u8, base };
}
