// net_nicsim's shared-memory records, declared once (scripts/gen-layouts.ts
// writes nicsim-layout.ts and nicsim-layout.as.ts): the descriptors, laid out
// like Intel's, and the queue blocks the driver (an lcore) and the model's
// hardware thread (hw.ts, its kernel nicsim.as.ts) share.
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'nicsimTxDesc',
    doc: `
A tx descriptor: 16 bytes, as Intel's. The driver writes the buffer address,
the segment's length and command bits; the hardware writes DD into status once
it has read the bytes, on descriptors with RS only. Intel's hardware writes DD
into the descriptor's second quadword; here status has its own word, so the
write-back is one atomic store.`,
    size: 16,
    prefix: 'TXD',
    index: { u32: 'TXD_W' },
    fields: {
      addr: { type: 'u32', at: 0, doc: 'Heap offset of the segment\'s data.' },
      addrHi: { type: 'u32', at: 4, doc: 'Address high word: always 0 (heap offsets are 32-bit).' },
      lenCmd: { type: 'u32', at: 8, doc: 'Segment length (bits 0..15) | command (bits 16..31: TX_CMD_EOP, TX_CMD_RS).' },
      status: { type: 'u32', at: 12, doc: 'TX_STATUS_DD once the hardware has sent it (RS descriptors only).' },
    },
    consts: {
      TX_CMD_EOP: { value: 0x1, doc: 'Last segment of a packet (i40e\'s I40E_TX_DESC_CMD_EOP).' },
      TX_CMD_RS: { value: 0x2, doc: 'Report status: write DD back here (I40E_TX_DESC_CMD_RS).' },
      TX_STATUS_DD: { value: 0x1, doc: 'Descriptor done: the driver may free this batch.' },
    },
  },
  {
    name: 'nicsimRxDesc',
    doc: `
An rx descriptor: 16 bytes. The driver writes an empty mbuf's data address and
room; the hardware writes the packet's length, then DD | EOP (one atomic
store, after the bytes and the length).`,
    size: 16,
    prefix: 'RXD',
    index: { u32: 'RXD_W' },
    fields: {
      addr: { type: 'u32', at: 0, doc: 'Heap offset the packet\'s bytes go to.' },
      bufLen: { type: 'u32', at: 4, doc: 'Bytes of room there; a longer packet is an rx error.' },
      len: { type: 'u32', at: 8, doc: 'Packet length, written back by the hardware.' },
      status: { type: 'u32', at: 12, doc: 'RX_STATUS_DD | RX_STATUS_EOP once filled.' },
    },
    consts: {
      RX_STATUS_DD: { value: 0x1, doc: 'Descriptor done (i40e\'s rx DD bit position).' },
      RX_STATUS_EOP: { value: 0x2, doc: 'End of packet (i40e\'s rx EOP bit position).' },
    },
  },
  {
    name: 'nicsimTxQueue',
    doc: `
A tx queue's block, three cache lines: the tail register the driver writes
(line 0), the line the hardware owns (its head, and what it reads), and the
driver's own state (i40e's tx_tail, nb_tx_free, tx_next_dd, tx_next_rs and
the thresholds). Separate lines: neither side's stores bounce the other's
line except for the tail, as on a real NIC's doorbell. The hardware kernel
(nicsimXmit) takes the block's offset alone.`,
    size: 192,
    prefix: 'NICTXQ',
    index: { u32: 'NICTXQ_W', f64: 'NICTXQ_S' },
    fields: {
      tail: { type: 'u32', at: 0, doc: 'Tail register: the driver posts descriptors up to here (atomic store, the doorbell).' },
      head: { type: 'u32', at: 64, doc: 'The hardware\'s next descriptor (atomic store: the driver may read it).' },
      ring: { type: 'u32', at: 68, doc: 'Heap offset of the descriptor ring.' },
      nbDesc: { type: 'u32', at: 72, doc: 'Descriptors in the ring.' },
      peerRxq: { type: 'u32', at: 76, doc: 'Heap offset of the rx queue block the packets land in (the cable\'s other end), written by the hardware thread when it reads its port table; 0 while that end is down.' },
      linkDrops: { type: 'f64', at: 80, doc: 'Packets the hardware dropped because the cable\'s other end was down (xstat tx_qN_link_down_drops).' },
      swTail: { type: 'u32', at: 128, doc: 'Driver: the next descriptor it writes (i40e\'s tx_tail).' },
      nbFree: { type: 'u32', at: 132, doc: 'Driver: free descriptors (nb_tx_free).' },
      nextDd: { type: 'u32', at: 136, doc: 'Driver: where it looks for DD next (tx_next_dd).' },
      nextRs: { type: 'u32', at: 140, doc: 'Driver: where it sets RS next (tx_next_rs).' },
      rsThresh: { type: 'u32', at: 144, doc: 'tx_rs_thresh.' },
      freeThresh: { type: 'u32', at: 148, doc: 'tx_free_thresh.' },
      reclaims: { type: 'f64', at: 160, doc: 'Driver: reclaim batches done (xstat tx_qN_reclaims).' },
    },
  },
  {
    name: 'nicsimRxQueue',
    doc: `
An rx queue's block, three cache lines as a tx queue's: the tail register
(line 0, the driver writes), the hardware's line (head, ring, size and where
it counts drops), and the driver's (i40e's rx_tail and rx_free_trigger).`,
    size: 192,
    prefix: 'NICRXQ',
    index: { u32: 'NICRXQ_W' },
    fields: {
      tail: { type: 'u32', at: 0, doc: 'Tail register: the hardware may fill descriptors up to (not including) here.' },
      head: { type: 'u32', at: 64, doc: 'The hardware\'s next descriptor.' },
      ring: { type: 'u32', at: 68, doc: 'Heap offset of the descriptor ring.' },
      nbDesc: { type: 'u32', at: 72, doc: 'Descriptors in the ring.' },
      stats: { type: 'u32', at: 76, doc: 'Heap offset of the queue\'s statistics block (ethdev/stats.record.ts): the hardware counts imissed and errors there.' },
      next: { type: 'u32', at: 128, doc: 'Driver: the next descriptor it takes (i40e\'s rx_tail).' },
      trigger: { type: 'u32', at: 132, doc: 'Driver: the descriptor whose taking refills the block behind it (rx_free_trigger).' },
    },
  },
);
