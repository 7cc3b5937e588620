// Packet builders and a by-the-book checksum reference shared by the checksum and header tests.
import { Heap } from '../../src/eal/heap.js';
import { IPPROTO_UDP } from '../../src/net/headers.js';

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
export const be16 = (v: number) => [(v >>> 8) & 0xff, v & 0xff];

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

export function udp(len: number, seed: number, cksum = 0xdead): Uint8Array {
  const p = new Uint8Array(8 + len);
  p.set([...be16(1234), ...be16(53), ...be16(8 + len), ...be16(cksum)]);
  p.set(payload(len, seed), 8);
  return p;
}

export function tcp(len: number, seed: number, optWords = 0, cksum = 0xbeef): Uint8Array {
  const hl = 20 + optWords * 4;
  const p = new Uint8Array(hl + len);
  p.set([...be16(40000), ...be16(80), 0, 0, 1, 0, 0, 0, 2, 0, ((5 + optWords) << 4) & 0xf0, 0x18, ...be16(512), ...be16(cksum), 0, 0]);
  for (let i = 20; i < hl; i++) p[i] = i & 1 ? 0x01 : 0x02;
  p.set(payload(len, seed), hl);
  return p;
}

export function ipv4Hdr(proto: number, l4Len: number, ihl = 5): Uint8Array {
  const h = new Uint8Array(ihl * 4);
  h.set([0x40 | ihl, 0, ...be16(ihl * 4 + l4Len), 0x12, 0x34, 0x40, 0, 64, proto, 0, 0, ...SRC4, ...DST4]);
  for (let i = 20; i < h.length; i++) h[i] = 0x01; // NOP options
  const c = refCksum(h);
  h.set(be16(c), 10);
  return h;
}

export function ipv6Hdr(next: number, l4Len: number): Uint8Array {
  return Uint8Array.from([0x60, 0, 0, 0, ...be16(l4Len), next, 64, ...SRC6, ...DST6]);
}

/** A scratch area in a real heap, so the functions run on heap offsets as the engines use them. */
export function scratch() {
  const heap = Heap.create({ size: 1 << 20 });
  const base = heap.reserve(128 * 1024);
  return { u8: heap.u8, base };
}
