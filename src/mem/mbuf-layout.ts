/**
 * The mbuf record: one 64-byte record per mbuf, as rte_mbuf keeps its hot
 * fields in one cache line (the probe measured one record per mbuf ~15 %
 * faster than one typed array per field).
 *
 * A handle IS the record's byte offset in the heap divided by 64, so finding
 * the record costs one shift and handle 0 (the heap header) is NULL.
 *
 *  byte  field                                     after rte_pktmbuf_reset
 *   0    u16 dataOff     u16 refcnt                headroom, (kept)
 *   4    u16 nbSegs      u16 port                  1, PORT_INVALID
 *   8    u32 pktLen                                0
 *  12    u16 dataLen     u16 vlanTci               0
 *  16    u32 olFlags     bits 0..31 of DPDK's u64  0
 *  20    u32 olFlagsHi   bits 32..63               0 (EXTERNAL kept)
 *  24    u32 pktType                               0
 *  28    u32 next        handle, 0 = end of chain  0
 *  32    u8 l2Len  u8 l4Len  u16 l3Len (tx_offload) 0
 *  36    u16 tsoSegsz    u16 vlanTciOuter          0
 *  40    u32 bufAddr     heap offset of the buffer
 *  44    u32 hash        RSS hash
 *  48    u16 bufLen      u16 pool (id)
 *  52    u32 direct      for an indirect mbuf, the handle whose buffer it uses
 *  56    u32 timestamp lo, u32 hi (rx timestamp dynamic field, ns)
 *
 * Reset writes words 0 and 1 and zeroes words 2..9: eight contiguous zero
 * words, 8-byte aligned, that a reset clears with four 8-byte stores (the
 * probe's lesson: this bookkeeping, not the packet bytes, bounds the loop).
 */
export const MBUF_SIZE = 64;
export const MBUF_SHIFT = 6;
/** u32 words per record: record word index = handle << MBUF_WORD_SHIFT. */
export const MBUF_WORD_SHIFT = 4;

/** Word indexes inside a record (add to `h << 4` over a Uint32Array of the heap). */
export const W_DATA_OFF_REFCNT = 0;
export const W_NB_SEGS_PORT = 1;
export const W_PKT_LEN = 2;
export const W_DATA_LEN_VLAN = 3;
export const W_OL_FLAGS = 4;
export const W_OL_FLAGS_HI = 5;
export const W_PKT_TYPE = 6;
export const W_NEXT = 7;
export const W_TX_OFFLOAD = 8;
export const W_TSO_VLAN_OUTER = 9;
export const W_BUF_ADDR = 10;
export const W_HASH = 11;
export const W_BUF_LEN_POOL = 12;
export const W_DIRECT = 13;
export const W_TIMESTAMP_LO = 14;
export const W_TIMESTAMP_HI = 15;
/** Reset zeroes words [W_RESET_ZERO, W_RESET_ZERO_END): as Float64 slots, (h << 3) + 1 .. + 5. */
export const W_RESET_ZERO = 2;
export const W_RESET_ZERO_END = 10;

/** u16 slots inside a record (add to `h << 5` over a Uint16Array of the heap). */
export const H_DATA_OFF = 0;
export const H_REFCNT = 1;
export const H_NB_SEGS = 2;
export const H_PORT = 3;
export const H_DATA_LEN = 6;
export const H_VLAN_TCI = 7;
export const H_L3_LEN = 17;
export const H_TSO_SEGSZ = 18;
export const H_VLAN_TCI_OUTER = 19;
export const H_BUF_LEN = 24;
export const H_POOL = 25;

/** Byte offsets of the u8 fields. */
export const B_L2_LEN = 32;
export const B_L4_LEN = 33;

/** rte_mbuf's RTE_MBUF_PORT_INVALID. */
export const PORT_INVALID = 0xffff;
/** DPDK's RTE_PKTMBUF_HEADROOM default. */
export const PKTMBUF_HEADROOM = 128;
/** DPDK's RTE_MBUF_DEFAULT_DATAROOM / RTE_MBUF_DEFAULT_BUF_SIZE. */
export const MBUF_DEFAULT_DATAROOM = 2048;
/** Longest chain: nbSegs is a u16. */
export const MBUF_MAX_NB_SEGS = 0xffff;

/**
 * Offload flags, DPDK's values. DPDK's ol_flags is a u64; dpkit stores it as
 * two u32 words, so rx flags (bits 0..23) are in `olFlags` and tx flags (bits
 * 40..63) are in `olFlagsHi` as the same bit minus 32.
 */
export const OlFlags = {
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
  /**
   * The rx timestamp (words 14/15, nanoseconds) is valid: DPDK's dynamic flag
   * RTE_MBUF_DYNFLAG_RX_TIMESTAMP, which takes a free bit at run time; dpkit
   * fixes it at bit 23, the first bit DPDK leaves to dynamic flags.
   */
  RX_TIMESTAMP: 1 << 23,
} as const;

/** Tx flags and buffer-kind flags: DPDK's bit n is bit n - 32 here. */
export const OlFlagsHi = {
  TX_OUTER_UDP_CKSUM: 1 << 9, // 41
  TX_UDP_SEG: 1 << 10, // 42
  TX_SEC_OFFLOAD: 1 << 11, // 43
  TX_MACSEC: 1 << 12, // 44
  TX_TUNNEL_MASK: 0xf << 13, // 45..48
  TX_QINQ: 1 << 17, // 49
  TX_TCP_SEG: 1 << 18, // 50
  TX_IEEE1588_TMST: 1 << 19, // 51
  TX_L4_MASK: 3 << 20, // 52..53
  TX_TCP_CKSUM: 1 << 20,
  TX_SCTP_CKSUM: 2 << 20,
  TX_UDP_CKSUM: 3 << 20,
  TX_IP_CKSUM: 1 << 22, // 54
  TX_IPV4: 1 << 23, // 55
  TX_IPV6: 1 << 24, // 56
  TX_VLAN: 1 << 25, // 57
  TX_OUTER_IP_CKSUM: 1 << 26, // 58
  TX_OUTER_IPV4: 1 << 27, // 59
  TX_OUTER_IPV6: 1 << 28, // 60
  /** The buffer is external (rte_pktmbuf_attach_extbuf): kept across reset. */
  EXTERNAL: 1 << 29, // 61
  /** Indirect mbuf: the data lives in another mbuf's buffer. */
  INDIRECT: 1 << 30, // 62
} as const;
