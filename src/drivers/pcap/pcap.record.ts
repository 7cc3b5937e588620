// net_pcap's infinite_rx replay, declared once (scripts/gen-layouts.ts writes
// pcap-layout.ts and pcap-layout.as.ts): the replay queue's block and the
// table of the capture's packets it cycles through.
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'pcapReplay',
    doc: `
One replaying rx queue's state in the heap (infinite_rx=1), written when the
queue is set up: what the replay kernel (pcap.as.ts) and its twin
(pcap.twin.ts) read, and the cursor they move. A queue reopened by another
lcore carries on from the cursor.`,
    size: 64,
    prefix: 'REPLAY',
    index: { u32: 'REPLAY_W' },
    fields: {
      cursor: { type: 'u32', at: 0, doc: 'The next table entry to replay; wraps at `count`.' },
      count: { type: 'u32', at: 4, doc: 'Entries in the table (packets in the capture), at least 1.' },
      table: { type: 'u32', at: 8, doc: 'Heap offset of the table (pcapReplayEntry records).' },
      port: { type: 'u32', at: 12, doc: 'Port id stamped on received mbufs.' },
      room: { type: 'u32', at: 16, doc: "Data room of one of the pool's mbufs: a longer packet is a chain, which TypeScript builds." },
      stats: { type: 'u32', at: 20, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
    },
  },
  {
    name: 'pcapReplayEntry',
    doc: `
One packet of a replayed capture: where its bytes were loaded in the heap, and
its length (a replay stamps no timestamp, as DPDK's infinite_rx).`,
    size: 8,
    prefix: 'REPLAY_ENTRY',
    index: { u32: 'REPLAY_ENTRY_W' },
    fields: {
      data: { type: 'u32', at: 0, doc: "Heap offset of the packet's bytes." },
      caplen: { type: 'u32', at: 4, doc: 'Bytes captured.' },
    },
  },
);
