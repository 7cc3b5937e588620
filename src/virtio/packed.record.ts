// The packed ring's descriptor, declared once (scripts/gen-layouts.ts writes
// packed-layout.ts and packed-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'packedDesc',
  doc: `
struct vring_packed_desc (virtio 1.1 2.8.13), little-endian. One ring of
these replaces the split ring's three parts: the driver makes a descriptor
available by writing its flags last with AVAIL equal to its wrap counter and
USED the opposite; the device marks one used by writing an element (the
buffer id, the bytes written) over the first descriptor of the chain it
consumed, AVAIL and USED both equal to its own wrap counter. A chain's buffer
id is in its last descriptor. Beside the ring, two 4-byte event suppression
structures (2.8.10): the driver's (desc_event_off_wrap, desc_event_flags)
and the device's.`,
  size: 16,
  sizeName: 'PDESC_SIZE',
  prefix: 'PDESC',
  fields: {
    addr: { type: 'u64', at: 0, doc: 'Guest-physical address of the buffer.' },
    len: { type: 'u32', at: 8, doc: 'Buffer bytes; in a used element, the bytes the device wrote.' },
    id: { type: 'u16', at: 12, doc: 'Buffer id (the last descriptor of a chain carries it); the used element returns it.' },
    flags: { type: 'u16', at: 14, doc: 'VRING_DESC_F_* bits and the AVAIL / USED pair.' },
  },
  consts: {
    VRING_PACKED_DESC_F_AVAIL: { value: 0x80, doc: 'AVAIL (bit 7): equal to the driver wrap counter when made available.' },
    VRING_PACKED_DESC_F_USED: { value: 0x8000, doc: 'USED (bit 15): equal to the device wrap counter when used (AVAIL too).' },
    PACKED_EVENT_SIZE: { value: 4, doc: 'Bytes of an event suppression structure (off_wrap u16, flags u16).' },
    PACKED_EVENT_FLAGS: { value: 2, doc: "Byte offset of an event suppression structure's flags." },
    RING_EVENT_FLAGS_ENABLE: { value: 0, doc: 'Notify on every used (device area: kick on every avail).' },
    RING_EVENT_FLAGS_DISABLE: { value: 1, doc: 'Do not notify.' },
    RING_EVENT_FLAGS_DESC: { value: 2, doc: 'Notify when the ring reaches off_wrap (EVENT_IDX).' },
  },
});
