/**
 * rte_lpm: an IPv4 longest-prefix-match table as DPDK's DIR-24-8, in the
 * shared heap (lpm.record.ts says what lives where and what an entry holds).
 *
 * tbl24 answers every prefix of depth <= 24 in one load: a /d prefix owns
 * the 2^(24-d) tbl24 entries it covers, unless a deeper prefix wrote them. A
 * deeper prefix gives its /24 a tbl8 group of 256 entries, one per address,
 * and its tbl24 entry turns into a pointer to the group (VALID_EXT). Every
 * entry carries the depth of the rule that wrote it, so an add overwrites
 * only entries of shorter rules, and a delete rewrites only the entries the
 * deleted rule owned, with the next shorter rule that covers them (found in
 * the rules table). A group whose entries all come from one rule of depth
 * <= 24, or from none, folds back into its tbl24 entry and is freed.
 *
 * Concurrency (as DPDK's, without its RCU option): one thread adds and
 * deletes; any thread with the heap looks up, while updates run. Every entry
 * is one aligned u32 store, so a reader sees an entry either before or after
 * an update, never torn; a new tbl8 group is filled before the tbl24 entry
 * that points to it is stored (Atomics.store: release order). A group freed
 * by a delete may be reused by the very next add, so a reader that loaded
 * the old tbl24 entry before the free may read one entry of the reused
 * group: deletes followed at once by adds need the readers quiesced between
 * (DPDK's rte_lpm_rcu_qsbr_add), which the caller arranges.
 */
import type { Heap } from '../eal/heap.js';
import { ArgError, NoSpaceError } from '../errors.js';
import {
  LPM_DEPTH_SHIFT,
  LPM_MAX_DEPTH,
  LPM_MAX_DEPTH_TBL24,
  LPM_NEXT_HOP_MASK,
  LPM_SIZE,
  LPM_TBL24_NUM_ENTRIES,
  LPM_TBL8_GROUP_NUM_ENTRIES,
  LPM_VALID,
  LPM_VALID_EXT,
  LPM_VALID_GROUP,
  LPM_W_MAX_RULES,
  LPM_W_NUMBER_TBL8S,
  LPM_W_RULE_FIRST,
  LPM_W_RULE_USED,
  LPM_W_RULES,
  LPM_W_TBL24,
  LPM_W_TBL8,
  LPM_W_TBL8_HINT,
  LPM_W_TBL8_USED,
} from './lpm-layout.js';
import { lpmOps, type LpmOps } from './lpm.twin.js';

/** rte_lpm_config. */
export interface LpmConfig {
  /** Rules the table holds (max_rules), at least 1. */
  maxRules: number;
  /** tbl8 groups (number_tbl8s): one per /24 that holds a prefix longer than 24. */
  numberTbl8s: number;
}

/** The largest next hop an entry holds (24 bits, as DPDK's rte_lpm). */
export const LPM_MAX_NEXT_HOP = LPM_NEXT_HOP_MASK;
/** lookupBulk's found bit (RTE_LPM_LOOKUP_SUCCESS): the next hop is `result & LPM_MAX_NEXT_HOP`. */
export const LPM_LOOKUP_SUCCESS = LPM_VALID;
/** Heap bytes an LPM table of `config` takes (rte_lpm's memory footprint). */
export function lpmFootprint(config: LpmConfig): number {
  return LPM_SIZE + 4 * LPM_TBL24_NUM_ENTRIES + 4 * LPM_TBL8_GROUP_NUM_ENTRIES * config.numberTbl8s + 8 * config.maxRules;
}

/** depth → the netmask of a /depth prefix (depth 1..32). */
function depthMask(depth: number): number {
  return (0x80000000 >> (depth - 1)) >>> 0;
}

/** A rule's key in Lpm's index: its masked address and depth in one exact number. */
const ruleKey = (masked: number, depth: number): number => masked * 64 + depth;

/** A tbl24 or tbl8 entry: `flags` is LPM_VALID, optionally with LPM_VALID_GROUP. */
function entry(hop: number, depth: number, flags: number): number {
  return (hop | flags | (depth << LPM_DEPTH_SHIFT)) >>> 0;
}

const depthOf = (e: number): number => e >>> LPM_DEPTH_SHIFT;
const isExt = (e: number): boolean => (e & LPM_VALID_EXT) === LPM_VALID_EXT;

export class Lpm {
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  /** Word indexes of the header and the three arrays. */
  private readonly hw: number;
  private readonly t24: number;
  private readonly t8: number;
  private readonly rw: number;
  private readonly ops: LpmOps;
  /**
   * Where each rule is in the rules table, by ruleKey: rte_lpm searches a
   * depth's rules linearly, which makes a delete (up to 32 searches for the
   * fallback rule) cost the table's size. This thread's index of the heap's
   * rules, rebuilt by attach; the table in the heap stays the truth.
   */
  private readonly where = new Map<number, number>();

  private constructor(
    readonly heap: Heap,
    /** Heap offset of the table's header: what another thread passes to `Lpm.attach`. */
    readonly offset: number,
    readonly name: string,
  ) {
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.hw = offset >>> 2;
    this.t24 = this.u32[this.hw + LPM_W_TBL24]! >>> 2;
    this.t8 = this.u32[this.hw + LPM_W_TBL8]! >>> 2;
    this.rw = this.u32[this.hw + LPM_W_RULES]! >>> 2;
    this.ops = lpmOps(heap);
    for (let d = 1; d <= LPM_MAX_DEPTH; d++) {
      const f = this.u32[this.hw + LPM_W_RULE_FIRST + d - 1]!;
      const n = this.u32[this.hw + LPM_W_RULE_USED + d - 1]!;
      for (let i = f; i < f + n; i++) this.where.set(ruleKey(this.u32[this.rw + 2 * i]!, d), i);
    }
  }

  /**
   * rte_lpm_create: an empty table in the heap (control plane).
   * @throws ArgError for a bad config, NoMemError when the heap cannot hold it
   *   (lpmFootprint: 64 MiB of tbl24 plus 1 KiB per tbl8 group).
   */
  static create(heap: Heap, name: string, config: LpmConfig): Lpm {
    const { maxRules, numberTbl8s } = config;
    if (!Number.isInteger(maxRules) || maxRules < 1 || maxRules > 1 << 26) throw new ArgError(`lpm ${name}: max_rules ${maxRules}: must be an integer in [1, ${1 << 26}]`);
    if (!Number.isInteger(numberTbl8s) || numberTbl8s < 1 || numberTbl8s > LPM_MAX_NEXT_HOP + 1) {
      throw new ArgError(`lpm ${name}: number_tbl8s ${numberTbl8s}: must be an integer in [1, ${LPM_MAX_NEXT_HOP + 1}]`);
    }
    const what = `lpm ${name}`;
    const header = heap.reserve(LPM_SIZE, 64, what);
    const w = header >>> 2;
    heap.u32[w + LPM_W_TBL24] = heap.reserve(4 * LPM_TBL24_NUM_ENTRIES, 64, `${what} tbl24`);
    heap.u32[w + LPM_W_TBL8] = heap.reserve(4 * LPM_TBL8_GROUP_NUM_ENTRIES * numberTbl8s, 64, `${what} tbl8`);
    heap.u32[w + LPM_W_RULES] = heap.reserve(8 * maxRules, 64, `${what} rules`);
    heap.u32[w + LPM_W_MAX_RULES] = maxRules;
    heap.u32[w + LPM_W_NUMBER_TBL8S] = numberTbl8s;
    return new Lpm(heap, header, name);
  }

  /**
   * The table whose header is at `offset` of `heap`: another thread's view,
   * to look up, or to take over the updates (one updater at a time).
   */
  static attach(heap: Heap, offset: number, name = 'lpm'): Lpm {
    return new Lpm(heap, offset, name);
  }

  get maxRules(): number {
    return this.u32[this.hw + LPM_W_MAX_RULES]!;
  }

  get numberTbl8s(): number {
    return this.u32[this.hw + LPM_W_NUMBER_TBL8S]!;
  }

  /** tbl8 groups in use. */
  get tbl8Used(): number {
    return this.u32[this.hw + LPM_W_TBL8_USED]!;
  }

  /** Rules in the table. */
  get rulesUsed(): number {
    let n = 0;
    for (let d = 0; d < LPM_MAX_DEPTH; d++) n += this.u32[this.hw + LPM_W_RULE_USED + d]!;
    return n;
  }

  /**
   * rte_lpm_add: routes `ip`/`depth` (host order; bits past the depth are
   * ignored) to `nextHop`, replacing the next hop of the same prefix.
   * @throws ArgError for depth outside 1..32 or a next hop past 24 bits;
   *   NoSpaceError when the rules table is full, or the prefix is longer
   *   than 24 and no tbl8 group is free: the table is then as before.
   */
  add(ip: number, depth: number, nextHop: number): void {
    this.checkPrefix(ip, depth, 'add');
    if (!Number.isInteger(nextHop) || nextHop < 0 || nextHop > LPM_MAX_NEXT_HOP) {
      throw new ArgError(`lpm ${this.name}: add: next hop ${nextHop}: must be an integer in [0, ${LPM_MAX_NEXT_HOP}]`);
    }
    const masked = (ip & depthMask(depth)) >>> 0;
    const [index, added] = this.ruleAdd(masked, depth, nextHop);
    if (depth <= LPM_MAX_DEPTH_TBL24) {
      this.addSmall(masked, depth, nextHop);
      return;
    }
    try {
      this.addBig(masked, depth, nextHop);
    } catch (e) {
      if (added) this.ruleDelete(index, depth);
      throw e;
    }
  }

  /**
   * rte_lpm_delete: removes the rule `ip`/`depth`; the addresses it decided
   * fall back to the next shorter rule that covers them, or to none.
   * @throws ArgError for depth outside 1..32 or no such rule.
   */
  delete(ip: number, depth: number): void {
    this.checkPrefix(ip, depth, 'delete');
    const masked = (ip & depthMask(depth)) >>> 0;
    const index = this.ruleFind(masked, depth);
    if (index < 0) throw new ArgError(`lpm ${this.name}: delete: no rule ${fmtPrefix(masked, depth)}`);
    this.ruleDelete(index, depth);
    // The rule the deleted one's addresses fall back to: the longest shorter one covering them.
    let subHop = -1;
    let subDepth = 0;
    for (let d = depth - 1; d > 0; d--) {
      const i = this.ruleFind((ip & depthMask(d)) >>> 0, d);
      if (i >= 0) {
        subHop = this.u32[this.rw + 2 * i + 1]!;
        subDepth = d;
        break;
      }
    }
    if (depth <= LPM_MAX_DEPTH_TBL24) this.deleteSmall(masked, depth, subHop, subDepth);
    else this.deleteBig(masked, depth, subHop, subDepth);
  }

  /** rte_lpm_delete_all: no rules, every tbl8 group free. */
  deleteAll(): void {
    this.u32.fill(0, this.hw + LPM_W_RULE_FIRST, this.hw + LPM_W_RULE_USED + LPM_MAX_DEPTH);
    this.u32.fill(0, this.t24, this.t24 + LPM_TBL24_NUM_ENTRIES);
    this.u32.fill(0, this.t8, this.t8 + LPM_TBL8_GROUP_NUM_ENTRIES * this.numberTbl8s);
    this.u32[this.hw + LPM_W_TBL8_HINT] = 0;
    this.u32[this.hw + LPM_W_TBL8_USED] = 0;
    this.u32.fill(0, this.rw, this.rw + 2 * this.maxRules);
    this.where.clear();
  }

  /**
   * rte_lpm_is_rule_present.
   * @returns the rule's next hop, or -1 when there is no rule `ip`/`depth`.
   */
  isRulePresent(ip: number, depth: number): number {
    this.checkPrefix(ip, depth, 'is_rule_present');
    const i = this.ruleFind((ip & depthMask(depth)) >>> 0, depth);
    return i < 0 ? -1 : this.u32[this.rw + 2 * i + 1]!;
  }

  /**
   * rte_lpm_lookup (one address, TypeScript: a wasm call per packet costs
   * more than the lookup). Safe while another thread updates.
   * @returns the next hop of the longest rule covering `ip`, or -1 (DPDK's -ENOENT).
   */
  lookup(ip: number): number {
    let e = this.u32[this.t24 + (ip >>> 8)]!;
    if (isExt(e)) e = this.u32[this.t8 + (((e & LPM_NEXT_HOP_MASK) << 8) | (ip & 0xff))]!;
    return e & LPM_VALID ? e & LPM_NEXT_HOP_MASK : -1;
  }

  /**
   * rte_lpm_lookup_bulk over heap arrays (Heap.burst): for each of the first
   * `n` addresses of `ips`, its deciding entry into `hops`, with
   * LPM_LOOKUP_SUCCESS set and the next hop in the low 24 bits when a rule
   * matches, LPM_LOOKUP_SUCCESS clear when none does. One kernel call.
   * @returns n
   */
  lookupBulk(ips: Uint32Array, hops: Uint32Array, n: number): number {
    return this.ops.lookupBulk(this.offset, ips.byteOffset, hops.byteOffset, n);
  }

  /**
   * rte_lpm_lookupx4: the next hops of the four addresses at `ips[0..3]`
   * into `hops[0..3]`, `defv` for an address no rule covers.
   * @returns 4
   */
  lookupX4(ips: Uint32Array, hops: Uint32Array, defv: number): number {
    return this.ops.lookupX4(this.offset, ips.byteOffset, hops.byteOffset, defv >>> 0);
  }

  private checkPrefix(ip: number, depth: number, op: string): void {
    if (!Number.isInteger(depth) || depth < 1 || depth > LPM_MAX_DEPTH) throw new ArgError(`lpm ${this.name}: ${op}: depth ${depth}: must be an integer in [1, ${LPM_MAX_DEPTH}]`);
    if (!Number.isInteger(ip) || ip < 0 || ip > 0xffffffff) throw new ArgError(`lpm ${this.name}: ${op}: address ${ip}: not a u32`);
  }

  // --- The rules table: grouped by depth, shortest first ---

  private ruleFind(masked: number, depth: number): number {
    return this.where.get(ruleKey(masked, depth)) ?? -1;
  }

  /** Moves rule `from` (of `depth`) to slot `to`. */
  private ruleMove(from: number, to: number, depth: number): void {
    const ip = this.u32[this.rw + 2 * from]!;
    this.u32[this.rw + 2 * to] = ip;
    this.u32[this.rw + 2 * to + 1] = this.u32[this.rw + 2 * from + 1]!;
    this.where.set(ruleKey(ip, depth), to);
  }

  /** Adds or updates a rule. @returns its index, and whether it is new. */
  private ruleAdd(masked: number, depth: number, hop: number): [number, boolean] {
    const u32 = this.u32;
    const found = this.ruleFind(masked, depth);
    if (found >= 0) {
      u32[this.rw + 2 * found + 1] = hop;
      return [found, false];
    }
    if (this.where.size >= this.maxRules) throw new NoSpaceError(`lpm ${this.name}: add ${fmtPrefix(masked, depth)}: rules table full (max_rules ${this.maxRules})`);
    // The group of `depth` ends where the new rule goes; every deeper group
    // moves up one slot by moving its first rule to its end.
    const first = this.hw + LPM_W_RULE_FIRST;
    const used = this.hw + LPM_W_RULE_USED;
    let at = u32[first + depth - 1]! + u32[used + depth - 1]!;
    if (u32[used + depth - 1] === 0) {
      at = 0;
      for (let d = depth - 1; d >= 1; d--) {
        if (u32[used + d - 1]! > 0) {
          at = u32[first + d - 1]! + u32[used + d - 1]!;
          break;
        }
      }
      u32[first + depth - 1] = at;
    }
    for (let d = LPM_MAX_DEPTH; d > depth; d--) {
      const n = u32[used + d - 1]!;
      const f = u32[first + d - 1]!;
      if (n === 0) continue;
      this.ruleMove(f, f + n, d);
      u32[first + d - 1] = f + 1;
    }
    u32[this.rw + 2 * at] = masked;
    u32[this.rw + 2 * at + 1] = hop;
    this.where.set(ruleKey(masked, depth), at);
    u32[used + depth - 1]!++;
    return [at, true];
  }

  /** Removes rule `index` of `depth`: the group's last rule fills its slot, then each deeper group moves down one. */
  private ruleDelete(index: number, depth: number): void {
    const u32 = this.u32;
    const first = this.hw + LPM_W_RULE_FIRST;
    const used = this.hw + LPM_W_RULE_USED;
    const last = u32[first + depth - 1]! + u32[used + depth - 1]! - 1;
    this.where.delete(ruleKey(u32[this.rw + 2 * index]!, depth));
    if (index !== last) this.ruleMove(last, index, depth);
    let hole = last;
    for (let d = depth + 1; d <= LPM_MAX_DEPTH; d++) {
      const n = u32[used + d - 1]!;
      const f = u32[first + d - 1]!;
      if (n === 0) continue;
      this.ruleMove(f + n - 1, hole, d);
      hole = f + n - 1;
      u32[first + d - 1] = f - 1;
    }
    u32[this.rw + 2 * hole] = 0;
    u32[this.rw + 2 * hole + 1] = 0;
    u32[used + depth - 1]!--;
  }

  // --- tbl8 groups ---

  /** A free group, marked in use (every entry VALID_GROUP). @throws NoSpaceError when none is free. */
  private tbl8Alloc(masked: number, depth: number): number {
    const n = this.numberTbl8s;
    const hint = this.u32[this.hw + LPM_W_TBL8_HINT]!;
    for (let k = 0; k < n; k++) {
      const g = (hint + k) % n;
      const base = this.t8 + g * LPM_TBL8_GROUP_NUM_ENTRIES;
      if ((this.u32[base]! & LPM_VALID_GROUP) === 0) {
        this.u32.fill(LPM_VALID_GROUP, base, base + LPM_TBL8_GROUP_NUM_ENTRIES);
        this.u32[this.hw + LPM_W_TBL8_HINT] = (g + 1) % n;
        this.u32[this.hw + LPM_W_TBL8_USED]!++;
        return g;
      }
    }
    throw new NoSpaceError(`lpm ${this.name}: add ${fmtPrefix(masked, depth)}: no free tbl8 group (number_tbl8s ${n})`);
  }

  private tbl8Free(group: number): void {
    const base = this.t8 + group * LPM_TBL8_GROUP_NUM_ENTRIES;
    this.u32.fill(0, base, base + LPM_TBL8_GROUP_NUM_ENTRIES);
    this.u32[this.hw + LPM_W_TBL8_USED]!--;
  }

  // --- Writing the tables ---

  /** A prefix of depth <= 24: its tbl24 range, and the groups in it where a shorter rule decides. */
  private addSmall(masked: number, depth: number, hop: number): void {
    const u32 = this.u32;
    const from = this.t24 + (masked >>> 8);
    const to = from + (1 << (LPM_MAX_DEPTH_TBL24 - depth));
    const e24 = entry(hop, depth, LPM_VALID);
    const e8 = entry(hop, depth, LPM_VALID | LPM_VALID_GROUP);
    for (let i = from; i < to; i++) {
      const e = u32[i]!;
      if (!isExt(e)) {
        if (depthOf(e) <= depth) u32[i] = e24; // an invalid entry has depth 0
        continue;
      }
      const base = this.t8 + (e & LPM_NEXT_HOP_MASK) * LPM_TBL8_GROUP_NUM_ENTRIES;
      for (let j = base; j < base + LPM_TBL8_GROUP_NUM_ENTRIES; j++) if (depthOf(u32[j]!) <= depth) u32[j] = e8;
    }
  }

  /** A prefix deeper than 24: its range in its /24's group, made first when the /24 has none. */
  private addBig(masked: number, depth: number, hop: number): void {
    const u32 = this.u32;
    const i24 = this.t24 + (masked >>> 8);
    const e = u32[i24]!;
    const from = masked & 0xff;
    const to = from + (1 << (LPM_MAX_DEPTH - depth));
    const e8 = entry(hop, depth, LPM_VALID | LPM_VALID_GROUP);
    if (isExt(e)) {
      const base = this.t8 + (e & LPM_NEXT_HOP_MASK) * LPM_TBL8_GROUP_NUM_ENTRIES;
      for (let j = base + from; j < base + to; j++) if (depthOf(u32[j]!) <= depth) u32[j] = e8;
      return;
    }
    const g = this.tbl8Alloc(masked, depth);
    const base = this.t8 + g * LPM_TBL8_GROUP_NUM_ENTRIES;
    // The /24's own route (or none) everywhere, then the new prefix over it.
    if (e & LPM_VALID) u32.fill((e | LPM_VALID_GROUP) >>> 0, base, base + LPM_TBL8_GROUP_NUM_ENTRIES);
    u32.fill(e8, base + from, base + to);
    // The group is complete before a reader can reach it.
    Atomics.store(this.i32, i24, entry(g, 0, LPM_VALID_EXT) | 0);
  }

  /**
   * A prefix of depth <= 24 goes: the entries it wrote take the fallback rule's
   * (subHop < 0: none), in tbl24 and in the groups of its range.
   */
  private deleteSmall(masked: number, depth: number, subHop: number, subDepth: number): void {
    const u32 = this.u32;
    const from = this.t24 + (masked >>> 8);
    const to = from + (1 << (LPM_MAX_DEPTH_TBL24 - depth));
    const e24 = subHop < 0 ? 0 : entry(subHop, subDepth, LPM_VALID);
    const e8 = subHop < 0 ? LPM_VALID_GROUP : entry(subHop, subDepth, LPM_VALID | LPM_VALID_GROUP);
    for (let i = from; i < to; i++) {
      const e = u32[i]!;
      if (!isExt(e)) {
        if (depthOf(e) <= depth) u32[i] = e24;
        continue;
      }
      const base = this.t8 + (e & LPM_NEXT_HOP_MASK) * LPM_TBL8_GROUP_NUM_ENTRIES;
      for (let j = base; j < base + LPM_TBL8_GROUP_NUM_ENTRIES; j++) if (depthOf(u32[j]!) <= depth) u32[j] = e8;
    }
  }

  /**
   * A prefix deeper than 24 goes: its range of its group takes the fallback
   * rule's entries; then the group folds into tbl24 when one rule of depth
   * <= 24 (or none) decides all of it.
   */
  private deleteBig(masked: number, depth: number, subHop: number, subDepth: number): void {
    const u32 = this.u32;
    const i24 = this.t24 + (masked >>> 8);
    const g = u32[i24]! & LPM_NEXT_HOP_MASK;
    const base = this.t8 + g * LPM_TBL8_GROUP_NUM_ENTRIES;
    const from = base + (masked & 0xff);
    const to = from + (1 << (LPM_MAX_DEPTH - depth));
    const e8 = subHop < 0 ? LPM_VALID_GROUP : entry(subHop, subDepth, LPM_VALID | LPM_VALID_GROUP);
    for (let j = from; j < to; j++) if (depthOf(u32[j]!) <= depth) u32[j] = e8;
    // Recycle check: entries all alike and of depth <= 24 (or all invalid) mean no rule deeper than 24 is left here.
    const first = u32[base]!;
    if (depthOf(first) > LPM_MAX_DEPTH_TBL24) return;
    for (let j = base + 1; j < base + LPM_TBL8_GROUP_NUM_ENTRIES; j++) if (u32[j] !== first) return;
    Atomics.store(this.i32, i24, first & LPM_VALID ? (first & ~LPM_VALID_GROUP) | 0 : 0);
    this.tbl8Free(g);
  }
}

/** a.b.c.d/depth, for errors. */
export function fmtPrefix(ip: number, depth: number): string {
  return `${ip >>> 24}.${(ip >>> 16) & 0xff}.${(ip >>> 8) & 0xff}.${ip & 0xff}/${depth}`;
}
