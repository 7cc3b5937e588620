// net_faulty's queue block, declared once (scripts/gen-layouts.ts writes
// faulty-layout.ts and faulty-layout.as.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'faultyQueue',
  doc: `
One net_faulty queue pair: what tx puts on the delay line and rx takes off
it, the fault probabilities from the devargs, the seeded random state, and
the faults made (xstats). The line is a single-producer single-consumer ring
of handles with a release time each: tx publishes \`tail\`, rx publishes
\`head\`, each with Atomics, so the two sides may run on two lcores.`,
  size: 128,
  prefix: 'FQ',
  index: { u32: 'FQ_W', f64: 'FQ_D' },
  fields: {
    head: { type: 'u32', at: 0, doc: 'Next slot rx takes (rx writes).' },
    tail: { type: 'u32', at: 4, doc: 'Next slot tx fills (tx writes).' },
    rng: { type: 'u32', at: 8, doc: 'xorshift32 state (tx writes); never 0.' },
    size: { type: 'u32', at: 12, doc: 'Slots on the line, a power of two.' },
    slots: { type: 'u32', at: 16, doc: 'Heap offset of the handles (u32 each).' },
    times: { type: 'u32', at: 20, doc: 'Heap offset of the release times (f64 each, ns of nowNs()).' },
    drop: { type: 'f64', at: 24, doc: 'Probability a packet is dropped.' },
    dup: { type: 'f64', at: 32, doc: 'Probability a packet is delivered twice.' },
    swap: { type: 'f64', at: 40, doc: 'Probability a packet swaps places with the next of its burst.' },
    delayNs: { type: 'f64', at: 48, doc: 'Time a packet stays on the line, ns.' },
    dropped: { type: 'f64', at: 56, doc: 'Packets dropped.' },
    duplicated: { type: 'f64', at: 64, doc: 'Packets delivered twice.' },
    swapped: { type: 'f64', at: 72, doc: 'Pairs swapped.' },
  },
});
