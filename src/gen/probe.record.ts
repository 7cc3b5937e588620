// The probe stamper's and checker's blocks in the heap, declared once
// (scripts/gen-layouts.ts writes probe-layout.ts and probe-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'probeTx',
    doc: `
One sending stream's stamper (probeStamp in probe.as.ts, twin in
probe.twin.ts): the stream id and next sequence number it writes into each
packet's probe signature, and the tx time of the burst, which the caller
stores (nowNs()) just before the call: a burst is published at once, so its
packets share one timestamp, as DPDK reads the TSC once per burst.`,
    size: 64,
    prefix: 'PTX',
    index: { u32: 'PTX_W', f64: 'PTX_D' },
    fields: {
      stream: { type: 'u32', at: 0, doc: 'Stream id written into every probe (below 2^24).' },
      seq: { type: 'f64', at: 8, doc: 'Sequence number of the next probe (an integer; its low 32 bits travel).' },
      now: { type: 'f64', at: 16, doc: 'Tx time of the burst being stamped, ns of CLOCK_MONOTONIC (nowNs()).' },
      stamped: { type: 'f64', at: 24, doc: 'Packets stamped.' },
      short: { type: 'f64', at: 32, doc: 'Packets too short for a signature: sent unstamped, no sequence number used.' },
    },
  },
  {
    name: 'probeRx',
    doc: `
One lcore's probe checker (probeCheck in probe.as.ts): the array of
per-stream records it fills and the rx time of the burst, which the caller
stores just after rxBurst. One writer, the lcore; the main thread reads.`,
    size: 64,
    prefix: 'PRX',
    index: { u32: 'PRX_W', f64: 'PRX_D' },
    fields: {
      streams: { type: 'u32', at: 0, doc: 'Heap offset of the first probeStream record.' },
      nbStreams: { type: 'u32', at: 4, doc: 'Streams tracked: ids 0 .. nbStreams-1.' },
      now: { type: 'f64', at: 8, doc: 'Rx time of the burst being checked, ns of CLOCK_MONOTONIC.' },
      probes: { type: 'f64', at: 16, doc: 'Packets that carried a probe of a tracked stream.' },
      foreign: { type: 'f64', at: 24, doc: 'Packets without one: too short, wrong magic, or a stream id past nbStreams.' },
      skew: { type: 'f64', at: 32, doc: 'Probes stamped later than they were received (another clock): counted, not in the histogram.' },
    },
    consts: {
      PROBE_SIG_LEN: { value: 16, doc: 'Bytes of the signature, the last of the first segment: seq u32, stream u24 + magic u8, tx time u48, checksum adjust u16.' },
      PROBE_MAGIC: { value: 0xa5, doc: "The signature's byte 7: tells a probe from other traffic." },
      PROBE_WINDOW: { value: 1024, doc: 'Sequence numbers behind the highest seen whose arrival is remembered (duplicates are told within it).' },
    },
  },
  {
    name: 'probeStream',
    doc: `
What a checker knows of one stream: the lowest and highest sequence numbers
seen, arrivals, duplicates, reordered arrivals, and a bitmap of the last
PROBE_WINDOW sequence numbers (bit s mod PROBE_WINDOW) that tells a duplicate
from a late packet. Its latency histogram is a separate block (hist.record.ts).`,
    size: 192,
    prefix: 'PST',
    index: { u32: 'PST_W', f64: 'PST_D' },
    fields: {
      hist: { type: 'u32', at: 0, doc: "Heap offset of the stream's latency histogram." },
      started: { type: 'u32', at: 4, doc: '1 once a probe of the stream arrived.' },
      base: { type: 'f64', at: 8, doc: 'Lowest sequence number seen.' },
      maxSeq: { type: 'f64', at: 16, doc: 'Highest sequence number seen (32-bit sequence numbers extended past wrap-around).' },
      received: { type: 'f64', at: 24, doc: 'Distinct probes received.' },
      dups: { type: 'f64', at: 32, doc: 'Probes received again (within the window).' },
      reordered: { type: 'f64', at: 40, doc: 'Probes that arrived after one with a higher sequence number.' },
      late: { type: 'f64', at: 48, doc: 'Of those, the ones older than the window (counted as new: a duplicate that old goes untold).' },
      seen: { type: 'u32', at: 64, count: 32, doc: 'Bitmap of the window: bit (s mod 1024) set when s arrived.' },
    },
  },
);
