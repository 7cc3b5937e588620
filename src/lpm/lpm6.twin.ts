/**
 * The IPv6 LPM table's bulk lookup, the wasm kernel (lpm6.as.ts) or its
 * TypeScript twin (here, same signature), chosen once when a table is opened.
 */
import type { Heap } from '../eal/heap.js';
import { LPM6_EXT, LPM6_NEXT_HOP_MASK, LPM6_VALID, LPM6_W_TBL24, LPM6_W_TBL8 } from './lpm6-layout.js';

/** rte_lpm6_lookup_bulk_func: `n` 16-byte addresses at `ips`, an i32 next hop or -1 each into `hops`. @returns n */
export type Lpm6LookupBulk = (lpm: number, ips: number, hops: number, n: number) => number;

/** The kernel when the heap has them, else the twin. */
export function lpm6Ops(heap: Heap): Lpm6LookupBulk {
  const k = heap.kernels;
  return k === null ? lpm6Twin(heap) : k.fn('lpm6LookupBulk');
}

/**
 * lpm6Find's twin: the next hop of the 16-byte address at byte `ip` of
 * `u8`, or -1, through tbl24 and tbl8 given as u32 indexes.
 */
export function lpm6Find(u8: Uint8Array, u32: Uint32Array, t24: number, t8: number, ip: number): number {
  let e = u32[t24 + ((u8[ip]! << 16) | (u8[ip + 1]! << 8) | u8[ip + 2]!)]!;
  for (let i = 3; e & LPM6_EXT; i++) e = u32[t8 + (((e & LPM6_NEXT_HOP_MASK) << 8) | u8[ip + i]!)]!;
  return e & LPM6_VALID ? e & LPM6_NEXT_HOP_MASK : -1;
}

/** The twin. */
export function lpm6Twin(heap: Heap): Lpm6LookupBulk {
  const { u8, u32, i32 } = heap;
  return (lpm, ips, hops, n) => {
    const t24 = u32[(lpm >>> 2) + LPM6_W_TBL24]! >>> 2;
    const t8 = u32[(lpm >>> 2) + LPM6_W_TBL8]! >>> 2;
    for (let i = 0; i < n; i++) i32[(hops >>> 2) + i] = lpm6Find(u8, u32, t24, t8, ips + 16 * i);
    return n;
  };
}
