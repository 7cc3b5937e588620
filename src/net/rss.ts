/**
 * Receive-side scaling: the Toeplitz hash NICs compute over a packet's
 * addresses and ports to pick its rx queue (RSS), as specified by Microsoft's
 * RSS verification suite and implemented by DPDK's rte_thash.
 *
 * The hash of an input is the XOR, for every set bit i of the input (most
 * significant first), of the 32 key bits starting at bit i. That is linear in
 * the input bytes, so `Toeplitz` precomputes, for each input byte position
 * and value, its 32-bit contribution: hashing a 12-byte IPv4 4-tuple is then
 * 12 table lookups, without allocation.
 */
import { ArgError } from '../errors.js';
import { ETHER_TYPE_IPV4, ETHER_TYPE_IPV6 } from './ether.js';
import { IPPROTO_TCP, IPPROTO_UDP, parseHeaders, type HdrInfo } from './headers.js';

/** The 40-byte key DPDK's Intel drivers use by default (also Microsoft's verification key). */
export const RSS_DEFAULT_KEY = Uint8Array.from([
  0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80,
  0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
]);

/** Input bytes: IPv6 source and destination plus two ports. */
const MAX_INPUT = 36;

export class Toeplitz {
  /** table[pos * 256 + byte]: the contribution of `byte` at input position `pos`. */
  private readonly table: Uint32Array;
  readonly maxInput: number;

  constructor(key: Uint8Array = RSS_DEFAULT_KEY) {
    if (key.length < 8) throw new ArgError(`RSS key of ${key.length} bytes: at least 8 are needed`);
    this.maxInput = Math.min(MAX_INPUT, key.length - 4);
    this.table = new Uint32Array(this.maxInput * 256);
    for (let pos = 0; pos < this.maxInput; pos++) {
      for (let bit = 0; bit < 8; bit++) {
        const window = keyWindow(key, pos * 8 + bit);
        const mask = 0x80 >> bit;
        for (let b = 0; b < 256; b++) if (b & mask) this.table[pos * 256 + b]! ^= window;
      }
    }
    for (let i = 0; i < this.table.length; i++) this.table[i] = this.table[i]! >>> 0;
  }

  /**
   * Hashes `len` bytes of `u8` from `off`, as input positions `pos..pos+len`
   * (so a tuple split over two headers hashes in two calls, XORed).
   */
  hashAt(u8: Uint8Array, off: number, len: number, pos = 0): number {
    const t = this.table;
    let h = 0;
    for (let i = 0; i < len; i++) h ^= t[((pos + i) << 8) | u8[off + i]!]!;
    return h >>> 0;
  }

  /** Hashes a whole input. */
  hash(input: Uint8Array): number {
    if (input.length > this.maxInput) throw new ArgError(`RSS input of ${input.length} bytes: this key hashes at most ${this.maxInput}`);
    return this.hashAt(input, 0, input.length);
  }
}

/** The 32 key bits starting at bit `start` (most significant bit first). */
function keyWindow(key: Uint8Array, start: number): number {
  let w = 0;
  for (let i = 0; i < 32; i++) {
    const bit = start + i;
    const v = (key[bit >> 3]! >> (7 - (bit & 7))) & 1;
    w = (w << 1) | v;
  }
  return w >>> 0;
}

/** The RSS input for IPv4 (and optionally TCP/UDP ports): source, destination, source port, destination port. */
export function rssInputIpv4(src: number[], dst: number[], sport?: number, dport?: number): Uint8Array {
  const out = [...src, ...dst];
  if (sport !== undefined && dport !== undefined) out.push(sport >> 8, sport & 0xff, dport >> 8, dport & 0xff);
  return Uint8Array.from(out);
}

/** The RSS hash of the packet at `off` (`len` bytes): IPv4/IPv6 addresses, plus TCP/UDP ports when present and unfragmented; 0 for anything else. */
export function packetRssHash(t: Toeplitz, u8: Uint8Array, off: number, len: number, info: HdrInfo): number {
  parseHeaders(u8, off, len, info);
  let h: number;
  let ports: number;
  if (info.ethertype === ETHER_TYPE_IPV4 && info.l3Off !== 0) {
    h = t.hashAt(u8, info.l3Off + 12, 8, 0);
    ports = 8;
  } else if (info.ethertype === ETHER_TYPE_IPV6 && info.l3Off !== 0) {
    h = t.hashAt(u8, info.l3Off + 8, 32, 0);
    ports = 32;
  } else {
    return 0;
  }
  if (info.l4Off !== 0 && !info.ipFrag && (info.l4Proto === IPPROTO_TCP || info.l4Proto === IPPROTO_UDP)) {
    h ^= t.hashAt(u8, info.l4Off, 4, ports);
  }
  return h >>> 0;
}

/** DPDK's default redirection table size: queue = RETA[hash % 128], entry i → queue i % nbQueues. */
export const RETA_SIZE = 128;
