// virtio_user's queue block, declared once (scripts/gen-layouts.ts writes
// guest-ring-layout.ts and guest-ring-layout.as.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'virtioQueue',
  doc: `
One virtio_user queue's state in the heap, the guest's side of a split or a
packed virtqueue: the indices and counters (f64 slots, moved by the TypeScript queue
and by the kernels alike), then the ring's numbers in heap byte offsets
(u32, written once at queue setup), then what one call passes. The kernels
(virtio-rxtx.as.ts) and their twins (virtio-rxtx.twin.ts) read it into locals
at entry and write back the indices they moved. A packed ring
(virtio-packed.ts, kernels in virtio-packed.as.ts) keeps ring positions in
availIdx and lastUsed, their wrap counters beside them, and hands out buffer
ids from the same free list (tx) or free stack (rx) as a split ring's heads.`,
  size: 192,
  prefix: 'VQG',
  index: { f64: 'G', u32: 'VQG_W' },
  fields: {
    availIdx: { type: 'f64', at: 0, doc: 'The avail index the guest last published (packed: the next ring position it makes available).' },
    lastUsed: { type: 'f64', at: 8, doc: 'The next used entry the guest reads (packed: its ring position).' },
    numFree: { type: 'f64', at: 16, doc: 'Free descriptors (tx) or heads not posted (rx).' },
    freeHead: { type: 'f64', at: 24, doc: 'Tx: the first free descriptor (packed: the first free buffer id).' },
    kicks: { type: 'f64', at: 32, doc: 'Counter: notifications sent to the device.' },
    badUsed: { type: 'f64', at: 40, doc: 'Counter: used entries the device got wrong.' },
    oldest: { type: 'f64', at: 48, doc: 'Tx with IN_ORDER: the head (packed: the buffer id) of the oldest chain in flight.' },
    desc: { type: 'u32', at: 64, doc: 'Heap offset of the descriptor table.' },
    availRing: { type: 'u32', at: 68, doc: "Heap offset of the avail ring's entries." },
    used: { type: 'u32', at: 72, doc: 'Heap offset of the used ring.' },
    mask: { type: 'u32', at: 76, doc: 'num - 1.' },
    num: { type: 'u32', at: 80, doc: 'Ring size.' },
    sw: { type: 'u32', at: 84, doc: 'Heap offset of the software ring: the mbuf each descriptor carries.' },
    stats: { type: 'u32', at: 88, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
    port: { type: 'u32', at: 92, doc: 'Rx: port id stamped on received mbufs.' },
    cap: { type: 'u32', at: 96, doc: 'Rx: bytes a posted buffer holds, header included.' },
    limit: { type: 'u32', at: 100, doc: 'Rx: descriptors in posted chains (heads times descriptors per buffer).' },
    free: { type: 'u32', at: 104, doc: 'Rx: heap offset of the free-heads stack (u16 per head).' },
    headroom: { type: 'u32', at: 108, doc: "Rx: a fresh mbuf's header offset from its buffer (pool headroom minus the header)." },
    nextFree: { type: 'u32', at: 112, doc: 'Tx: heap offset of the free-list links (u16 per descriptor).' },
    ndesc: { type: 'u32', at: 116, doc: 'Tx: heap offset of the descriptors per chain (u16 per head).' },
    gpaHi: { type: 'u32', at: 120, doc: 'High word of every guest-physical address (GPA_BASE above 4 GiB).' },
    flags: { type: 'u32', at: 124, doc: 'VQG_F_* bits.' },
    ready: { type: 'u32', at: 128, doc: 'Call (rx): used entries ready after lastUsed, as the caller read them.' },
    idx: { type: 'u32', at: 132, doc: 'Call (tx): the avail index to fill from (not yet published).' },
    availWrap: { type: 'f64', at: 136, doc: "Packed: the driver's wrap counter (0 or 1) at availIdx." },
    usedWrap: { type: 'f64', at: 144, doc: 'Packed: the wrap counter (0 or 1) a used element at lastUsed carries.' },
    linkState: { type: 'u32', at: 152, doc: "Packed: the port's link state (virtio_user's control word) this queue last followed: odd, its mbufs released and ring cleared; even, its ring set up afresh. The control thread waits for it before handing the rings to a new backend." },
  },
  consts: {
    VQG_F_IN_ORDER: { value: 1, doc: 'Tx: VIRTIO_F_IN_ORDER negotiated.' },
  },
});
