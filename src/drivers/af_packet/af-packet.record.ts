// net_af_packet's shared-memory records, declared once (scripts/gen-layouts.ts
// writes af-packet-layout.ts and af-packet-layout.as.ts): the queue block the
// kernels walk a ring with, and the kernel's TPACKET_V2 frame header.
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'afPacketQueue',
    doc: `
One net_af_packet queue's state in the heap, written at queue setup: which
ring (its frames are in a window of the heap where the packet socket's
PACKET_MMAP rings are mapped), where the walk is, and the counters. The rx and
tx kernels (af-packet.as.ts) and their twins (af-packet.twin.ts) read it; a
worker reopens the queue from the block's offset alone. The frames' heap
offsets are in a table (one u32 per frame, ring order) rather than computed:
frames never straddle a block, so with blocks larger than a frame the offset
is not index * frame size, and a load is cheaper than the division.`,
    size: 128,
    prefix: 'AFPQ',
    index: { u32: 'AFPQ_W' },
    fields: {
      pool: { type: 'u32', at: 0, doc: 'Rx: heap offset of the pool header mbufs come from (0 on a tx queue).' },
      stats: { type: 'u32', at: 4, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
      frames: { type: 'u32', at: 8, doc: "Heap offset of the frame table: `count` u32 heap offsets of the ring's frames." },
      count: { type: 'u32', at: 12, doc: 'Frames in the ring (tp_frame_nr).' },
      head: { type: 'u32', at: 16, doc: 'Index of the next frame to look at, as the kernel fills (rx) or drains (tx) in ring order.' },
      port: { type: 'u32', at: 20, doc: 'Port id stamped on received mbufs.' },
      fd: { type: 'u32', at: 24, doc: "The packet socket's fd, which the tx queue kicks." },
      frameCap: { type: 'u32', at: 28, doc: 'Tx: packet bytes a frame holds (tp_frame_size - AFP_TX_DATA); longer packets are dropped as errors.' },
      sent: { type: 'u32', at: 32, doc: 'Tx, out: frames the last burst set to TP_STATUS_SEND_REQUEST.' },
      full: { type: 'u32', at: 36, doc: 'Tx, out: 1 when the last burst stopped at a frame the kernel still holds (the ring is full).' },
      freed: { type: 'u32', at: 40, doc: "Tx, out: mbufFreeBulk's result for the packets the last burst took." },
      segs: { type: 'u32', at: 64, count: 16, doc: 'Rx: the extra segments a frame larger than the data room takes (rte_pktmbuf_alloc_bulk into here).' },
    },
    consts: {
      AFPQ_MAX_SEGS: { value: 17, doc: 'Most segments an rx packet may take: the head and AFPQ_SEGS_COUNT more; setup refuses a frame size needing more.' },
    },
  },
  {
    name: 'tpacket2Hdr',
    doc: `
struct tpacket2_hdr (linux/if_packet.h), the head of every frame in a
TPACKET_V2 ring, written by the kernel and by dpkit in turn: whoever tp_status
says owns the frame. A received packet starts tp_mac bytes into the frame; a
sent one starts at AFP_TX_DATA (TPACKET2_HDRLEN - sizeof(struct sockaddr_ll)),
where the kernel looks without PACKET_TX_HAS_OFF. tp_status is read with an
atomic load before the frame's bytes (acquire) and written with an atomic
store after them (release): the kernel on another CPU must see the bytes
before it sees the frame handed over.`,
    size: 32,
    prefix: 'TP2',
    index: { u32: 'TP2_W', u16: 'TP2_H' },
    fields: {
      status: { type: 'u32', at: 0, doc: 'tp_status: TP_STATUS_* (rx: KERNEL / USER; tx: AVAILABLE / SEND_REQUEST / SENDING).' },
      len: { type: 'u32', at: 4, doc: 'tp_len: the packet length on the wire (tx: what to send).' },
      snaplen: { type: 'u32', at: 8, doc: 'tp_snaplen: bytes of it in the frame (rx).' },
      mac: { type: 'u16', at: 12, doc: 'tp_mac: offset of the Ethernet header from the frame start (rx).' },
      net: { type: 'u16', at: 14, doc: 'tp_net: offset of the network header (rx).' },
      sec: { type: 'u32', at: 16, doc: 'tp_sec: rx timestamp, seconds.' },
      nsec: { type: 'u32', at: 20, doc: 'tp_nsec: rx timestamp, nanoseconds.' },
      vlanTci: { type: 'u16', at: 24, doc: 'tp_vlan_tci: the tag the kernel stripped (rx, with TP_STATUS_VLAN_VALID).' },
      vlanTpid: { type: 'u16', at: 26, doc: 'tp_vlan_tpid.' },
    },
    consts: {
      TP_STATUS_KERNEL: { value: 0, doc: 'Rx: the frame is the kernel\'s to fill.' },
      TP_STATUS_USER: { value: 1, doc: 'Rx: the frame holds a packet for dpkit.' },
      TP_STATUS_CSUMNOTREADY: { value: 0x8, doc: "Rx: the L4 checksum is not computed yet (the sender offloaded it, as veth's peer does): rx completes it." },
      TP_STATUS_VLAN_VALID: { value: 0x10, doc: 'Rx: tp_vlan_tci holds a stripped tag.' },
      TP_STATUS_AVAILABLE: { value: 0, doc: 'Tx: the frame is free for dpkit to fill.' },
      TP_STATUS_SEND_REQUEST: { value: 1, doc: 'Tx: the frame is filled; the next kick sends it.' },
      TPACKET2_HDRLEN: { value: 52, doc: 'TPACKET_ALIGN(sizeof(struct tpacket2_hdr)) + sizeof(struct sockaddr_ll): where rx data may start.' },
      AFP_TX_DATA: { value: 32, doc: 'Where a tx frame\'s packet starts: TPACKET2_HDRLEN - sizeof(struct sockaddr_ll).' },
    },
  },
);
