// The IPv4 LPM table's lookups (twins: lpm.twin.ts, same signatures). `lpm`
// is the table header's heap offset (lpm.record.ts); the table is only read.
// A lookup is two dependent loads at most (tbl24, then tbl8 when the entry is
// VALID_EXT); wasm SIMD has no gather, so the loads stay scalar, and only
// lookupX4 works on a vector: its four results are chosen in one select.
import { LPM_NEXT_HOP_MASK, LPM_TBL24, LPM_TBL8, LPM_VALID, LPM_VALID_EXT } from './lpm-layout.as';

/** The entry that decides `ip`: tbl24's, or the tbl8 entry it points to (rte_lpm_lookup). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function lpmEntry(tbl24: u32, tbl8: u32, ip: u32): u32 {
  const e = load<u32>(tbl24 + ((ip >>> 8) << 2));
  if ((e & LPM_VALID_EXT) != LPM_VALID_EXT) return e;
  return load<u32>(tbl8 + ((((e & LPM_NEXT_HOP_MASK) << 8) | (ip & 0xff)) << 2));
}

/**
 * rte_lpm_lookup_bulk: for each of the `n` addresses (host order u32) at
 * `ips`, writes the deciding entry to `hops`: LPM_VALID set and the next hop
 * in bits 0..23 when a rule matches, LPM_VALID clear when none does.
 * Returns n.
 */
export function lpmLookupBulk(lpm: u32, ips: u32, hops: u32, n: u32): u32 {
  const tbl24 = load<u32>(lpm, LPM_TBL24);
  const tbl8 = load<u32>(lpm, LPM_TBL8);
  for (let i: u32 = 0; i < n; i++) {
    const p = i << 2;
    store<u32>(hops + p, lpmEntry(tbl24, tbl8, load<u32>(ips + p)));
  }
  return n;
}

/**
 * rte_lpm_lookupx4: the next hops of the four addresses at `ips` into the
 * four u32 at `hops`, `defv` where no rule matches. Returns 4.
 */
export function lpmLookupX4(lpm: u32, ips: u32, hops: u32, defv: u32): u32 {
  const tbl24 = load<u32>(lpm, LPM_TBL24);
  const tbl8 = load<u32>(lpm, LPM_TBL8);
  let e = i32x4.splat(0);
  e = i32x4.replace_lane(e, 0, lpmEntry(tbl24, tbl8, load<u32>(ips)));
  e = i32x4.replace_lane(e, 1, lpmEntry(tbl24, tbl8, load<u32>(ips, 4)));
  e = i32x4.replace_lane(e, 2, lpmEntry(tbl24, tbl8, load<u32>(ips, 8)));
  e = i32x4.replace_lane(e, 3, lpmEntry(tbl24, tbl8, load<u32>(ips, 12)));
  const found = i32x4.ne(v128.and(e, i32x4.splat(LPM_VALID)), i32x4.splat(0));
  v128.store(hops, v128.bitselect(v128.and(e, i32x4.splat(LPM_NEXT_HOP_MASK)), i32x4.splat(defv), found));
  return 4;
}
