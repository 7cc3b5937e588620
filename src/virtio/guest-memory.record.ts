// Guest memory's region table, declared once (scripts/gen-layouts.ts writes
// guest-memory-layout.ts and guest-memory-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'guestMemory',
    doc: `
Guest memory's region table in the heap (vhost-user's SET_MEM_TABLE), read
by every lcore that translates a guest address: the TypeScript chain walk
(GuestMemory.translate) and the vhost kernels (guest-memory.as.ts). f64
words: guest-physical addresses are 64-bit, exact as f64 up to 2^53. The
control plane sets the count to 0 while it rewrites the regions.`,
    size: 200,
    sizeName: 'GUEST_MEMORY_BYTES',
    prefix: 'GM',
    index: { f64: 'GM_F' },
    fields: {
      count: { type: 'f64', at: 0, doc: 'Regions in use, sorted by guest address.' },
      regions: { type: 'f64', at: 8, count: 24, doc: 'MAX_REGIONS guestRegion records (3 f64 words each).' },
    },
    consts: {
      MAX_REGIONS: { value: 8, doc: "vhost-user's VHOST_MEMORY_MAX_NREGIONS." },
    },
  },
  {
    name: 'guestRegion',
    doc: `One region of the table: a guest-physical range backed by heap bytes.`,
    size: 24,
    prefix: 'GR',
    index: { f64: 'GR_F' },
    fields: {
      gpa: { type: 'f64', at: 0, doc: 'Guest-physical address of the first byte.' },
      size: { type: 'f64', at: 8, doc: 'Bytes.' },
      offset: { type: 'f64', at: 16, doc: 'Heap byte offset of the first byte.' },
    },
  },
);
