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
);
