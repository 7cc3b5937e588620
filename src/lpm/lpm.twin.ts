/**
 * The IPv4 LPM table's lookups, the wasm kernels (lpm.as.ts) or their
 * TypeScript twins (here, same signatures), chosen once when a table is
 * opened (`lpmOps`). Arguments are heap byte offsets: `lpm` the table's
 * header (lpm.record.ts), `ips` and `hops` arrays of u32.
 */
import type { Heap } from '../eal/heap.js';
import { LPM_NEXT_HOP_MASK, LPM_VALID, LPM_VALID_EXT, LPM_W_TBL24, LPM_W_TBL8 } from './lpm-layout.js';

export interface LpmOps {
  /** rte_lpm_lookup_bulk: each address's deciding entry into `hops` (LPM_VALID set when found). @returns n */
  lookupBulk(lpm: number, ips: number, hops: number, n: number): number;
  /** rte_lpm_lookupx4: four next hops into `hops`, `defv` where none matches. @returns 4 */
  lookupX4(lpm: number, ips: number, hops: number, defv: number): number;
}

/** The kernels when the heap has them, else the twins. */
export function lpmOps(heap: Heap): LpmOps {
  const k = heap.kernels;
  return k === null ? lpmTwin(heap) : { lookupBulk: k.fn('lpmLookupBulk'), lookupX4: k.fn('lpmLookupX4') };
}

/** The twins: the same two loads per address through the heap's u32 view. */
export function lpmTwin(heap: Heap): LpmOps {
  const u32 = heap.u32;
  /** The entry that decides `ip` (tables as u32 indexes). */
  const entryOf = (t24: number, t8: number, ip: number): number => {
    const e = u32[t24 + (ip >>> 8)]!;
    if ((e & LPM_VALID_EXT) !== LPM_VALID_EXT) return e;
    return u32[t8 + (((e & LPM_NEXT_HOP_MASK) << 8) | (ip & 0xff))]!;
  };
  return {
    lookupBulk(lpm, ips, hops, n) {
      const t24 = u32[(lpm >>> 2) + LPM_W_TBL24]! >>> 2;
      const t8 = u32[(lpm >>> 2) + LPM_W_TBL8]! >>> 2;
      const ip = ips >>> 2;
      const hop = hops >>> 2;
      for (let i = 0; i < n; i++) u32[hop + i] = entryOf(t24, t8, u32[ip + i]!);
      return n;
    },
    lookupX4(lpm, ips, hops, defv) {
      const t24 = u32[(lpm >>> 2) + LPM_W_TBL24]! >>> 2;
      const t8 = u32[(lpm >>> 2) + LPM_W_TBL8]! >>> 2;
      for (let i = 0; i < 4; i++) {
        const e = entryOf(t24, t8, u32[(ips >>> 2) + i]!);
        u32[(hops >>> 2) + i] = e & LPM_VALID ? e & LPM_NEXT_HOP_MASK : defv;
      }
      return 4;
    },
  };
}
