// The exact-match hash table's lookups (twins: hash.twin.ts, same
// signatures). `h` is the table header's heap offset (hash.record.ts), `keys`
// the keys to look up, packed at keyLen bytes each, `positions` an i32 per key
// (the key's position, or -1). A bucket's 8 signatures are compared in one
// SIMD compare, the key only where one matches.
import { HASH_BUCKETS, HASH_BUCKET_SIZE, HASH_BUCKET_MASK, HASH_INIT_VAL, HASH_KEYS, HASH_KEY_LEN, HASH_KEY_STRIDE, HB_KEY_IDX } from './hash-layout.as';

/**
 * The table's hash of the `len` bytes at `p` (hashKey in hash.twin.ts):
 * xxHash64's round over little-endian 8-byte words (the last one
 * zero-padded), seeded with `init ^ len`, then its avalanche, the low 32
 * bits kept. 8 bytes a step, where a 32-bit mix took 4: an IPv6 5-tuple's
 * 48 bytes hash in 6 rounds (l3fwd's EM spent most of its time in 12).
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function hashKeyAt(p: u32, len: u32, init: u32): u32 {
  let h: u64 = <u64>(init ^ len) + P5;
  let i: u32 = 0;
  for (; i + 8 <= len; i += 8) h = round64(h, load<u64>(p + i));
  if (i < len) {
    let w: u64 = 0;
    for (let s: u64 = 0; i < len; i++, s += 8) w |= <u64>load<u8>(p + i) << s;
    h = round64(h, w);
  }
  return avalanche(h);
}

/** hashKeyAt of a 16-byte key given as its two little-endian 8-byte words (the same hash): a key in a register needs no trip through memory. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function hashKey16(w0: u64, w1: u64, init: u32): u32 {
  return avalanche(round64(round64(<u64>(init ^ 16) + P5, w0), w1));
}

// xxHash64's primes.
const P1: u64 = 0x9e3779b185ebca87;
const P2: u64 = 0xc2b2ae3d27d4eb4f;
const P3: u64 = 0x165667b19e3779f9;
const P5: u64 = 0x27d4eb2f165667c5;

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function round64(h: u64, w: u64): u64 {
  return rotl<u64>(h + w * P2, 31) * P1;
}

/** xxHash64's avalanche: every bit of `h` moves every bit of the hash. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function avalanche(h: u64): u32 {
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return <u32>(h ^ (h >> 32));
}

/** The `len` bytes at `a` and at `b` are equal. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function keyEq(a: u32, b: u32, len: u32): bool {
  let i: u32 = 0;
  for (; i + 8 <= len; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  for (; i < len; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
  return true;
}

/** The position of the key at `k` in bucket `b` (short signature `sig`), or -1. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function inBucket(h: u32, b: u32, sig: u32, k: u32): i32 {
  let m = i16x8.bitmask(i16x8.eq(v128.load(b), i16x8.splat(<i16>sig)));
  while (m != 0) {
    const j = ctz<u32>(m);
    m &= m - 1;
    const idx = load<u32>(b + HB_KEY_IDX + (j << 2));
    if (idx != 0 && keyEq(load<u32>(h, HASH_KEYS) + idx * load<u32>(h, HASH_KEY_STRIDE), k, load<u32>(h, HASH_KEY_LEN))) return <i32>idx - 1;
  }
  return -1;
}

/** rte_hash_lookup_with_hash for the key at `k` with hash `hash`: its position, or -1. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function hashFind(h: u32, k: u32, hash: u32): i32 {
  const mask = load<u32>(h, HASH_BUCKET_MASK);
  const buckets = load<u32>(h, HASH_BUCKETS);
  const sig = hash >>> 16;
  const prim = hash & mask;
  const pos = inBucket(h, buckets + prim * HASH_BUCKET_SIZE, sig, k);
  if (pos >= 0) return pos;
  return inBucket(h, buckets + ((prim ^ sig) & mask) * HASH_BUCKET_SIZE, sig, k);
}

/** The u32 data of the key at position `pos` (Hash.data). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function hashData(h: u32, pos: i32): u32 {
  return load<u32>(load<u32>(h, HASH_KEYS) + <u32>(pos + 1) * load<u32>(h, HASH_KEY_STRIDE) + ((load<u32>(h, HASH_KEY_LEN) + 3) & ~3));
}

/**
 * rte_hash_lookup_bulk: each of the `n` keys at `keys` hashed and looked up
 * into `positions`. Returns n. In two passes, as DPDK's bulk lookup is in
 * stages: first every key's hash (into `positions`, as scratch), then every
 * search. Wasm has no prefetch; a search loop whose iterations depend on no
 * earlier one lets the CPU have several keys' bucket and key loads in
 * flight at once, where hashing in the same loop kept one or two.
 */
export function hashLookupBulk(h: u32, keys: u32, positions: u32, n: u32): u32 {
  const len = load<u32>(h, HASH_KEY_LEN);
  const init = load<u32>(h, HASH_INIT_VAL);
  for (let i: u32 = 0; i < n; i++) {
    const k = keys + i * len;
    store<u32>(positions + (i << 2), hashKeyAt(k, len, init));
  }
  for (let i: u32 = 0; i < n; i++) {
    const p = positions + (i << 2);
    store<i32>(p, hashFind(h, keys + i * len, load<u32>(p)));
  }
  return n;
}

/** rte_hash_lookup_with_hash_bulk: as hashLookupBulk, with each key's hash given in the u32 at `hashes`. Returns n. */
export function hashLookupBulkWithHash(h: u32, keys: u32, hashes: u32, positions: u32, n: u32): u32 {
  const len = load<u32>(h, HASH_KEY_LEN);
  for (let i: u32 = 0; i < n; i++) store<i32>(positions + (i << 2), hashFind(h, keys + i * len, load<u32>(hashes + (i << 2))));
  return n;
}
