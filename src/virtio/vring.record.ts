// The split ring's descriptor, declared once (scripts/gen-layouts.ts writes
// vring-layout.ts and vring-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'vringDesc',
  doc: `
struct vring_desc (virtio 1.x 2.7.5), little-endian, written by the guest
and read by the device: a buffer's guest-physical address and length, and
the link to the next descriptor of its chain.`,
  size: 16,
  sizeName: 'DESC_SIZE',
  prefix: 'DESC',
  fields: {
    addr: { type: 'u64', at: 0, doc: 'Guest-physical address of the buffer.' },
    len: { type: 'u32', at: 8, doc: 'Buffer bytes (an indirect table: its bytes).' },
    flags: { type: 'u16', at: 12, doc: 'VRING_DESC_F_* bits.' },
    next: { type: 'u16', at: 14, doc: 'The next descriptor of the chain, with VRING_DESC_F_NEXT.' },
  },
  consts: {
    VRING_DESC_F_NEXT: { value: 1, doc: 'The chain continues at `next`.' },
    VRING_DESC_F_WRITE: { value: 2, doc: 'Device-writable (an rx buffer); else device-readable.' },
    VRING_DESC_F_INDIRECT: { value: 4, doc: 'The buffer is a table of descriptors (2.7.5.3).' },
  },
});
