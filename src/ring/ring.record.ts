// The ring header, declared once (scripts/gen-layouts.ts writes ring-layout.ts
// and ring-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'ring',
  doc: `
rte_ring in the heap. Producer and consumer indices sit 128 bytes apart so
the adjacent-line prefetcher does not make the two sides share a line (as
rte_ring does); the slots follow the header. Size, mask, capacity and flags
are read-only after create; the magic is stored last.`,
  size: 384,
  sizeName: 'RING_HEADER_SIZE',
  prefix: 'RING',
  index: { u32: 'RING_W' },
  fields: {
    magic: { type: 'u32', at: 0, doc: '"RING".' },
    size: { type: 'u32', at: 4, doc: 'Slots (a power of two).' },
    mask: { type: 'u32', at: 8, doc: 'size - 1.' },
    capacity: { type: 'u32', at: 12, doc: 'Objects the ring holds: size - 1, or exactly the count asked (RING_F_EXACT_SZ).' },
    flags: { type: 'u32', at: 16, doc: 'RING_F_* bits.' },
    prodHead: { type: 'u32', at: 128, doc: "Producers' reservation index (free-running, wraps at 2^32)." },
    prodTail: { type: 'u32', at: 132, doc: 'Published by producers: consumers may read slots before it.' },
    consHead: { type: 'u32', at: 256, doc: "Consumers' reservation index." },
    consTail: { type: 'u32', at: 260, doc: 'Released by consumers: producers may overwrite slots before it.' },
    slots: { type: 'u32', at: 384, count: 0, doc: 'The objects, `size` of them.' },
  },
});
