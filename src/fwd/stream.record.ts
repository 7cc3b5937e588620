// A forwarding stream's counters, declared once (scripts/gen-layouts.ts writes
// stream-layout.ts and stream-layout.as.ts): the engines add to them, the csum
// kernel too, and testpmd reads them while the lcores run.
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'fwdStreamStats',
  doc: `
One forwarding stream's counters (testpmd's fwd_stream counts): Float64 slots
(exact to 2^53) with one writer, the lcore running the stream, as a queue's
(ethdev/stats.ts says why plain stores are safe). One cache line per stream.
FwdStream.stats is the block's first slot as a Float64 index: an engine adds
with f64[fs.stats + FS_TX_PACKETS], a kernel at the byte offset
stats * 8 + FS_STAT_TX_PACKETS.`,
  size: 64,
  prefix: 'FS_STAT',
  index: { f64: 'FS' },
  fields: {
    rxPackets: { type: 'f64', at: 0, doc: 'Packets the stream received (rx-packets).' },
    txPackets: { type: 'f64', at: 8, doc: 'Packets the tx queue took (tx-packets).' },
    fwdDropped: { type: 'f64', at: 16, doc: 'Packets the tx queue refused, freed by the engine (tx-dropped).' },
    rxBadIpCsum: { type: 'f64', at: 24, doc: 'Packets received with a bad IPv4 header checksum (csum engine: rx-bad-ip-csum).' },
    rxBadL4Csum: { type: 'f64', at: 32, doc: 'Packets received with a bad L4 checksum (csum engine: rx-bad-l4-csum).' },
  },
  consts: {
    FS_SLOTS: { value: 8, doc: 'Float64 slots per stream block (one cache line: streams on different lcores share none).' },
  },
});
