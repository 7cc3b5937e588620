// The mbuf record, declared once: scripts/gen-layouts.ts writes mbuf-layout.ts
// (TypeScript) and mbuf-layout.as.ts (kernels) from it. See src/eal/record.ts.
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'mbuf',
  doc: `
The mbuf record: one 64-byte record per mbuf, as rte_mbuf keeps its hot
fields in one cache line (the probe measured one record per mbuf ~15 %
faster than one typed array per field).

A handle IS the record's byte offset in the heap divided by 64, so finding
the record costs one shift and handle 0 (the heap header) is NULL.

 byte  field                                     after rte_pktmbuf_reset
  0    u16 dataOff     u16 refcnt                headroom, (kept)
  4    u16 nbSegs      u16 port                  1, PORT_INVALID
  8    u32 pktLen                                0
 12    u16 dataLen     u16 vlanTci               0
 16    u32 olFlags     bits 0..31 of DPDK's u64  0
 20    u32 olFlagsHi   bits 32..63               0 (EXTERNAL kept)
 24    u32 pktType                               0
 28    u32 next        handle, 0 = end of chain  0
 32    u8 l2Len  u8 l4Len  u16 l3Len (tx_offload) 0
 36    u16 tsoSegsz    u16 vlanTciOuter          0
 40    u32 bufAddr     heap offset of the buffer
 44    u32 hash        RSS hash
 48    u16 bufLen      u16 pool (id)
 52    u32 direct      for an indirect mbuf, the handle whose buffer it uses
 56    u32 timestamp lo, u32 hi (rx timestamp dynamic field, ns)

Reset writes words 0 and 1 and zeroes words 2..9: eight contiguous zero
words, 8-byte aligned, that a reset clears with four 8-byte stores (the
probe's lesson: this bookkeeping, not the packet bytes, bounds the loop).

Outside kernels and twins, read and write packets through Mbufs' accessors
(mem/mbuf.ts), not these offsets.`,
  size: 64,
  handles: true,
  native: true,
  prefix: 'M',
  index: { u8: 'B', u16: 'H', u32: 'W' },
  fields: {
    dataOff: { type: 'u16', at: 0, doc: 'Data start from bufAddr (headroom after a reset).' },
    refcnt: { type: 'u16', at: 2, doc: 'References; 0 while the mbuf is in its pool. Atomics above 1 (clones shared between lcores).' },
    nbSegs: { type: 'u16', at: 4, doc: 'Segments in the chain; meaningful on the first segment.' },
    port: { type: 'u16', at: 6, doc: 'Input port, PORT_INVALID after a reset.' },
    pktLen: { type: 'u32', at: 8, doc: 'Length of the whole packet (all segments); meaningful on the first segment.' },
    dataLen: { type: 'u16', at: 12, doc: 'Data bytes in this segment.' },
    vlanTci: { type: 'u16', at: 14, doc: 'VLAN TCI (rx: stripped; tx: to insert).' },
    olFlags: { type: 'u32', at: 16, doc: 'Bits 0..31 of DPDK\'s u64 ol_flags: the rx flags (OlFlags).' },
    olFlagsHi: { type: 'u32', at: 20, doc: 'Bits 32..63 of ol_flags: tx and buffer-kind flags (OlFlagsHi).' },
    pktType: { type: 'u32', at: 24, doc: 'RTE_PTYPE_* packet type.' },
    next: { type: 'u32', at: 28, doc: 'Next segment\'s handle, 0 at the end of the chain.' },
    l2Len: { type: 'u8', at: 32, doc: 'tx_offload: L2 header length.' },
    l4Len: { type: 'u8', at: 33, doc: 'tx_offload: L4 header length.' },
    l3Len: { type: 'u16', at: 34, doc: 'tx_offload: L3 header length.' },
    tsoSegsz: { type: 'u16', at: 36, doc: 'TCP segment size for TSO.' },
    vlanTciOuter: { type: 'u16', at: 38, doc: 'Outer VLAN TCI (QinQ).' },
    bufAddr: { type: 'u32', at: 40, doc: 'Heap offset of the buffer (headroom starts here).' },
    hash: { type: 'u32', at: 44, doc: 'RSS hash (hash.rss).' },
    bufLen: { type: 'u16', at: 48, doc: 'Buffer bytes, headroom included.' },
    pool: { type: 'u16', at: 50, doc: 'Id of the pool the mbuf returns to (the heap\'s pool table index).' },
    direct: { type: 'u32', at: 52, doc: 'For an indirect mbuf, the handle whose buffer it uses; 0 otherwise.' },
    timestampLo: { type: 'u32', at: 56, doc: 'Rx timestamp in ns (the dynamic field), low word; valid with OlFlags.RX_TIMESTAMP.' },
    timestampHi: { type: 'u32', at: 60, doc: 'Rx timestamp, high word.' },
    // Wider views the kernels and the reset use to move two fields in one access.
    dataOffRefcnt: { type: 'u32', at: 0, view: true, doc: 'dataOff | refcnt << 16: a reset writes both in one store.' },
    nbSegsPort: { type: 'u32', at: 4, view: true, doc: 'nbSegs | port << 16.' },
    dataLenVlan: { type: 'u32', at: 12, view: true, doc: 'dataLen | vlanTci << 16.' },
    txOffload: { type: 'u32', at: 32, view: true, doc: 'l2Len | l4Len << 8 | l3Len << 16: DPDK\'s tx_offload word.' },
    tsoVlanOuter: { type: 'u32', at: 36, view: true, doc: 'tsoSegsz | vlanTciOuter << 16.' },
    bufLenPool: { type: 'u32', at: 48, view: true, doc: 'bufLen | pool << 16: the free path checks the pool id with one load.' },
    timestamp: { type: 'u64', at: 56, view: true, doc: 'The rx timestamp as one u64 (kernels).' },
  },
  consts: {
    W_RESET_ZERO: { value: 2, doc: 'A reset zeroes u32 words [W_RESET_ZERO, W_RESET_ZERO_END): as Float64 slots, (h << 3) + 1 .. + 5.' },
    W_RESET_ZERO_END: { value: 10, doc: 'End of the words a reset zeroes.' },
    PORT_INVALID: { value: 0xffff, doc: "rte_mbuf's RTE_MBUF_PORT_INVALID." },
    PKTMBUF_HEADROOM: { value: 128, doc: "DPDK's RTE_PKTMBUF_HEADROOM default." },
    MBUF_DEFAULT_DATAROOM: { value: 2048, doc: "DPDK's RTE_MBUF_DEFAULT_DATAROOM." },
    MBUF_MAX_NB_SEGS: { value: 0xffff, doc: 'Longest chain: nbSegs is a u16.' },
  },
  flags: {
    OlFlags: {
      as: 'OL',
      doc: `Offload flags, DPDK's values. DPDK's ol_flags is a u64; dpkit stores it as
two u32 words, so rx flags (bits 0..23) are in \`olFlags\` and tx flags (bits
40..63) are in \`olFlagsHi\` as the same bit minus 32.
RX_TIMESTAMP: the rx timestamp (words 14/15, nanoseconds) is valid: DPDK's
dynamic flag RTE_MBUF_DYNFLAG_RX_TIMESTAMP, which takes a free bit at run
time; dpkit fixes it at bit 23, the first bit DPDK leaves to dynamic flags.`,
      dpdk: 'RTE_MBUF_F_',
      docs: { RX_TIMESTAMP: "DPDK's dynamic flag RTE_MBUF_DYNFLAG_RX_TIMESTAMP, fixed at bit 23: the rx timestamp is valid." },
      values: {
        RX_VLAN: 1 << 0,
        RX_RSS_HASH: 1 << 1,
        RX_FDIR: 1 << 2,
        RX_L4_CKSUM_BAD: 1 << 3,
        RX_IP_CKSUM_BAD: 1 << 4,
        RX_OUTER_IP_CKSUM_BAD: 1 << 5,
        RX_VLAN_STRIPPED: 1 << 6,
        RX_IP_CKSUM_GOOD: 1 << 7,
        RX_L4_CKSUM_GOOD: 1 << 8,
        RX_IEEE1588_PTP: 1 << 9,
        RX_IEEE1588_TMST: 1 << 10,
        RX_FDIR_ID: 1 << 13,
        RX_FDIR_FLX: 1 << 14,
        RX_QINQ_STRIPPED: 1 << 15,
        RX_LRO: 1 << 16,
        RX_SEC_OFFLOAD: 1 << 18,
        RX_QINQ: 1 << 20,
        RX_TIMESTAMP: 1 << 23,
      },
    },
    OlFlagsHi: {
      as: 'OL_HI',
      doc: `Tx flags and buffer-kind flags: DPDK's bit n is bit n - 32 here.
EXTERNAL: the buffer is external (rte_pktmbuf_attach_extbuf): kept across reset.
INDIRECT: indirect mbuf, the data lives in another mbuf's buffer.`,
      dpdk: 'RTE_MBUF_F_',
      values: {
        TX_OUTER_UDP_CKSUM: 1 << 9,
        TX_UDP_SEG: 1 << 10,
        TX_SEC_OFFLOAD: 1 << 11,
        TX_MACSEC: 1 << 12,
        TX_TUNNEL_MASK: 0xf << 13,
        TX_QINQ: 1 << 17,
        TX_TCP_SEG: 1 << 18,
        TX_IEEE1588_TMST: 1 << 19,
        TX_L4_MASK: 3 << 20,
        TX_TCP_CKSUM: 1 << 20,
        TX_SCTP_CKSUM: 2 << 20,
        TX_UDP_CKSUM: 3 << 20,
        TX_IP_CKSUM: 1 << 22,
        TX_IPV4: 1 << 23,
        TX_IPV6: 1 << 24,
        TX_VLAN: 1 << 25,
        TX_OUTER_IP_CKSUM: 1 << 26,
        TX_OUTER_IPV4: 1 << 27,
        TX_OUTER_IPV6: 1 << 28,
        EXTERNAL: 1 << 29,
        INDIRECT: 1 << 30,
      },
    },
  },
});
