/**
 * The exact-match hash table (src/hash/hash.ts): a million keys in a table
 * of 2^20, every one found at the position its add returned, absent keys
 * not found, deletes and re-adds; forced signature collisions and full
 * buckets through the with-hash entry points; the bulk lookup kernels
 * (hash.as.ts) against their twins, heaps compared byte for byte.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { ArgError, NoSpaceError } from '../../src/errors.js';
import { Hash, hashFootprint, type HashConfig } from '../../src/hash/hash.js';
import { hashKey, hashKeyTo } from '../../src/hash/hash.twin.js';
import { bytesPerCall, firstHeapDifference } from '../helpers.js';

function table(datapath: 'wasm' | 'ts', config: HashConfig, extra = 1 << 20): Hash {
  const heap = Heap.create({ size: hashFootprint(config) + extra, datapath });
  void heap.lcore; // reserved now on both heaps, so their layouts match
  return Hash.create(heap, 'test', config);
}

/** Key i of 16 bytes: i, then words that differ from key to key. */
function keyOf(i: number, out: Uint8Array, at = 0): Uint8Array {
  const w = new DataView(out.buffer, out.byteOffset + at, 16);
  w.setUint32(0, i, true);
  w.setUint32(4, Math.imul(i, 0x9e3779b1), true);
  w.setUint32(8, i ^ 0x5a5a5a5a, true);
  w.setUint32(12, 0x01020304, true);
  return out;
}

/** Looks up keys lo..hi-1 in bulk on `t`: returns every position. */
function bulkPositions(t: Hash, lo: number, hi: number): Int32Array {
  const out = new Int32Array(hi - lo);
  const keys = new Uint8Array(t.heap.buffer, t.heap.reserve(16 * 1024), 16 * 1024);
  const pos = new Int32Array(t.heap.buffer, t.heap.reserve(4 * 1024), 1024);
  for (let off = lo; off < hi; off += 1024) {
    const n = Math.min(1024, hi - off);
    for (let i = 0; i < n; i++) keyOf(off + i, keys, 16 * i);
    assert.equal(t.lookupBulk(keys, pos, n), n);
    out.set(pos.subarray(0, n), off - lo);
  }
  return out;
}

describe('hash (rte_hash, cuckoo)', () => {
  it('hashes in TypeScript allocating nothing (the twin and the control path run its 64-bit steps on halves)', async () => {
    const u8 = Uint8Array.from({ length: 48 }, (_, i) => i * 37);
    const out = new Uint32Array(1);
    const bytes = await bytesPerCall((n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        hashKeyTo(u8, 0, 48, i, out, 0);
        acc ^= out[0]! & 0xffff;
      }
      return acc;
    }, 2);
    assert.ok(bytes < 2, `hashKeyTo: ${bytes} bytes a call`);
    // And the twin's bulk lookup, hashes and searches.
    const t = table('ts', { entries: 1024, keyLen: 16 });
    for (let i = 0; i < 512; i++) t.addKey(keyOf(i, new Uint8Array(16)), i);
    const keys = new Uint8Array(t.heap.buffer, t.heap.reserve(16 * 32), 16 * 32);
    const pos = new Int32Array(t.heap.buffer, t.heap.reserve(4 * 32), 32);
    for (let i = 0; i < 32; i++) keyOf(i * 31, keys, 16 * i);
    const lookup = await bytesPerCall((n) => {
      let acc = 0;
      for (let i = 0; i < n; i += 32) acc += t.lookupBulk(keys, pos, 32);
      return acc;
    }, 2 * 32);
    assert.ok(lookup < 2 * 32, `lookupBulk: ${lookup / 32} bytes a key`);
  });

  it('hashes as the kernel does: every key length 1..64, random bytes and seeds, returned or stored', () => {
    const heap = Heap.create({ size: 1 << 20, datapath: 'wasm' });
    const kernel = heap.kernels!.fn('hashKeyAt');
    const at = heap.reserve(64);
    let x = 12345;
    const rand = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x);
    for (let round = 0; round < 200; round++) {
      for (let i = 0; i < 64; i++) heap.u8[at + i] = rand() >>> 24;
      const init = rand();
      for (let len = 1; len <= 64; len++) assert.equal(hashKey(heap.u8, at, len, init), kernel(at, len, init) >>> 0, `len ${len} init ${init}`);
      const out = new Uint32Array(1);
      hashKeyTo(heap.u8, at, 16, init, out, 0);
      assert.equal(out[0], hashKey(heap.u8, at, 16, init));
    }
    // The bytes past the key are not hashed, and every byte of it is.
    heap.u8.fill(0, at, at + 64);
    const zero = hashKey(heap.u8, at, 13, 7);
    heap.u8[at + 13] = 1;
    assert.equal(hashKey(heap.u8, at, 13, 7), zero);
    for (let i = 0; i < 13; i++) {
      heap.u8[at + i] ^= 0x80;
      assert.notEqual(hashKey(heap.u8, at, 13, 7), zero, `byte ${i}`);
      heap.u8[at + i] ^= 0x80;
    }
  });

  it('holds 10^6 keys in a 2^20 table (moving keys to make room) and finds each at its position, absent keys nowhere, through kernel and twin alike', () => {
    const N = 1_000_000;
    const config = { entries: 1 << 20, keyLen: 16 };
    const tables = [table('wasm', config, 8 << 20), table('ts', config, 8 << 20)];
    const key = new Uint8Array(16);
    const where = new Int32Array(N);
    for (const t of tables) for (let i = 0; i < N; i++) where[i] = t.addKey(keyOf(i, key), i);
    const [w, ts] = tables as [Hash, Hash];
    assert.equal(w.count, N);
    assert.ok(w.moves > 0, 'a table this full needed cuckoo moves');
    assert.equal(new Set(where).size, N, 'positions are distinct');
    // Every key where its add said; the 2^19 keys past N are absent.
    for (const t of tables) {
      const got = bulkPositions(t, 0, N);
      for (let i = 0; i < N; i++) if (got[i] !== where[i]) assert.fail(`${t.heap.datapath}: key ${i} at ${got[i]}, added at ${where[i]}`);
      const absent = bulkPositions(t, N, N + 100_000);
      assert.ok(absent.every((p) => p === -1), `${t.heap.datapath}: absent keys not found`);
    }
    assert.equal(w.lookupData(keyOf(123_456, key)), 123_456);
    // Delete every third key; their positions come back to later adds.
    for (const t of tables) for (let i = 0; i < N; i += 3) assert.equal(t.delKey(keyOf(i, key)), where[i]);
    for (const t of tables) {
      const got = bulkPositions(t, 0, N);
      for (let i = 0; i < N; i++) if (got[i] !== (i % 3 === 0 ? -1 : where[i])) assert.fail(`${t.heap.datapath}: after deletes, key ${i} at ${got[i]}`);
      assert.equal(t.delKey(keyOf(0, key)), -1, 'a deleted key is not deleted twice');
      for (let i = 0; i < N; i += 3) where[i] = t.addKey(keyOf(N + i, key), i);
      assert.equal(t.count, N);
    }
    for (const t of tables) assert.deepEqual([...bulkPositions(t, N, N + 30)].filter((_, i) => i % 3 === 0), [...where.subarray(0, 30)].filter((_, i) => i % 3 === 0));
    if (!Buffer.from(w.heap.u8.buffer).equals(Buffer.from(ts.heap.u8.buffer))) assert.fail(`kernel and twin heaps differ first at byte ${firstHeapDifference(w.heap, ts.heap)}`);
  });

  it('tells apart keys with one signature, fills two buckets of colliding keys, and refuses the 17th with NoSpaceError', () => {
    for (const dp of ['wasm', 'ts'] as const) {
      const t = table(dp, { entries: 64, keyLen: 13 });
      const key = new Uint8Array(16);
      const hash = 0xabcd0003; // every key: same buckets, same signature
      const pos: number[] = [];
      for (let i = 0; i < 16; i++) pos.push(t.addKeyWithHash(keyOf(i, key), hash, 100 + i));
      assert.throws(() => t.addKeyWithHash(keyOf(16, key), hash), (e: Error) => e instanceof NoSpaceError && /no room/.test(e.message));
      assert.equal(t.count, 16);
      const keys = new Uint8Array(t.heap.buffer, t.heap.reserve(13 * 17), 13 * 17);
      const hashes = new Uint32Array(t.heap.buffer, t.heap.reserve(4 * 17), 17).fill(hash);
      const out = new Int32Array(t.heap.buffer, t.heap.reserve(4 * 17), 17);
      for (let i = 0; i < 17; i++) keys.set(keyOf(i, key).subarray(0, 13), 13 * i);
      t.lookupBulkWithHash(keys, hashes, out, 17);
      assert.deepEqual([...out], [...pos, -1], dp);
      assert.equal(t.data(pos[5]!), 105);
      // Same signature, other buckets: found by its own hash only.
      hashes[0] = 0xabcd0004;
      t.lookupBulkWithHash(keys, hashes, out, 1);
      assert.equal(out[0], -1);
    }
  });

  it('moves keys to their other bucket when both of a new key\'s buckets are full', () => {
    const t = table('ts', { entries: 64, keyLen: 4 });
    const key = new Uint8Array(16);
    // Keys 0..7 fill bucket 1 (signature 1: other bucket 0), keys 8..15 bucket 0 (signature 2: other bucket 2).
    for (let i = 0; i < 8; i++) t.addKeyWithHash(keyOf(i, key), 0x00010001);
    for (let i = 8; i < 16; i++) t.addKeyWithHash(keyOf(i, key), 0x00020000);
    assert.equal(t.moves, 0);
    // Key 16's buckets are 1 and 0, both full: one of keys 8..15 moves on to bucket 2.
    t.addKeyWithHash(keyOf(16, key), 0x00010001);
    assert.equal(t.moves, 1);
    const keys = new Uint8Array(t.heap.buffer, t.heap.reserve(4 * 17), 4 * 17);
    const hashes = new Uint32Array(t.heap.buffer, t.heap.reserve(4 * 17), 17);
    const out = new Int32Array(t.heap.buffer, t.heap.reserve(4 * 17), 17);
    for (let i = 0; i < 17; i++) {
      keys.set(keyOf(i, key).subarray(0, 4), 4 * i);
      hashes[i] = i < 8 || i === 16 ? 0x00010001 : 0x00020000;
    }
    t.lookupBulkWithHash(keys, hashes, out, 17);
    assert.deepEqual([...out], Array.from({ length: 17 }, (_, i) => i), 'every key found at its position after the moves');
  });

  it('refuses bad configs and short keys with one ArgError, and a full table with NoSpaceError', () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.throws(() => Hash.create(heap, 'x', { entries: 64, keyLen: 65 }), (e: Error) => e instanceof ArgError && /key_len 65/.test(e.message));
    assert.throws(() => Hash.create(heap, 'x', { entries: 4, keyLen: 4 }), (e: Error) => e instanceof ArgError && /entries 4/.test(e.message));
    const t = Hash.create(heap, 'small', { entries: 8, keyLen: 4 });
    assert.throws(() => t.addKey(new Uint8Array(3)), (e: Error) => e instanceof ArgError && /key of 3 bytes/.test(e.message));
    for (let i = 0; i < 8; i++) t.addKeyWithHash(Uint8Array.of(i, 0, 0, 0), i << 16);
    assert.throws(() => t.addKey(Uint8Array.of(9, 0, 0, 0)), (e: Error) => e instanceof NoSpaceError && /table full/.test(e.message));
    assert.equal(t.addKeyWithHash(Uint8Array.of(3, 0, 0, 0), 3 << 16, 7), 3, 'a key already there takes new data, no new entry');
    assert.equal(t.data(3), 7);
  });
});
