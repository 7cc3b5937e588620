// The IPv4 LPM table's header in the heap, declared once
// (scripts/gen-layouts.ts writes lpm-layout.ts and lpm-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'lpm',
  doc: `
One IPv4 longest-prefix-match table (rte_lpm, DIR-24-8): this header, then
its three arrays elsewhere in the heap, named by offset so any thread that
has the heap reads the table from the header's offset alone.
  tbl24  2^24 entries of 4 bytes, indexed by the address's top 24 bits
  tbl8   numberTbl8s groups of 256 entries, indexed by the bottom 8 bits
  rules  maxRules (ip, next hop) pairs, kept grouped by depth (ruleFirst /
         ruleUsed per depth), so delete finds the covering rule to fall back to
An entry is one u32, as DPDK's rte_lpm_tbl_entry on a little-endian machine:
bits 0..23 next hop (tbl24: the tbl8 group when EXT), bit 24 VALID, bit 25
VALID_GROUP (tbl24: the entry points to a tbl8 group; tbl8: the group is in
use), bits 26..31 the depth of the rule that wrote it. One entry is one
aligned store, so a reader never sees a torn entry.`,
  size: 320,
  prefix: 'LPM',
  index: { u32: 'LPM_W' },
  fields: {
    tbl24: { type: 'u32', at: 0, doc: 'Heap offset of tbl24 (LPM_TBL24_NUM_ENTRIES u32 entries).' },
    tbl8: { type: 'u32', at: 4, doc: 'Heap offset of tbl8 (numberTbl8s * LPM_TBL8_GROUP_NUM_ENTRIES u32 entries).' },
    rules: { type: 'u32', at: 8, doc: 'Heap offset of the rules table (maxRules pairs of u32: masked ip, next hop).' },
    maxRules: { type: 'u32', at: 12, doc: 'Capacity of the rules table (rte_lpm_config.max_rules).' },
    numberTbl8s: { type: 'u32', at: 16, doc: 'tbl8 groups (rte_lpm_config.number_tbl8s).' },
    tbl8Hint: { type: 'u32', at: 20, doc: 'The group after the last one allocated: where the next search for a free group starts.' },
    tbl8Used: { type: 'u32', at: 24, doc: 'tbl8 groups in use.' },
    ruleFirst: { type: 'u32', at: 64, count: 32, doc: 'Per depth 1..32 (index depth - 1): index of its first rule in the rules table.' },
    ruleUsed: { type: 'u32', at: 192, count: 32, doc: 'Per depth 1..32 (index depth - 1): how many rules of that depth there are.' },
  },
  consts: {
    LPM_TBL24_NUM_ENTRIES: { value: 1 << 24, doc: 'tbl24 entries: one per /24 (RTE_LPM_TBL24_NUM_ENTRIES).' },
    LPM_TBL8_GROUP_NUM_ENTRIES: { value: 256, doc: 'Entries of one tbl8 group: one per address of a /24.' },
    LPM_MAX_DEPTH: { value: 32, doc: 'Longest prefix (RTE_LPM_MAX_DEPTH).' },
    LPM_MAX_DEPTH_TBL24: { value: 24, doc: 'Deepest prefix tbl24 holds alone; deeper ones need a tbl8 group.' },
    LPM_NEXT_HOP_MASK: { value: 0xffffff, doc: 'An entry\'s next hop (or tbl8 group) bits; also the largest next hop.' },
    LPM_VALID: { value: 0x1000000, doc: 'Entry bit: the entry holds a route (RTE_LPM_LOOKUP_SUCCESS in lookupBulk results).' },
    LPM_VALID_GROUP: { value: 0x2000000, doc: 'Entry bit: tbl24, points to a tbl8 group; tbl8, the group is in use.' },
    LPM_VALID_EXT: { value: 0x3000000, doc: 'Both bits: a tbl24 entry to follow into tbl8 (RTE_LPM_VALID_EXT_ENTRY_BITMASK).' },
    LPM_DEPTH_SHIFT: { value: 26, doc: 'An entry\'s depth is `entry >>> LPM_DEPTH_SHIFT`.' },
  },
});
