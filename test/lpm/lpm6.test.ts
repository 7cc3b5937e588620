/**
 * The IPv6 LPM table (src/lpm/lpm6.ts) against a plain reference (rules
 * per depth, searched from /128 down): random prefixes of every depth
 * clustered so they share groups, random lookups, deletes and re-adds, on
 * both datapaths with the heaps compared byte for byte; every group
 * recycled when the rules are gone; the edges and the typed errors.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { ArgError, NoSpaceError } from '../../src/errors.js';
import { Lpm6, lpm6Footprint, type Lpm6Config } from '../../src/lpm/lpm6.js';
import { firstHeapDifference } from '../helpers.js';

function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
}

function maskOf(ip: Uint8Array, d: number): string {
  let s = '';
  for (let b = 0; b < 16; b++) s += (ip[b]! & ((0xff00 >> Math.max(0, Math.min(8, d - 8 * b))) & 0xff)).toString(16).padStart(2, '0');
  return s;
}

class RefLpm6 {
  readonly byDepth = Array.from({ length: 129 }, () => new Map<string, number>());
  lookup(ip: Uint8Array): number {
    for (let d = 128; d >= 1; d--) {
      const h = this.byDepth[d]!.get(maskOf(ip, d));
      if (h !== undefined) return h;
    }
    return -1;
  }
}

function table(datapath: 'wasm' | 'ts', config: Lpm6Config): Lpm6 {
  const heap = Heap.create({ size: lpm6Footprint(config) + (4 << 20), datapath });
  void heap.lcore;
  return Lpm6.create(heap, 'test', config);
}

const v6 = (...bytes: number[]) => Uint8Array.from({ length: 16 }, (_, i) => bytes[i] ?? 0);

describe('lpm6 (rte_lpm6)', () => {
  it('agrees with the reference on 2000 clustered random prefixes of every depth and 4 x 10^4 lookups, before and after deletes and re-adds; kernel and twin heaps alike; every group recycled at the end', () => {
    const config = { maxRules: 5000, numberTbl8s: 1 << 14 };
    const tables = [table('wasm', config), table('ts', config)];
    const next = rng(0x6);
    const bases = Array.from({ length: 8 }, () => Uint8Array.from({ length: 16 }, () => next() & 0xff));
    const ref = new RefLpm6();
    const rules: [Uint8Array, number][] = [];
    const addr = () => {
      const a = Uint8Array.from(bases[next() % bases.length]!);
      for (let b = next() % 16; b < 16; b++) a[b] = next() & 0xff;
      return a;
    };
    while (rules.length < 2000) {
      const ip = addr();
      const d = 1 + (next() % 128);
      const k = maskOf(ip, d);
      if (ref.byDepth[d]!.has(k)) continue;
      const hop = next() & 0x1fffff;
      ref.byDepth[d]!.set(k, hop);
      rules.push([ip, d]);
      for (const t of tables) t.add(ip, d, hop);
    }
    const phase = (n: number) => {
      const ips = tables.map((t) => new Uint8Array(t.heap.buffer, t.heap.reserve(16 * n), 16 * n));
      const hops = tables.map((t) => new Int32Array(t.heap.buffer, t.heap.reserve(4 * n), n));
      for (let i = 0; i < n; i++) {
        const a = i & 1 ? addr() : Uint8Array.from({ length: 16 }, () => next() & 0xff);
        for (const x of ips) x.set(a, 16 * i);
      }
      tables.forEach((t, k) => assert.equal(t.lookupBulk(ips[k]!, hops[k]!, n), n));
      for (let i = 0; i < n; i++) {
        const want = ref.lookup(ips[0]!.subarray(16 * i, 16 * i + 16));
        if (hops[0]![i] !== want || hops[1]![i] !== want) assert.fail(`lookup ${i}: wasm ${hops[0]![i]}, ts ${hops[1]![i]}, reference ${want}`);
      }
      assert.equal(tables[0]!.lookup(ips[0]!.subarray(0, 16)), hops[0]![0]);
    };
    phase(40_000);
    const gone = rules.filter(() => next() % 3 === 0);
    for (const [ip, d] of gone) {
      ref.byDepth[d]!.delete(maskOf(ip, d));
      for (const t of tables) t.delete(ip, d);
    }
    for (const [ip, d] of gone.slice(0, gone.length >> 1)) {
      const hop = next() & 0xffff;
      ref.byDepth[d]!.set(maskOf(ip, d), hop);
      for (const t of tables) t.add(ip, d, hop);
    }
    phase(20_000);
    const [w, t] = [tables[0]!.heap, tables[1]!.heap];
    if (!Buffer.from(w.u8.buffer).equals(Buffer.from(t.u8.buffer))) assert.fail(`kernel and twin heaps differ first at byte ${firstHeapDifference(w, t)}`);
    const used = tables[0]!.tbl8Used;
    assert.ok(used > 0);
    for (const tb of tables) {
      for (const [ip, d] of rules) if (ref.byDepth[d]!.has(maskOf(ip, d))) tb.delete(ip, d);
      assert.equal(tb.rulesUsed, 0);
      assert.equal(tb.tbl8Used, 0, 'every tbl8 group recycled');
      assert.equal(tb.lookup(rules[0]![0]), -1);
    }
  });

  it('handles the edges: /1, /24, /25, /128 on one path, falling back on delete, folding groups', () => {
    const t = table('ts', { maxRules: 16, numberTbl8s: 16 });
    const a = v6(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
    t.add(v6(0x00), 1, 1);
    t.add(a, 24, 2);
    t.add(a, 25, 3);
    t.add(a, 128, 4);
    assert.equal(t.tbl8Used, 13, 'a /128 takes a group per byte past the third');
    assert.deepEqual([t.lookup(a), t.lookup(v6(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)), t.lookup(v6(0x20, 0x01, 0x0d, 0x10)), t.lookup(v6(0x20, 0x01, 0x0c)), t.lookup(v6(0x80))], [4, 3, 2, 1, -1]);
    t.delete(a, 128);
    assert.equal(t.tbl8Used, 1, 'the /128\'s groups fold away; the /25\'s stays');
    assert.equal(t.lookup(a), 3);
    t.delete(a, 25);
    assert.equal(t.tbl8Used, 0);
    assert.equal(t.lookup(a), 2);
    t.add(a, 24, 5);
    assert.equal(t.lookup(a), 5);
    assert.equal(t.rulesUsed, 2);
  });

  it('refuses bad depths, next hops and absent rules (ArgError), full rules and too few groups (NoSpaceError), changing nothing', () => {
    const t = table('wasm', { maxRules: 2, numberTbl8s: 4 });
    const a = v6(0x20, 0x01);
    assert.throws(() => t.add(a, 0, 1), (e: Error) => e instanceof ArgError && /depth 0/.test(e.message));
    assert.throws(() => t.add(a, 129, 1), (e: Error) => e instanceof ArgError && /depth 129/.test(e.message));
    assert.throws(() => t.add(a, 64, 1 << 21), (e: Error) => e instanceof ArgError && /next hop/.test(e.message));
    assert.throws(() => t.add(new Uint8Array(4), 8, 1), (e: Error) => e instanceof ArgError && /4 bytes/.test(e.message));
    assert.throws(() => t.delete(a, 16), (e: Error) => e instanceof ArgError && /no rule/.test(e.message));
    assert.throws(() => t.add(a, 128, 1), (e: Error) => e instanceof NoSpaceError && /needs 13 tbl8 groups, 4 free/.test(e.message));
    assert.equal(t.tbl8Used, 0);
    assert.equal(t.lookup(a), -1);
    t.add(a, 56, 1);
    t.add(a, 16, 2);
    assert.throws(() => t.add(a, 8, 3), (e: Error) => e instanceof NoSpaceError && /rules table full/.test(e.message));
    assert.equal(t.lookup(a), 1);
  });
});
