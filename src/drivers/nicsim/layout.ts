/**
 * net_nicsim's shared-memory layout: descriptors laid out like Intel's, and
 * the per-queue blocks the driver (lcore side) and the model's hardware
 * thread share. The hardware kernel (src/kernels/as/nicsim.as.ts) mirrors these
 * values; test/kernels/nicsim-kernel.test.ts checks them.
 *
 * A descriptor is 16 bytes, four u32 words:
 *   tx: buffer address, address high (always 0: heap offsets are 32-bit),
 *       length (bits 0..15) | command (bits 16..31: EOP, RS), status (DD)
 *   rx: buffer address, buffer length, written-back packet length, status (DD, EOP)
 * Intel's hardware writes DD back into the descriptor's second quadword; here
 * status has its own word, so the write-back is one atomic store.
 *
 * Queue blocks are three cache lines: the tail register the driver writes,
 * the line the hardware owns (its head and what it reads at setup), and the
 * driver's own state. Separate lines: neither side's stores bounce the
 * other's line except for the tail, as on a real NIC's doorbell.
 */

/** Bytes per descriptor. */
export const DESC_SIZE = 16;
/** u32 words per descriptor, and log2 of it (descriptor index to word index). */
export const DESC_WORDS = 4;
export const DESC_WORD_SHIFT = 2;

/** Tx descriptor words. */
export const TXD_ADDR = 0;
export const TXD_ADDR_HI = 1;
export const TXD_LEN_CMD = 2;
export const TXD_STATUS = 3;
/** Command bits (i40e's I40E_TX_DESC_CMD_EOP / _RS values). */
export const TX_CMD_EOP = 0x1;
export const TX_CMD_RS = 0x2;
/** Status written back on RS descriptors once the hardware has sent them. */
export const TX_STATUS_DD = 0x1;

/** Rx descriptor words. */
export const RXD_ADDR = 0;
export const RXD_BUF_LEN = 1;
export const RXD_LEN = 2;
export const RXD_STATUS = 3;
/** Status bits (i40e's rx DD and EOP bit positions). */
export const RX_STATUS_DD = 0x1;
export const RX_STATUS_EOP = 0x2;

/** Bytes per queue block (three cache lines). */
export const QBLOCK_SIZE = 192;

/** Tx queue block, u32 words. Line 0: the tail register (driver writes, hardware reads). */
export const TXQ_TAIL = 0;
/** Line 1, the hardware's: its head, and the ring it walks. */
export const TXQ_HEAD = 16;
export const TXQ_RING = 17;
export const TXQ_NB_DESC = 18;
/** f64 slot (word 20..21): packets the hardware dropped because the cable's other end was down. */
export const TXQ_LINK_DROPS_W = 20;
/** Line 2, the driver's: i40e's tx_tail, nb_tx_free, tx_next_dd, tx_next_rs and the thresholds. */
export const TXQ_SW_TAIL = 32;
export const TXQ_NB_FREE = 33;
export const TXQ_NEXT_DD = 34;
export const TXQ_NEXT_RS = 35;
export const TXQ_RS_THRESH = 36;
export const TXQ_FREE_THRESH = 37;
/** f64 slot (words 40..41): reclaim batches done, an xstat. */
export const TXQ_RECLAIMS_W = 40;

/** Rx queue block, u32 words. Line 0: the tail register. */
export const RXQ_TAIL = 0;
/** Line 1, the hardware's: head, ring, size, and the queue's counter block (f64 index) it counts drops in. */
export const RXQ_HEAD = 16;
export const RXQ_RING = 17;
export const RXQ_NB_DESC = 18;
export const RXQ_STATS = 19;
/** Line 2, the driver's: i40e's rx_tail and rx_free_trigger. */
export const RXQ_NEXT = 32;
export const RXQ_TRIGGER = 33;
