/**
 * The exact-match hash table's bulk lookups, the wasm kernels (hash.as.ts)
 * or their TypeScript twins (here, same signatures), chosen once when a table
 * is opened (`hashOps`). Arguments are heap byte offsets: `h` the table's
 * header (hash.record.ts), `keys` keys packed at keyLen bytes, `hashes` u32
 * hashes, `positions` an i32 per key (its position, or -1).
 */
import type { Heap } from '../eal/heap.js';
import {
  HASH_BUCKET_ENTRIES,
  HASH_BUCKET_SIZE,
  HASH_W_BUCKET_MASK,
  HASH_W_BUCKETS,
  HASH_W_INIT_VAL,
  HASH_W_KEY_LEN,
  HASH_W_KEY_STRIDE,
  HASH_W_KEYS,
  HB_KEY_IDX,
} from './hash-layout.js';

export interface HashOps {
  /** rte_hash_lookup_bulk. @returns n */
  lookupBulk(h: number, keys: number, positions: number, n: number): number;
  /** rte_hash_lookup_with_hash_bulk. @returns n */
  lookupBulkWithHash(h: number, keys: number, hashes: number, positions: number, n: number): number;
}

/** The kernels when the heap has them, else the twins. */
export function hashOps(heap: Heap): HashOps {
  const k = heap.kernels;
  return k === null ? hashTwin(heap) : { lookupBulk: k.fn('hashLookupBulk'), lookupBulkWithHash: k.fn('hashLookupBulkWithHash') };
}

// xxHash64's primes as 32-bit halves (hashKeyAt in hash.as.ts), and the
// 64-bit arithmetic on halves in S: h in S[0] (high), S[1] (low), a word or
// product in S[2], S[3]. Every value past 2^30 stays in S or in a local:
// BigInt would allocate per step, and V8 boxes a u32 past 2^30 that is
// stored in a module variable, passed to or returned from a call it does
// not inline; so these helpers take indexes and return nothing.
const P = Uint32Array.of(0x9e3779b1, 0x85ebca87, 0xc2b2ae3d, 0x27d4eb4f, 0x165667b1, 0x9e3779f9);
const P1 = 0, P2 = 2, P3 = 4;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;
const S = new Uint32Array(4);

/** (S[i], S[i+1]) *= (P[c], P[c+1]), modulo 2^64. */
function mul(i: number, c: number): void {
  const ah = S[i]!, al = S[i + 1]!, bh = P[c]!, bl = P[c + 1]!;
  // The high half of al * bl from 16-bit pieces, each product exact in a double.
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p01 = a0 * b1, p10 = a1 * b0;
  const mid = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const hi = a1 * b1 + Math.floor(p01 / 0x10000) + Math.floor(p10 / 0x10000) + Math.floor(mid / 0x10000);
  S[i] = hi + Math.imul(al, bh) + Math.imul(ah, bl);
  S[i + 1] = Math.imul(al, bl);
}

/** h = xxHash64's round of h with the word in S[2], S[3]: rotl(h + w * P2, 31) * P1. */
function round64(): void {
  mul(2, P2);
  const sl = S[1]! + S[3]!;
  const sh = (S[0]! + S[2]! + (sl > 0xffffffff ? 1 : 0)) >>> 0;
  const rl = sl >>> 0;
  S[0] = (sh << 31) | (rl >>> 1);
  S[1] = (rl << 31) | (sh >>> 1);
  mul(0, P1);
}

/** xxHash64's avalanche of h: the hash's 32 bits land in S[1]. */
function avalanche(): void {
  S[1] = S[1]! ^ (S[0]! >>> 1); // h ^= h >> 33
  mul(0, P2);
  S[1] = S[1]! ^ ((S[0]! << 3) | (S[1]! >>> 29)); // h ^= h >> 29
  S[0] = S[0]! ^ (S[0]! >>> 29);
  mul(0, P3);
  S[1] = S[1]! ^ S[0]!; // the low half of h ^ h >> 32
}

/** The 8 little-endian bytes of `u8` at `p` into S[2] (high 4), S[3] (low 4); bytes from `end` on read as 0. */
function loadWord(u8: Uint8Array, p: number, end: number): void {
  for (let half = 0; half < 2; half++) {
    let w = 0;
    for (let k = 3; k >= 0; k--) w = (w << 8) | (p + 4 * half + k < end ? u8[p + 4 * half + k]! : 0);
    S[3 - half] = w;
  }
}

/** The hash of `len` bytes of `u8` from `p` into S[1]: h = init ^ len, plus P5, then a round per word, then the avalanche. */
function hashInto(u8: Uint8Array, p: number, len: number, init: number): void {
  const sl = ((init ^ len) >>> 0) + P5L;
  S[1] = sl;
  S[0] = P5H + (sl > 0xffffffff ? 1 : 0);
  for (let i = 0; i < len; i += 8) {
    loadWord(u8, p + i, p + len);
    round64();
  }
  avalanche();
}

/**
 * The table's hash of `len` bytes of `u8` from `p` (hashKeyAt in hash.as.ts):
 * xxHash64's round over little-endian 8-byte words, the last one
 * zero-padded, seeded with `init ^ len`, then its avalanche, the low 32 bits
 * kept. Not DPDK's CRC32 (wasm has no CRC instruction).
 * @returns the hash, a u32 (boxed by V8 past 2^30 when the call is not
 *   inlined: a data path uses hashKeyTo)
 */
export function hashKey(u8: Uint8Array, p: number, len: number, init: number): number {
  hashInto(u8, p, len, init);
  return S[1]!;
}

/** hashKey into `out[at]`: nothing returned, so nothing boxed. */
export function hashKeyTo(u8: Uint8Array, p: number, len: number, init: number, out: Uint32Array, at: number): void {
  hashInto(u8, p, len, init);
  out[at] = S[1]!;
}

/**
 * hashFind's twin (hash.as.ts) over `heap`: `find(h, k, at)` is the position
 * of the key at heap offset `k` in the table at `h`, or -1, its hash read
 * from the heap's u32 word `at` (where every caller holds it: a u32 past
 * 2^30 passed as an argument is boxed, read into a local it is not). Made
 * once per table user; the search allocates nothing.
 */
export function hashFinder(heap: Heap): (h: number, k: number, at: number) => number {
  const { u8, u16, u32 } = heap;
  const inBucket = (hw: number, b: number, sig: number, k: number): number => {
    const keys = u32[hw + HASH_W_KEYS]!;
    const stride = u32[hw + HASH_W_KEY_STRIDE]!;
    const len = u32[hw + HASH_W_KEY_LEN]!;
    for (let j = 0; j < HASH_BUCKET_ENTRIES; j++) {
      if (u16[(b >>> 1) + j] !== sig) continue;
      const idx = u32[((b + HB_KEY_IDX) >>> 2) + j]!;
      if (idx === 0) continue;
      const s = keys + idx * stride;
      let eq = true;
      for (let i = 0; i < len && eq; i++) eq = u8[s + i] === u8[k + i];
      if (eq) return idx - 1;
    }
    return -1;
  };
  return (h: number, k: number, at: number): number => {
    const hw = h >>> 2;
    const mask = u32[hw + HASH_W_BUCKET_MASK]!;
    const buckets = u32[hw + HASH_W_BUCKETS]!;
    const hash = u32[at]!;
    const sig = hash >>> 16;
    const prim = hash & mask;
    const pos = inBucket(hw, buckets + prim * HASH_BUCKET_SIZE, sig, k);
    return pos >= 0 ? pos : inBucket(hw, buckets + ((prim ^ sig) & mask) * HASH_BUCKET_SIZE, sig, k);
  };
}

/** The twins: the kernels' search, a signature at a time. */
export function hashTwin(heap: Heap): HashOps {
  const { u8, u32, i32 } = heap;
  const find = hashFinder(heap);
  return {
    lookupBulk(h, keys, positions, n) {
      const hw = h >>> 2;
      const len = u32[hw + HASH_W_KEY_LEN]!;
      const init = u32[hw + HASH_W_INIT_VAL]!;
      const p = positions >>> 2;
      // In the kernel's two passes: the hashes into positions, then the searches.
      for (let i = 0; i < n; i++) hashKeyTo(u8, keys + i * len, len, init, u32, p + i);
      for (let i = 0; i < n; i++) i32[p + i] = find(h, keys + i * len, p + i);
      return n;
    },
    lookupBulkWithHash(h, keys, hashes, positions, n) {
      const hw = h >>> 2;
      const len = u32[hw + HASH_W_KEY_LEN]!;
      for (let i = 0; i < n; i++) i32[(positions >>> 2) + i] = find(h, keys + i * len, (hashes >>> 2) + i);
      return n;
    },
  };
}
