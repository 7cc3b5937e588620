// A forwarding lcore's garbage collections, handed to the main thread on request
// (scripts/gen-layouts.ts writes gc-layout.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'lcoreGc',
  doc: `
One forwarding lcore's garbage collections since it last answered. A polling
worker's event loop never turns, so a PerformanceObserver there hears nothing;
the lcore keeps a v8 GCProfiler running and, when the main thread bumps \`ask\`,
stops and restarts it at its next look at the stop flag, writes what it saw
here and sets \`answered\` to \`ask\`. The main thread asks again only once it
has read the answer, so each field has one writer at a time.`,
  size: 64 + 8 * 128,
  prefix: 'LCORE_GC',
  index: { u32: 'LGC', f64: 'LGCF' },
  consts: {
    LCORE_GC_PAUSES_MAX: { value: 128, doc: 'Pauses listed per answer; `count` goes on past it.' },
  },
  fields: {
    ask: { type: 'u32', at: 0, doc: 'Bumped by the main thread (Atomics) to ask for the collections so far.' },
    answered: { type: 'u32', at: 4, doc: 'Set to `ask` by the lcore (Atomics) once the fields below hold its answer.' },
    count: { type: 'u32', at: 8, doc: 'Collections since the previous answer.' },
    totalNs: { type: 'f64', at: 16, doc: 'Their pauses summed, ns.' },
    maxNs: { type: 'f64', at: 24, doc: 'The longest of them, ns.' },
    pauses: { type: 'f64', at: 64, count: 128, doc: 'Each pause, ns: the first LCORE_GC_PAUSES_MAX of `count`.' },
  },
});
