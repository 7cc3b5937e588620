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

const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));
const mixStep = (h: number, w: number): number => (Math.imul(rotl(h ^ Math.imul(rotl(Math.imul(w, 0xcc9e2d51), 15), 0x1b873593), 13), 5) + 0xe6546b64) | 0;

/**
 * The table's hash of `len` bytes of `u8` from `p` (hashKeyAt in hash.as.ts):
 * murmur3's 32-bit mix over little-endian 4-byte words, the last one
 * zero-padded, seeded with `init ^ len`. Not DPDK's CRC32 (wasm has no CRC
 * instruction).
 * @returns the hash, a u32
 */
export function hashKey(u8: Uint8Array, p: number, len: number, init: number): number {
  let h = (init ^ len) | 0;
  let i = 0;
  for (; i + 4 <= len; i += 4) h = mixStep(h, u8[p + i]! | (u8[p + i + 1]! << 8) | (u8[p + i + 2]! << 16) | (u8[p + i + 3]! << 24));
  if (i < len) {
    let w = 0;
    for (let s = 0; i < len; i++, s += 8) w |= u8[p + i]! << s;
    h = mixStep(h, w);
  }
  return fmix(h);
}

/** hashKey of a 16-byte key given as its four little-endian words (hashKey16 in hash.as.ts). @returns the hash, a u32 */
export function hashKey16(w0: number, w1: number, w2: number, w3: number, init: number): number {
  return fmix(mixStep(mixStep(mixStep(mixStep((init ^ 16) | 0, w0), w1), w2), w3));
}

/** murmur3's finalizer. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * hashFind's twin (hash.as.ts) over `heap`: `find(h, k, hash)` is the
 * position of the key at heap offset `k` with hash `hash` in the table at `h`,
 * or -1. Made once per table user; the search allocates nothing.
 */
export function hashFinder(heap: Heap): (h: number, k: number, hash: number) => number {
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
  return (h: number, k: number, hash: number): number => {
    const hw = h >>> 2;
    const mask = u32[hw + HASH_W_BUCKET_MASK]!;
    const buckets = u32[hw + HASH_W_BUCKETS]!;
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
      for (let i = 0; i < n; i++) i32[(positions >>> 2) + i] = find(h, keys + i * len, hashKey(u8, keys + i * len, len, init));
      return n;
    },
    lookupBulkWithHash(h, keys, hashes, positions, n) {
      const hw = h >>> 2;
      const len = u32[hw + HASH_W_KEY_LEN]!;
      for (let i = 0; i < n; i++) i32[(positions >>> 2) + i] = find(h, keys + i * len, u32[(hashes >>> 2) + i]!);
      return n;
    },
  };
}
