// testpmd's --record-core-cycles and --record-burst-stats counters in the heap, declared once
// (scripts/gen-layouts.ts writes cycles-layout.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'lcoreCycles',
    doc: `
One forwarding lcore's time (testpmd's fwd_lcore total_cycles and its streams'
core_cycles), in nanoseconds of performance.now(): JavaScript has no TSC.
Float64 slots with one writer, the lcore (see ethdev/stats.ts); written only
when cycles are recorded, so the plain loop pays nothing.`,
    size: 64,
    prefix: 'LCC_STAT',
    index: { f64: 'LCC' },
    fields: {
      busyNs: { type: 'f64', at: 0, doc: 'Time in engine calls that moved packets (busy cycles).' },
      totalNs: { type: 'f64', at: 8, doc: "Time since the lcore entered its loop, updated every few passes (total cycles)." },
      busyPolls: { type: 'f64', at: 16, doc: 'Engine calls that moved packets.' },
      idlePolls: { type: 'f64', at: 24, doc: 'Engine calls that found nothing to do.' },
    },
  },
  {
    name: 'burstSpread',
    doc: `
testpmd's pkt_burst_stats: how many bursts carried 0, 1, … MAX_PKT_BURST
packets, for one stream's rx or tx queue. Float64 slots, one writer.`,
    size: 4160,
    prefix: 'BURST_SPREAD',
    index: { f64: 'BS' },
    fields: {
      count: { type: 'f64', at: 0, count: 513, doc: 'Bursts of each size, 0 to MAX_PKT_BURST (512).' },
    },
  },
);
