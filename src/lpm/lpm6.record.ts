// The IPv6 LPM table's header in the heap, declared once
// (scripts/gen-layouts.ts writes lpm6-layout.ts and lpm6-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'lpm6',
  doc: `
One IPv6 longest-prefix-match table (rte_lpm6's structure): a 2^24-entry
tbl24 indexed by the address's first 3 bytes, then chains of 256-entry tbl8
groups, one level per further byte (13 at most), as DPDK's. An entry is one
u32: bits 0..20 next hop (or, with EXT, the tbl8 group of the next level),
bit 21 VALID, bit 22 EXT, bits 23..30 the depth of the rule that wrote it.
A lookup follows EXT entries down to the first that is not one.`,
  size: 64,
  prefix: 'LPM6',
  index: { u32: 'LPM6_W' },
  fields: {
    tbl24: { type: 'u32', at: 0, doc: 'Heap offset of tbl24 (LPM6_TBL24_NUM_ENTRIES u32 entries).' },
    tbl8: { type: 'u32', at: 4, doc: 'Heap offset of the tbl8 groups (numberTbl8s * 256 u32 entries).' },
    numberTbl8s: { type: 'u32', at: 8, doc: 'tbl8 groups (rte_lpm6_config.number_tbl8s).' },
    maxRules: { type: 'u32', at: 12, doc: 'Rules the table holds (rte_lpm6_config.max_rules).' },
  },
  consts: {
    LPM6_TBL24_NUM_ENTRIES: { value: 1 << 24, doc: 'tbl24 entries: one per /24.' },
    LPM6_MAX_DEPTH: { value: 128, doc: 'Longest prefix (RTE_LPM6_MAX_DEPTH).' },
    LPM6_NEXT_HOP_MASK: { value: 0x1fffff, doc: 'An entry\'s next hop (or group) bits; also the largest next hop (21 bits, as rte_lpm6).' },
    LPM6_VALID: { value: 0x200000, doc: 'Entry bit: the entry holds a route.' },
    LPM6_EXT: { value: 0x400000, doc: 'Entry bit: the entry points to a tbl8 group of the next level.' },
    LPM6_DEPTH_SHIFT: { value: 23, doc: 'An entry\'s depth is `(entry >>> LPM6_DEPTH_SHIFT) & 0xff`.' },
  },
});
