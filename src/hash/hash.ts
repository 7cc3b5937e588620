/**
 * rte_hash: an exact-match table of fixed-size keys (1..64 bytes) in the
 * shared heap, cuckoo hashing with 8-entry buckets and 16-bit short
 * signatures (hash.record.ts says what lives where). Each key has two
 * buckets; an add that finds both full moves keys to their other bucket
 * (breadth-first search for a free entry, at most HASH_BFS_MAX buckets), so
 * tables fill to ~95 % before an add fails. Lookups return a key's position
 * (0..entries-1), stable while the key stays, for the caller's arrays (as
 * l3fwd's EM mode indexes its ports by it); each key also carries a u32 of
 * data (rte_hash_add_key_data).
 *
 * Concurrency: one thread adds and deletes; any thread with the heap looks
 * up. A new key's bytes and data are written before its signature and index,
 * so a reader never sees half a key. A reader that runs while an add moves
 * keys between buckets may miss a key being moved (DPDK's readers retry on
 * a change counter; here the caller quiesces readers around adds to a
 * nearly full table, or accepts a transient miss). A deleted key's slot is
 * reused by a later add.
 */
import type { Heap } from '../eal/heap.js';
import { ArgError, NoSpaceError } from '../errors.js';
import {
  HASH_BFS_MAX,
  HASH_BUCKET_ENTRIES,
  HASH_BUCKET_SIZE,
  HASH_KEY_LEN_MAX,
  HASH_SIZE,
  HASH_W_BUCKET_MASK,
  HASH_W_BUCKETS,
  HASH_W_ENTRIES,
  HASH_W_FREE,
  HASH_W_FREE_TOP,
  HASH_W_INIT_VAL,
  HASH_W_KEY_LEN,
  HASH_W_KEY_STRIDE,
  HASH_W_KEYS,
  HASH_W_MOVES,
  HB_KEY_IDX,
} from './hash-layout.js';
import { hashKey, hashOps, type HashOps } from './hash.twin.js';

/** rte_hash_parameters. */
export interface HashConfig {
  /** Keys the table holds, at least 8. */
  entries: number;
  /** Bytes per key, 1..64. */
  keyLen: number;
  /** The hash function's seed (hash_func_init_val); default 0. */
  initVal?: number;
}

/** Heap bytes a table of `config` takes. */
export function hashFootprint(config: HashConfig): number {
  return HASH_SIZE + bucketsFor(config.entries) * HASH_BUCKET_SIZE + (config.entries + 1) * strideFor(config.keyLen) + 4 * config.entries;
}

/** rte_hash's sizing: the entries rounded up to a power of two, 8 to a bucket. */
function bucketsFor(entries: number): number {
  return Math.max(1, 2 ** Math.ceil(Math.log2(entries)) / HASH_BUCKET_ENTRIES);
}

/** A key slot: the key padded to 4, its u32 data, rounded up to 16. */
function strideFor(keyLen: number): number {
  return (((keyLen + 3) & ~3) + 4 + 15) & ~15;
}

export class Hash {
  private readonly u8: Uint8Array;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly hw: number;
  private readonly ops: HashOps;
  readonly keyLen: number;
  readonly entries: number;
  private readonly stride: number;
  private readonly dataAt: number;

  private constructor(
    readonly heap: Heap,
    /** Heap offset of the header: what another thread passes to `Hash.attach`. */
    readonly offset: number,
    readonly name: string,
  ) {
    this.u8 = heap.u8;
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.hw = offset >>> 2;
    this.keyLen = this.u32[this.hw + HASH_W_KEY_LEN]!;
    this.entries = this.u32[this.hw + HASH_W_ENTRIES]!;
    this.stride = this.u32[this.hw + HASH_W_KEY_STRIDE]!;
    this.dataAt = (this.keyLen + 3) & ~3;
    this.ops = hashOps(heap);
  }

  /**
   * rte_hash_create: an empty table in the heap (control plane).
   * @throws ArgError for a bad config, NoMemError when the heap cannot hold it (hashFootprint).
   */
  static create(heap: Heap, name: string, config: HashConfig): Hash {
    const { entries, keyLen } = config;
    if (!Number.isInteger(entries) || entries < HASH_BUCKET_ENTRIES || entries > 1 << 26) throw new ArgError(`hash ${name}: entries ${entries}: must be an integer in [${HASH_BUCKET_ENTRIES}, ${1 << 26}]`);
    if (!Number.isInteger(keyLen) || keyLen < 1 || keyLen > HASH_KEY_LEN_MAX) throw new ArgError(`hash ${name}: key_len ${keyLen}: must be an integer in [1, ${HASH_KEY_LEN_MAX}]`);
    const nb = bucketsFor(entries);
    const header = heap.reserve(HASH_SIZE, 64, `hash ${name}`);
    const w = header >>> 2;
    const u32 = heap.u32;
    u32[w + HASH_W_BUCKETS] = heap.reserve(nb * HASH_BUCKET_SIZE, 64, `hash ${name} buckets`);
    u32[w + HASH_W_KEYS] = heap.reserve((entries + 1) * strideFor(keyLen), 64, `hash ${name} keys`);
    const free = heap.reserve(4 * entries, 64, `hash ${name} free slots`);
    u32[w + HASH_W_FREE] = free;
    // Popped from the top: key index 1 first.
    for (let i = 0; i < entries; i++) u32[(free >>> 2) + i] = entries - i;
    u32[w + HASH_W_FREE_TOP] = entries;
    u32[w + HASH_W_ENTRIES] = entries;
    u32[w + HASH_W_KEY_LEN] = keyLen;
    u32[w + HASH_W_KEY_STRIDE] = strideFor(keyLen);
    u32[w + HASH_W_BUCKET_MASK] = nb - 1;
    u32[w + HASH_W_INIT_VAL] = (config.initVal ?? 0) >>> 0;
    return new Hash(heap, header, name);
  }

  /** The table whose header is at `offset` of `heap` (another thread's view). */
  static attach(heap: Heap, offset: number, name = 'hash'): Hash {
    return new Hash(heap, offset, name);
  }

  /** rte_hash_count: keys in the table. */
  get count(): number {
    return this.entries - this.u32[this.hw + HASH_W_FREE_TOP]!;
  }

  /** Keys moved to their other bucket to make room, since the table was made. */
  get moves(): number {
    return this.u32[this.hw + HASH_W_MOVES]!;
  }

  /** rte_hash_hash: the table's hash of `key` (its first keyLen bytes). @returns a u32 */
  hash(key: Uint8Array): number {
    this.checkKey(key, 'hash');
    return hashKey(key, 0, this.keyLen, this.u32[this.hw + HASH_W_INIT_VAL]!);
  }

  /**
   * rte_hash_add_key_data: adds `key` with `data`, or sets the data of a key
   * already there.
   * @returns the key's position
   * @throws NoSpaceError when the table is full or no room could be made in
   *   the key's two buckets: the table is then as before.
   */
  addKey(key: Uint8Array, data = 0): number {
    return this.addKeyWithHash(key, this.hash(key), data);
  }

  /** rte_hash_add_key_with_hash_data: addKey with the key's hash given. @returns the key's position */
  addKeyWithHash(key: Uint8Array, hash: number, data = 0): number {
    this.checkKey(key, 'add');
    const u32 = this.u32;
    const found = this.find(key, hash);
    if (found >= 0) {
      u32[(this.slot(found + 1) + this.dataAt) >>> 2] = data >>> 0;
      return found;
    }
    const top = u32[this.hw + HASH_W_FREE_TOP]!;
    if (top === 0) throw new NoSpaceError(`hash ${this.name}: add: table full (${this.entries} entries)`);
    const sig = hash >>> 16;
    const prim = hash & u32[this.hw + HASH_W_BUCKET_MASK]!;
    const sec = this.alt(prim, sig);
    let at = this.freeEntry(prim);
    if (at < 0) at = this.freeEntry(sec);
    if (at < 0) at = this.makeRoom(prim, sec);
    if (at < 0) throw new NoSpaceError(`hash ${this.name}: add: no room in the key's buckets ${prim} and ${sec}, nor by moving keys (${this.count} of ${this.entries} entries used)`);
    const idx = u32[(u32[this.hw + HASH_W_FREE]! >>> 2) + top - 1]!;
    u32[this.hw + HASH_W_FREE_TOP] = top - 1;
    // Key and data first: a reader that finds the index finds the whole key.
    const s = this.slot(idx);
    for (let i = 0; i < this.keyLen; i++) this.u8[s + i] = key[i]!;
    u32[(s + this.dataAt) >>> 2] = data >>> 0;
    this.setEntry(at, sig, idx);
    return idx - 1;
  }

  /**
   * rte_hash_del_key: removes `key`; its position may be reused by a later add.
   * @returns the position it had, or -1 (DPDK's -ENOENT) when it was not there
   */
  delKey(key: Uint8Array): number {
    return this.delKeyWithHash(key, this.hash(key));
  }

  /** rte_hash_del_key_with_hash. @returns the position the key had, or -1 */
  delKeyWithHash(key: Uint8Array, hash: number): number {
    this.checkKey(key, 'delete');
    const at = this.entryOf(key, hash);
    if (at < 0) return -1;
    const u32 = this.u32;
    const idx = this.entryIdx(at);
    this.setEntry(at, 0, 0);
    const top = u32[this.hw + HASH_W_FREE_TOP]!;
    u32[(u32[this.hw + HASH_W_FREE]! >>> 2) + top] = idx;
    u32[this.hw + HASH_W_FREE_TOP] = top + 1;
    return idx - 1;
  }

  /** rte_hash_lookup (TypeScript, one key). @returns the key's position, or -1 */
  lookup(key: Uint8Array): number {
    return this.find(key, this.hash(key));
  }

  /** rte_hash_lookup_data. @returns the key's data, or -1 when the key is not there */
  lookupData(key: Uint8Array): number {
    const pos = this.lookup(key);
    return pos < 0 ? -1 : this.data(pos);
  }

  /** The data of the key at `position` (rte_hash_get_key_with_position's data). */
  data(position: number): number {
    return this.u32[(this.slot(position + 1) + this.dataAt) >>> 2]!;
  }

  /**
   * rte_hash_lookup_bulk over heap memory: the first `n` keys of `keys`
   * (packed at keyLen bytes), each key's position into `positions` (-1 where
   * absent). One kernel call.
   * @returns n
   */
  lookupBulk(keys: Uint8Array, positions: Int32Array, n: number): number {
    return this.ops.lookupBulk(this.offset, keys.byteOffset, positions.byteOffset, n);
  }

  /** rte_hash_lookup_with_hash_bulk: lookupBulk with each key's hash in `hashes`. @returns n */
  lookupBulkWithHash(keys: Uint8Array, hashes: Uint32Array, positions: Int32Array, n: number): number {
    return this.ops.lookupBulkWithHash(this.offset, keys.byteOffset, hashes.byteOffset, positions.byteOffset, n);
  }

  private checkKey(key: Uint8Array, op: string): void {
    if (key.length < this.keyLen) throw new ArgError(`hash ${this.name}: ${op}: key of ${key.length} bytes, table keys are ${this.keyLen}`);
  }

  private slot(idx: number): number {
    return this.u32[this.hw + HASH_W_KEYS]! + idx * this.stride;
  }

  private alt(bucket: number, sig: number): number {
    return (bucket ^ sig) & this.u32[this.hw + HASH_W_BUCKET_MASK]!;
  }

  /** An entry's address: bucket * 8 + entry, as one number. */
  private bucketAt(bucket: number): number {
    return this.u32[this.hw + HASH_W_BUCKETS]! + bucket * HASH_BUCKET_SIZE;
  }

  private entrySig(at: number): number {
    return this.u16[(this.bucketAt(at >>> 3) >>> 1) + (at & 7)]!;
  }

  private entryIdx(at: number): number {
    return this.u32[((this.bucketAt(at >>> 3) + HB_KEY_IDX) >>> 2) + (at & 7)]!;
  }

  /** Index last: a reader that sees the index has the signature's key in place. */
  private setEntry(at: number, sig: number, idx: number): void {
    const b = this.bucketAt(at >>> 3);
    if (idx === 0) Atomics.store(this.u32, ((b + HB_KEY_IDX) >>> 2) + (at & 7), 0);
    this.u16[(b >>> 1) + (at & 7)] = sig;
    Atomics.store(this.u32, ((b + HB_KEY_IDX) >>> 2) + (at & 7), idx);
  }

  /** The first free entry of `bucket` (as bucket * 8 + entry), or -1. */
  private freeEntry(bucket: number): number {
    for (let j = 0; j < HASH_BUCKET_ENTRIES; j++) if (this.entryIdx(bucket * 8 + j) === 0) return bucket * 8 + j;
    return -1;
  }

  /** The entry holding `key` (bucket * 8 + entry), or -1. Allocates nothing: a lookup may run on a data path. */
  private entryOf(key: Uint8Array, hash: number): number {
    const sig = hash >>> 16;
    const prim = hash & this.u32[this.hw + HASH_W_BUCKET_MASK]!;
    const at = this.entryIn(prim, sig, key);
    return at >= 0 ? at : this.entryIn(this.alt(prim, sig), sig, key);
  }

  /** The entry of `bucket` holding `key` (signature `sig`), or -1. */
  private entryIn(bucket: number, sig: number, key: Uint8Array): number {
    for (let j = 0; j < HASH_BUCKET_ENTRIES; j++) {
      const at = bucket * 8 + j;
      const idx = this.entryIdx(at);
      if (idx !== 0 && this.entrySig(at) === sig && this.keyIs(idx, key)) return at;
    }
    return -1;
  }

  private find(key: Uint8Array, hash: number): number {
    const at = this.entryOf(key, hash);
    return at < 0 ? -1 : this.entryIdx(at) - 1;
  }

  private keyIs(idx: number, key: Uint8Array): boolean {
    const s = this.slot(idx);
    for (let i = 0; i < this.keyLen; i++) if (this.u8[s + i] !== key[i]) return false;
    return true;
  }

  /**
   * Cuckoo displacement: a breadth-first search from the two full buckets
   * for a key whose other bucket has a free entry, then each key on the path
   * moves one step (copied before it is cleared, so it is always in one of
   * its buckets). @returns the entry freed in `prim` or `sec`, or -1.
   */
  private makeRoom(prim: number, sec: number): number {
    // Node k: bucket[k], reached from node parent[k] by moving the key in its entry slot[k].
    const bucket = [prim, sec];
    const parent = [-1, -1];
    const slot = [-1, -1];
    for (let k = 0; k < bucket.length && bucket.length < HASH_BFS_MAX; k++) {
      for (let j = 0; j < HASH_BUCKET_ENTRIES; j++) {
        const at = bucket[k]! * 8 + j;
        const to = this.alt(bucket[k]!, this.entrySig(at));
        const free = this.freeEntry(to);
        if (free >= 0) return this.shift(bucket, parent, slot, k, at, free);
        bucket.push(to);
        parent.push(k);
        slot.push(j);
      }
    }
    return -1;
  }

  /** Moves the key at `at` (in node k's bucket) to `free`, then up the path to the root: returns the root's freed entry. */
  private shift(bucket: number[], parent: number[], slot: number[], k: number, at: number, free: number): number {
    for (;;) {
      this.setEntry(free, this.entrySig(at), this.entryIdx(at));
      this.setEntry(at, 0, 0);
      this.u32[this.hw + HASH_W_MOVES]!++;
      if (parent[k]! < 0) return at;
      free = at;
      at = bucket[parent[k]!]! * 8 + slot[k]!;
      k = parent[k]!;
    }
  }
}
