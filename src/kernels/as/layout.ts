// The shared-memory layout the kernels work on, in bytes. It mirrors the
// TypeScript side (heap.ts, mempool.ts, mbuf-layout.ts); test/kernels checks
// every value against it through the exported `layout*` globals.

/** Byte offset of the heap's pool table (heap.ts POOL_TABLE words). */
export const HEAP_POOL_TABLE: u32 = 16 * 4;

/** Pool header fields (mempool.ts P_* words). */
export const POOL_HEADROOM: u32 = 4 * 4;
export const POOL_CACHE_SIZE: u32 = 10 * 4;
export const POOL_FLUSH: u32 = 11 * 4;
export const POOL_CACHE_BASE: u32 = 12 * 4;
export const POOL_FLAGS: u32 = 14 * 4;
export const POOL_F_DEBUG: u32 = 1;
/** One lcore's cache: the length word, then from CACHE_OBJS the handle stack. */
export const CACHE_STRIDE: u32 = 64 + 1024 * 4;
export const CACHE_OBJS: u32 = 64;

/** Mbuf record (mbuf-layout.ts), 64 bytes, at handle << 6. */
export const MBUF_SHIFT: u32 = 6;
export const M_DATA_OFF_REFCNT: u32 = 0;
export const M_NB_SEGS_PORT: u32 = 4;
export const M_OL_FLAGS_HI: u32 = 20;
export const M_NEXT: u32 = 28;
export const M_BUF_LEN_POOL: u32 = 48;
export const OL_HI_INDIRECT: u32 = 1 << 30;
export const PORT_INVALID: u32 = 0xffff;
export const M_PKT_LEN: u32 = 8;
export const M_DATA_LEN: u32 = 12;
export const M_PORT: u32 = 6;
export const M_DATA_OFF: u32 = 0;
export const M_OL_FLAGS: u32 = 16;
export const M_TX_OFFLOAD: u32 = 32;
export const M_VLAN_TCI: u32 = 14;
export const M_VLAN_TCI_OUTER: u32 = 38;
export const M_BUF_ADDR: u32 = 40;
export const M_BUF_LEN: u32 = 48;
export const M_TIMESTAMP: u32 = 56;
/** OlFlags.RX_TIMESTAMP: the rx timestamp at M_TIMESTAMP is valid. */
export const OL_RX_TIMESTAMP: u32 = 1 << 23;
/** Queue statistics slots (ethdev/stats.ts), f64 each. */
export const Q_PACKETS: u32 = 0;
export const Q_BYTES: u32 = 8;
/** Pool header: byte offset of the word holding its ring's offset (mempool.ts P_RING). */
export const POOL_RING: u32 = 9 * 4;
/** Ring (ring.ts), byte offsets from its base. */
export const RING_MASK: u32 = 2 * 4;
export const RING_CAPACITY: u32 = 3 * 4;
export const RING_PROD_HEAD: u32 = 128;
export const RING_PROD_TAIL: u32 = 132;
export const RING_CONS_HEAD: u32 = 256;
export const RING_CONS_TAIL: u32 = 260;
export const RING_SLOTS: u32 = 384;
/** Mbuf u16 fields (mbuf-layout.ts H_REFCNT, H_NB_SEGS) as byte offsets. */
export const M_REFCNT: u32 = 2;
export const M_NB_SEGS: u32 = 4;
/** DPDK's RTE_PKTMBUF_FREE_PENDING_SZ (mbuf.ts FREE_PENDING_SZ). */
export const FREE_PENDING_SZ: u32 = 64;
/** Pool header: first handle and mbuf count (mempool.ts P_FIRST, P_N). */
export const POOL_FIRST: u32 = 7 * 4;
export const POOL_N: u32 = 2 * 4;
