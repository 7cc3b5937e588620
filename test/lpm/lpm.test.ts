/**
 * The IPv4 LPM table (src/lpm/lpm.ts) against a plain reference: a map of
 * rules per depth, searched from /32 down to /1. Random tables of every
 * depth, random lookups, deletes and re-adds, on both datapaths (the lookup
 * kernels of lpm.as.ts and their twins), with the two heaps compared byte
 * for byte; then the edges: depths 1, 24, 25, 32, bad arguments, full rules
 * table, tbl8 exhaustion and group recycling.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { ArgError, NoSpaceError } from '../../src/errors.js';
import { Lpm, LPM_LOOKUP_SUCCESS, LPM_MAX_NEXT_HOP, lpmFootprint, type LpmConfig } from '../../src/lpm/lpm.js';
import { firstHeapDifference } from '../helpers.js';

/** Deterministic xorshift32, so a failure replays. */
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

const mask = (d: number): number => (d === 0 ? 0 : (0x80000000 >> (d - 1)) >>> 0);

/** The reference: rules per depth, longest first. */
class RefLpm {
  readonly byDepth = Array.from({ length: 33 }, () => new Map<number, number>());
  add(ip: number, d: number, hop: number): void {
    this.byDepth[d]!.set((ip & mask(d)) >>> 0, hop);
  }
  delete(ip: number, d: number): void {
    this.byDepth[d]!.delete((ip & mask(d)) >>> 0);
  }
  lookup(ip: number): number {
    for (let d = 32; d >= 1; d--) {
      const h = this.byDepth[d]!.get((ip & mask(d)) >>> 0);
      if (h !== undefined) return h;
    }
    return -1;
  }
}

/** A table on a heap of its own, sized for it. */
function table(datapath: 'wasm' | 'ts', config: LpmConfig): Lpm {
  const heap = Heap.create({ size: lpmFootprint(config) + (1 << 20), datapath });
  void heap.lcore; // reserved now on both heaps, so their layouts match
  return Lpm.create(heap, 'test', config);
}

/**
 * ~10^5 unique prefixes: every prefix of depths 1..12 half covered, ~4800 of
 * each deeper depth; the deep ones (> 24) share 16 Ki /24s so groups hold several.
 */
function randomPrefixes(next: () => number): [number, number, number][] {
  const seen = new Set<number>();
  const out: [number, number, number][] = [];
  const slash24s = Array.from({ length: 1 << 14 }, () => next() & 0xffffff00);
  for (let d = 1; d <= 32; d++) {
    const want = d <= 12 ? 1 << (d - 1) : 4800;
    let got = 0;
    while (got < want) {
      const ip = d > 24 ? (slash24s[next() & 0x3fff]! | (next() & 0xff)) >>> 0 : next();
      const m = (ip & mask(d)) >>> 0;
      if (seen.has(m * 64 + d)) continue;
      seen.add(m * 64 + d);
      out.push([ip, d, next() & LPM_MAX_NEXT_HOP]);
      got++;
    }
  }
  // Shuffle: adds of every depth interleave.
  for (let i = out.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Half random addresses, half inside random rules (host bits random). */
function randomAddresses(next: () => number, rules: [number, number, number][], n: number): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (i & 1) a[i] = next();
    else {
      const [ip, d] = rules[next() % rules.length]!;
      a[i] = ((ip & mask(d)) | (next() & ~mask(d))) >>> 0;
    }
  }
  return a;
}

/** Looks up every address through lookupBulk in bursts of 4096 and checks each against the reference. */
function checkBulk(lpm: Lpm, addrs: Uint32Array, expect: Int32Array): void {
  const ips = lpm.heap.burst(4096);
  const hops = lpm.heap.burst(4096);
  for (let off = 0; off < addrs.length; off += 4096) {
    const n = Math.min(4096, addrs.length - off);
    ips.set(addrs.subarray(off, off + n));
    assert.equal(lpm.lookupBulk(ips, hops, n), n);
    for (let i = 0; i < n; i++) {
      const want = expect[off + i]!;
      const got = hops[i]! & LPM_LOOKUP_SUCCESS ? hops[i]! & LPM_MAX_NEXT_HOP : -1;
      if (got !== want) assert.fail(`${lpm.heap.datapath}: ${addrs[off + i]!.toString(16)}: next hop ${got}, reference ${want}`);
    }
  }
}

describe('lpm (rte_lpm, DIR-24-8)', () => {
  it('agrees with a linear reference on 10^5 random prefixes and 10^6 lookups, before and after random deletes and re-adds; kernels and twins leave the same heap', () => {
    const config = { maxRules: 110_000, numberTbl8s: 1 << 15 };
    const tables = [table('wasm', config), table('ts', config)];
    const next = rng(0x1e3);
    const rules = randomPrefixes(next);
    const ref = new RefLpm();
    for (const [ip, d, hop] of rules) {
      ref.add(ip, d, hop);
      for (const t of tables) t.add(ip, d, hop);
    }
    assert.equal(tables[0]!.rulesUsed, rules.length);
    const phase = (n: number) => {
      const addrs = randomAddresses(next, rules, n);
      const expect = Int32Array.from(addrs, (a) => ref.lookup(a));
      for (const t of tables) checkBulk(t, addrs, expect);
      for (let i = 0; i < 1000; i++) assert.equal(tables[1]!.lookup(addrs[i]!), expect[i]);
    };
    phase(1_000_000);
    // Delete a third, then re-add half of those with new next hops.
    const gone: [number, number, number][] = [];
    for (const r of rules) {
      if (next() % 3 !== 0) continue;
      gone.push(r);
      ref.delete(r[0], r[1]);
      for (const t of tables) t.delete(r[0], r[1]);
    }
    for (const r of gone.slice(0, gone.length >> 1)) {
      const hop = next() & LPM_MAX_NEXT_HOP;
      ref.add(r[0], r[1], hop);
      for (const t of tables) t.add(r[0], r[1], hop);
    }
    phase(300_000);
    // Byte for byte (memcmp first: the heaps are ~100 MiB).
    const [w, t] = [tables[0]!.heap, tables[1]!.heap];
    if (!Buffer.from(w.u8.buffer).equals(Buffer.from(t.u8.buffer))) assert.fail(`kernel and twin heaps differ first at byte ${firstHeapDifference(w, t)}`);
    // Every rule gone: every group recycled, tbl24 empty again.
    for (const t of tables) {
      for (let d = 1; d <= 32; d++) for (const m of [...ref.byDepth[d]!.keys()]) t.delete(m, d);
      assert.equal(t.rulesUsed, 0);
      assert.equal(t.tbl8Used, 0, 'every tbl8 group recycled');
      const ips = t.heap.burst(4);
      const hops = t.heap.burst(4);
      ips.set([0, 0xffffffff, 0x0a000001, 0xc0a80101]);
      t.lookupX4(ips, hops, 77);
      assert.deepEqual([...hops], [77, 77, 77, 77]);
    }
  });

  it('lookupX4 gives each address its next hop or the default, kernel and twin alike', () => {
    for (const dp of ['wasm', 'ts'] as const) {
      const t = table(dp, { maxRules: 16, numberTbl8s: 4 });
      t.add(0x0a000000, 8, 1);
      t.add(0x0a010100, 24, 2);
      t.add(0x0a010180, 25, 3);
      const ips = t.heap.burst(4);
      const hops = t.heap.burst(4);
      ips.set([0x0a020304, 0x0a010101, 0x0a0101ff, 0x0b000001]);
      assert.equal(t.lookupX4(ips, hops, 0xdead), 4);
      assert.deepEqual([...hops], [1, 2, 3, 0xdead], dp);
    }
  });

  it('handles the depth edges: /1, /24 and /25 over one /24, /32, and falls back to the covering rule on delete', () => {
    const t = table('ts', { maxRules: 64, numberTbl8s: 4 });
    t.add(0x80000000, 1, 1); // 128.0.0.0/1
    assert.equal(t.lookup(0xffffffff), 1);
    assert.equal(t.lookup(0x7fffffff), -1);
    t.add(0xc0a80100, 24, 2);
    t.add(0xc0a80180, 25, 3);
    t.add(0xc0a801ff, 32, 4);
    assert.equal(t.tbl8Used, 1, 'the /25 and /32 share their /24\'s group');
    assert.deepEqual([0xc0a80101, 0xc0a80181, 0xc0a801ff, 0xc0a80201].map((a) => t.lookup(a)), [2, 3, 4, 1]);
    t.delete(0xc0a80180, 25);
    assert.deepEqual([0xc0a80181, 0xc0a801ff].map((a) => t.lookup(a)), [2, 4]);
    t.delete(0xc0a801ff, 32);
    assert.equal(t.tbl8Used, 0, 'a group left to one /24 rule folds back into tbl24');
    assert.equal(t.lookup(0xc0a801ff), 2);
    t.delete(0xc0a80100, 24);
    assert.equal(t.lookup(0xc0a801ff), 1, 'the /1 decides again');
    t.add(0xc0a801ff, 32, 5);
    t.delete(0x80000000, 1);
    assert.equal(t.lookup(0xc0a801ff), 5);
    assert.equal(t.lookup(0xc0a801fe), -1);
    t.add(0, 1, 6);
    assert.equal(t.lookup(0), 6);
    assert.equal(t.isRulePresent(0xc0a801ff, 32), 5);
    assert.equal(t.isRulePresent(0xc0a80100, 24), -1);
    t.add(0xc0a801ff, 32, 7); // same prefix: new next hop, no new rule
    assert.equal(t.lookup(0xc0a801ff), 7);
    assert.equal(t.rulesUsed, 2);
  });

  it('refuses depth 0 and 33, next hops past 24 bits and deletes of absent rules with one ArgError, changing nothing', () => {
    const t = table('ts', { maxRules: 4, numberTbl8s: 1 });
    assert.throws(() => t.add(0, 0, 1), (e: Error) => e instanceof ArgError && /depth 0/.test(e.message));
    assert.throws(() => t.add(0, 33, 1), (e: Error) => e instanceof ArgError && /depth 33/.test(e.message));
    assert.throws(() => t.add(0, 8, 1 << 24), (e: Error) => e instanceof ArgError && /next hop 16777216/.test(e.message));
    assert.throws(() => t.delete(0x0a000000, 8), (e: Error) => e instanceof ArgError && /no rule 10\.0\.0\.0\/8/.test(e.message));
    assert.throws(() => Lpm.create(t.heap, 'x', { maxRules: 0, numberTbl8s: 1 }), ArgError);
    assert.equal(t.rulesUsed, 0);
  });

  it('a full rules table and tbl8 exhaustion are NoSpaceErrors that leave the table as it was', () => {
    const t = table('wasm', { maxRules: 4, numberTbl8s: 2 });
    t.add(0x0a000001, 32, 1);
    t.add(0x0a000101, 32, 2);
    assert.equal(t.tbl8Used, 2);
    assert.throws(() => t.add(0x0a000201, 32, 3), (e: Error) => e instanceof NoSpaceError && /no free tbl8 group/.test(e.message));
    assert.equal(t.rulesUsed, 2, 'the refused rule is not kept');
    assert.equal(t.lookup(0x0a000201), -1);
    t.add(0x0a000002, 31, 4); // shares a group: no new one needed
    t.add(0x0b000000, 8, 5);
    assert.throws(() => t.add(0x0c000000, 8, 6), (e: Error) => e instanceof NoSpaceError && /rules table full \(max_rules 4\)/.test(e.message));
    assert.deepEqual([0x0a000001, 0x0a000101, 0x0a000003, 0x0b0000ff, 0x0c000000].map((a) => t.lookup(a)), [1, 2, 4, 5, -1]);
    t.delete(0x0a000101, 32); // frees a group: the refused add now fits
    t.add(0x0a000201, 32, 3);
    assert.equal(t.lookup(0x0a000201), 3);
  });
});
