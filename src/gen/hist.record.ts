// The latency histogram's block in the heap, declared once
// (scripts/gen-layouts.ts writes hist-layout.ts and hist-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'latHist',
  doc: `
A log-linear (HDR) histogram of latencies in nanoseconds: one header, then
one f64 count per bucket. Values below 2^bits have a bucket each; above,
each power of two is cut into 2^(bits-1) equal buckets, so a bucket is never
wider than 1 / 2^(bits-1) of the values it holds (bits 11: 3 significant
decimal digits, HdrHistogram's precision). Counts are f64 so a kernel and
its twin add them alike and they stay exact to 2^53. One writer: the lcore
whose probe checker owns it; the main thread reads and merges copies.`,
  size: 64,
  sizeName: 'LAT_HIST_HEADER',
  prefix: 'LH',
  index: { u32: 'LH_W', f64: 'LH_D' },
  fields: {
    bits: { type: 'u32', at: 0, doc: 'Significant binary digits: 2^bits linear buckets at the bottom, 2^(bits-1) per power of two above.' },
    nbCounts: { type: 'u32', at: 4, doc: 'Count slots after the header; a value past the last is counted in the last, and in overflow.' },
    count: { type: 'f64', at: 8, doc: 'Samples recorded.' },
    min: { type: 'f64', at: 16, doc: 'Smallest sample (exact); meaningless while count is 0.' },
    max: { type: 'f64', at: 24, doc: 'Largest sample (exact).' },
    sum: { type: 'f64', at: 32, doc: 'Sum of the samples, for the mean.' },
    overflow: { type: 'f64', at: 40, doc: 'Samples above the largest value the buckets hold (counted in the last bucket).' },
    counts: { type: 'f64', at: 64, count: 0, doc: 'The buckets: count of samples per bucket index.' },
  },
});
