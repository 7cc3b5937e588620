// The queue statistics blocks, declared once (scripts/gen-layouts.ts writes
// stats-layout.ts and stats-layout.as.ts). Why they are safe without locks:
// see stats.ts.
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'rxqStats',
    doc: `
One rx queue's counters: Float64 slots (exact to 2^53), one writer (the lcore
polling the queue), one cache line per queue so queues share no line.`,
    size: 64,
    prefix: 'RXQ_STAT',
    index: { f64: 'RXQ' },
    fields: {
      packets: { type: 'f64', at: 0, doc: 'Packets received (q_ipackets).' },
      bytes: { type: 'f64', at: 8, doc: 'Bytes received (q_ibytes).' },
      errors: { type: 'f64', at: 16, doc: 'Erroneous packets (q_errors / ierrors).' },
      missed: { type: 'f64', at: 24, doc: 'Dropped for lack of descriptors (imissed).' },
      nombuf: { type: 'f64', at: 32, doc: 'Mbuf allocation failures (rx_nombuf).' },
    },
  },
  {
    name: 'txqStats',
    doc: `
One tx queue's counters, laid out as an rx block (packets, bytes, errors at
the same slots).`,
    size: 64,
    prefix: 'TXQ_STAT',
    index: { f64: 'TXQ' },
    fields: {
      packets: { type: 'f64', at: 0, doc: 'Packets sent (q_opackets).' },
      bytes: { type: 'f64', at: 8, doc: 'Bytes sent (q_obytes).' },
      errors: { type: 'f64', at: 16, doc: 'Packets the driver failed to send (oerrors).' },
    },
  },
  {
    name: 'pktStats',
    doc: `
One queue's per-packet counters, kept only when a port asks for them
(net_stats=1 on net_vhost and virtio_user): what DPDK's vhost library and
virtio PMD count for every packet (sizes in RFC 2819 bins, multicast,
broadcast), reading each packet's length and its first line.`,
    size: 128,
    prefix: 'PKT_STAT',
    index: { f64: 'PKTS' },
    fields: {
      undersize: { type: 'f64', at: 0, doc: 'Packets under 64 bytes; the size bins follow, 8 bytes apart.' },
      size64: { type: 'f64', at: 8, doc: 'Packets of 64 bytes.' },
      size65: { type: 'f64', at: 16, doc: 'Packets of 65 to 127 bytes.' },
      size128: { type: 'f64', at: 24, doc: 'Packets of 128 to 255 bytes.' },
      size256: { type: 'f64', at: 32, doc: 'Packets of 256 to 511 bytes.' },
      size512: { type: 'f64', at: 40, doc: 'Packets of 512 to 1023 bytes.' },
      size1024: { type: 'f64', at: 48, doc: 'Packets of 1024 to 1518 bytes.' },
      size1519: { type: 'f64', at: 56, doc: 'Packets over 1518 bytes.' },
      multicast: { type: 'f64', at: 64, doc: 'Packets to a multicast address (broadcast not included).' },
      broadcast: { type: 'f64', at: 72, doc: 'Packets to ff:ff:ff:ff:ff:ff (the slot after multicast).' },
    },
  },
);
