/**
 * rte_lpm6: an IPv6 longest-prefix-match table with DPDK's structure, in the
 * shared heap (lpm6.record.ts): tbl24 answers the first 24 bits, then one
 * 256-entry tbl8 group per further byte, down to the rule's depth. Chosen
 * over a FIB-style trie (rte_fib6's) because it is the same multibit trie a
 * DPDK user knows, and its lookup, one load per byte past the third, is
 * short for the prefixes routers hold (/32 to /64: two to six loads); the
 * 64 MiB tbl24 is its price, as in DPDK.
 *
 * As the IPv4 table, every entry carries the depth of the rule that wrote it:
 * an add overwrites only entries of shorter rules (down through every group
 * below its range), a delete rewrites the entries it owned with the next
 * shorter covering rule; a group whose 256 entries come from one rule no
 * deeper than the group's own prefix (or from none) folds back into its
 * parent entry and is freed, bottom up. An add that needs more free groups
 * than there are is refused before anything changes.
 *
 * Concurrency as lpm.ts: one updating thread (the rules live in its
 * memory; another thread may only look up), any number of readers; entries
 * are single u32 stores, a group is filled before its parent points to it.
 */
import type { Heap } from '../eal/heap.js';
import { ArgError, NoSpaceError } from '../errors.js';
import {
  LPM6_DEPTH_SHIFT,
  LPM6_EXT,
  LPM6_MAX_DEPTH,
  LPM6_NEXT_HOP_MASK,
  LPM6_SIZE,
  LPM6_TBL24_NUM_ENTRIES,
  LPM6_VALID,
  LPM6_W_MAX_RULES,
  LPM6_W_NUMBER_TBL8S,
  LPM6_W_TBL24,
  LPM6_W_TBL8,
} from './lpm6-layout.js';
import { lpm6Ops, type Lpm6LookupBulk } from './lpm6.twin.js';

/** rte_lpm6_config. */
export interface Lpm6Config {
  maxRules: number;
  numberTbl8s: number;
}

/** The largest next hop (21 bits, as rte_lpm6). */
export const LPM6_MAX_NEXT_HOP = LPM6_NEXT_HOP_MASK;
const GROUP = 256;

/** Heap bytes an IPv6 table of `config` takes. */
export function lpm6Footprint(config: Lpm6Config): number {
  return LPM6_SIZE + 4 * LPM6_TBL24_NUM_ENTRIES + 4 * GROUP * config.numberTbl8s;
}

const entry = (hop: number, depth: number): number => (hop | LPM6_VALID | (depth << LPM6_DEPTH_SHIFT)) >>> 0;
const depthOf = (e: number): number => (e >>> LPM6_DEPTH_SHIFT) & 0xff;

/** `ip` with the bits past `depth` cleared (a copy). */
function masked(ip: Uint8Array, depth: number): Uint8Array {
  const m = Uint8Array.from(ip.subarray(0, 16));
  for (let b = 0; b < 16; b++) {
    const keep = Math.max(0, Math.min(8, depth - 8 * b));
    m[b]! &= (0xff00 >> keep) & 0xff;
  }
  return m;
}

const ruleKey = (m: Uint8Array, depth: number): string => `${Buffer.from(m).toString('hex')}/${depth}`;

/** Where a level's entries start and what prefix length its groups stand for. */
interface Level {
  /** Word index of the entry for the address at this level. */
  idx: number;
  /** The prefix length before this level's bits (0 for tbl24). */
  from: number;
  /** Bits this level decides (24 for tbl24, 8 below). */
  width: number;
}

export class Lpm6 {
  private readonly u32: Uint32Array;
  private readonly hw: number;
  private readonly t24: number;
  private readonly t8: number;
  private readonly ops: Lpm6LookupBulk;
  /** The rules, by masked prefix: this thread's, the updater's. */
  private readonly rules = new Map<string, number>();
  /** Free tbl8 groups, a stack; popped lowest first. */
  private readonly free: number[] = [];

  private constructor(
    readonly heap: Heap,
    /** Heap offset of the header: what a reading thread passes to `Lpm6.attach`. */
    readonly offset: number,
    readonly name: string,
  ) {
    this.u32 = heap.u32;
    this.hw = offset >>> 2;
    this.t24 = this.u32[this.hw + LPM6_W_TBL24]! >>> 2;
    this.t8 = this.u32[this.hw + LPM6_W_TBL8]! >>> 2;
    this.ops = lpm6Ops(heap);
  }

  /**
   * rte_lpm6_create: an empty table in the heap.
   * @throws ArgError for a bad config, NoMemError when the heap cannot hold it (lpm6Footprint).
   */
  static create(heap: Heap, name: string, config: Lpm6Config): Lpm6 {
    const { maxRules, numberTbl8s } = config;
    if (!Number.isInteger(maxRules) || maxRules < 1) throw new ArgError(`lpm6 ${name}: max_rules ${maxRules}: must be a positive integer`);
    if (!Number.isInteger(numberTbl8s) || numberTbl8s < 1 || numberTbl8s > LPM6_MAX_NEXT_HOP + 1) throw new ArgError(`lpm6 ${name}: number_tbl8s ${numberTbl8s}: must be an integer in [1, ${LPM6_MAX_NEXT_HOP + 1}]`);
    const header = heap.reserve(LPM6_SIZE, 64, `lpm6 ${name}`);
    const w = header >>> 2;
    heap.u32[w + LPM6_W_TBL24] = heap.reserve(4 * LPM6_TBL24_NUM_ENTRIES, 64, `lpm6 ${name} tbl24`);
    heap.u32[w + LPM6_W_TBL8] = heap.reserve(4 * GROUP * numberTbl8s, 64, `lpm6 ${name} tbl8`);
    heap.u32[w + LPM6_W_NUMBER_TBL8S] = numberTbl8s;
    heap.u32[w + LPM6_W_MAX_RULES] = maxRules;
    const t = new Lpm6(heap, header, name);
    for (let g = numberTbl8s - 1; g >= 0; g--) t.free.push(g);
    return t;
  }

  /** The table at `offset` of `heap`, to look up from another thread (its rules stay with the updater). */
  static attach(heap: Heap, offset: number, name = 'lpm6'): Lpm6 {
    return new Lpm6(heap, offset, name);
  }

  /** tbl8 groups in use. */
  get tbl8Used(): number {
    return this.u32[this.hw + LPM6_W_NUMBER_TBL8S]! - this.free.length;
  }

  get rulesUsed(): number {
    return this.rules.size;
  }

  /**
   * rte_lpm6_add: routes `ip` (16 bytes, network order)/`depth` to `nextHop`,
   * replacing the next hop of the same prefix.
   * @throws ArgError for depth outside 1..128, a next hop past 21 bits or a
   *   short address; NoSpaceError when the rules are full or the prefix needs
   *   more tbl8 groups than are free: the table is then as before.
   */
  add(ip: Uint8Array, depth: number, nextHop: number): void {
    this.check(ip, depth, 'add');
    if (!Number.isInteger(nextHop) || nextHop < 0 || nextHop > LPM6_MAX_NEXT_HOP) throw new ArgError(`lpm6 ${this.name}: add: next hop ${nextHop}: must be an integer in [0, ${LPM6_MAX_NEXT_HOP}]`);
    const m = masked(ip, depth);
    const key = ruleKey(m, depth);
    if (!this.rules.has(key) && this.rules.size >= this.u32[this.hw + LPM6_W_MAX_RULES]!) throw new NoSpaceError(`lpm6 ${this.name}: add ${key}: rules table full (max_rules ${this.u32[this.hw + LPM6_W_MAX_RULES]})`);
    // The groups the path down to the rule's level lacks, counted before any change.
    let need = 0;
    for (let lv = this.level(m, 0, 0); depth > lv.from + lv.width; ) {
      const e = this.u32[lv.idx]!;
      if (!(e & LPM6_EXT)) {
        need = Math.ceil((depth - lv.from - lv.width) / 8);
        break;
      }
      lv = this.level(m, lv.from + lv.width, e & LPM6_NEXT_HOP_MASK);
    }
    if (need > this.free.length) throw new NoSpaceError(`lpm6 ${this.name}: add ${key}: needs ${need} tbl8 groups, ${this.free.length} free (number_tbl8s ${this.u32[this.hw + LPM6_W_NUMBER_TBL8S]})`);
    this.rules.set(key, nextHop);
    const e = entry(nextHop, depth);
    this.walk(m, depth, true, (idx) => this.cover(idx, depth, e));
  }

  /**
   * rte_lpm6_delete: removes the rule `ip`/`depth`; its addresses fall back to
   * the next shorter covering rule, or to none.
   * @throws ArgError for a bad depth or no such rule.
   */
  delete(ip: Uint8Array, depth: number): void {
    this.check(ip, depth, 'delete');
    const m = masked(ip, depth);
    const key = ruleKey(m, depth);
    if (!this.rules.delete(key)) throw new ArgError(`lpm6 ${this.name}: delete: no rule ${key}`);
    let sub = 0;
    for (let d = depth - 1; d > 0; d--) {
      const hop = this.rules.get(ruleKey(masked(ip, d), d));
      if (hop !== undefined) {
        sub = entry(hop, d);
        break;
      }
    }
    const path = this.walk(m, depth, false, (idx) => this.cover(idx, depth, sub));
    // Fold, bottom up, the groups that one rule (or none) now fills.
    for (let k = path.length - 1; k >= 0; k--) {
      const { parent, group, from } = path[k]!;
      const base = this.t8 + group * GROUP;
      const first = this.u32[base]!;
      if (first & LPM6_EXT || depthOf(first) > from) break;
      let same = true;
      for (let j = 1; j < GROUP && same; j++) same = this.u32[base + j] === first;
      if (!same) break;
      Atomics.store(this.u32, parent, first);
      this.u32.fill(0, base, base + GROUP);
      this.free.push(group);
    }
  }

  /** rte_lpm6_lookup. @returns the next hop of the longest rule covering the 16 bytes of `ip`, or -1 */
  lookup(ip: Uint8Array): number {
    let e = this.u32[this.t24 + ((ip[0]! << 16) | (ip[1]! << 8) | ip[2]!)]!;
    for (let i = 3; e & LPM6_EXT; i++) e = this.u32[this.t8 + (((e & LPM6_NEXT_HOP_MASK) << 8) | ip[i]!)]!;
    return e & LPM6_VALID ? e & LPM6_NEXT_HOP_MASK : -1;
  }

  /**
   * rte_lpm6_lookup_bulk_func over heap memory: the first `n` 16-byte
   * addresses of `ips`, each next hop or -1 into `hops`. One kernel call.
   * @returns n
   */
  lookupBulk(ips: Uint8Array, hops: Int32Array, n: number): number {
    return this.ops(this.offset, ips.byteOffset, hops.byteOffset, n);
  }

  private check(ip: Uint8Array, depth: number, op: string): void {
    if (!Number.isInteger(depth) || depth < 1 || depth > LPM6_MAX_DEPTH) throw new ArgError(`lpm6 ${this.name}: ${op}: depth ${depth}: must be an integer in [1, ${LPM6_MAX_DEPTH}]`);
    if (ip.length < 16) throw new ArgError(`lpm6 ${this.name}: ${op}: address of ${ip.length} bytes, IPv6 has 16`);
  }

  /** The level at prefix length `from` (0: tbl24; else the group `group`): the entry for `m` there. */
  private level(m: Uint8Array, from: number, group: number): Level {
    if (from === 0) return { idx: this.t24 + ((m[0]! << 16) | (m[1]! << 8) | m[2]!), from: 0, width: 24 };
    return { idx: this.t8 + group * GROUP + m[(from >>> 3)]!, from, width: 8 };
  }

  /**
   * Walks down to the level where `depth` ends, making groups on the way when
   * `make` (each filled with its parent's entry before the parent points to
   * it), and calls `visit` on every entry of the prefix's range there.
   * @returns the groups passed through: each with its parent entry and prefix length
   */
  private walk(m: Uint8Array, depth: number, make: boolean, visit: (idx: number) => void): { parent: number; group: number; from: number }[] {
    const path: { parent: number; group: number; from: number }[] = [];
    let lv = this.level(m, 0, 0);
    while (depth > lv.from + lv.width) {
      let e = this.u32[lv.idx]!;
      if (!(e & LPM6_EXT)) {
        if (!make) throw new Error(`lpm6 ${this.name}: a rule of depth ${depth} without its group (a bug)`);
        const g = this.free.pop()!;
        this.u32.fill(e, this.t8 + g * GROUP, this.t8 + (g + 1) * GROUP);
        e = (g | LPM6_EXT) >>> 0;
        Atomics.store(this.u32, lv.idx, e);
      }
      const next = this.level(m, lv.from + lv.width, e & LPM6_NEXT_HOP_MASK);
      path.push({ parent: lv.idx, group: e & LPM6_NEXT_HOP_MASK, from: next.from });
      lv = next;
    }
    const count = 1 << (lv.from + lv.width - depth);
    for (let i = 0; i < count; i++) visit(lv.idx + i);
    return path;
  }

  /** Entry `idx` (and every group below it) takes `e` wherever a rule no deeper than `depth` decided. */
  private cover(idx: number, depth: number, e: number): void {
    const cur = this.u32[idx]!;
    if (!(cur & LPM6_EXT)) {
      if (depthOf(cur) <= depth) this.u32[idx] = e;
      return;
    }
    const base = this.t8 + (cur & LPM6_NEXT_HOP_MASK) * GROUP;
    for (let j = 0; j < GROUP; j++) this.cover(base + j, depth, e);
  }
}

