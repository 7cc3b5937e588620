// The IPv6 LPM table's bulk lookup (twin: lpm6.twin.ts, same signature).
// `lpm` is the table header's heap offset (lpm6.record.ts), `ips` 16-byte
// addresses in network order, `hops` an i32 per address.
import { LPM6_EXT, LPM6_NEXT_HOP_MASK, LPM6_TBL24, LPM6_TBL8, LPM6_VALID } from './lpm6-layout.as';

/** The next hop of the address at `ip`, or -1 (rte_lpm6_lookup). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function lpm6Find(tbl24: u32, tbl8: u32, ip: u32): i32 {
  let e = load<u32>(tbl24 + ((((<u32>load<u8>(ip)) << 16) | ((<u32>load<u8>(ip, 1)) << 8) | <u32>load<u8>(ip, 2)) << 2));
  for (let i: u32 = 3; (e & LPM6_EXT) != 0; i++) e = load<u32>(tbl8 + ((((e & LPM6_NEXT_HOP_MASK) << 8) | <u32>load<u8>(ip + i)) << 2));
  return e & LPM6_VALID ? <i32>(e & LPM6_NEXT_HOP_MASK) : -1;
}

/** rte_lpm6_lookup_bulk_func: each of the `n` addresses at `ips`, its next hop or -1 into `hops`. Returns n. */
export function lpm6LookupBulk(lpm: u32, ips: u32, hops: u32, n: u32): u32 {
  const tbl24 = load<u32>(lpm, LPM6_TBL24);
  const tbl8 = load<u32>(lpm, LPM6_TBL8);
  for (let i: u32 = 0; i < n; i++) store<i32>(hops + (i << 2), lpm6Find(tbl24, tbl8, ips + (i << 4)));
  return n;
}
