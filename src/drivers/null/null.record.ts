// net_null's queue block, declared once (scripts/gen-layouts.ts writes
// null-layout.ts and null-layout.as.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'nullQueue',
  doc: `
One net_null queue's state in the heap, written once at queue setup: what
the rx and tx kernels (null.as.ts) and their twins (null.twin.ts) read, as
DPDK's burst functions read their queue struct. The queue is reopened in a
worker from the block's offset alone.`,
  size: 64,
  prefix: 'NULLQ',
  index: { u32: 'NULLQ_W' },
  fields: {
    pool: { type: 'u32', at: 0, doc: 'Rx: heap offset of the pool header mbufs come from (0 on a tx queue).' },
    stats: { type: 'u32', at: 4, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
    dummy: { type: 'u32', at: 8, doc: "Heap offset of the port's dummy packet, which copy=1 copies from (rx) and into (tx)." },
    size: { type: 'u32', at: 12, doc: 'Packet size (devargs size=).' },
    port: { type: 'u32', at: 16, doc: 'Port id stamped on received mbufs.' },
    flags: { type: 'u32', at: 20, doc: 'NULLQ_F_* bits (devargs copy=, no-rx=).' },
  },
  consts: {
    NULLQ_F_COPY: { value: 1, doc: 'copy=1: copy `size` bytes into each received packet and out of each sent one.' },
    NULLQ_F_NO_RX: { value: 2, doc: 'no-rx=1: rx returns nothing.' },
  },
});
