// The vring state block, declared once (scripts/gen-layouts.ts writes
// vring-state-layout.ts and vring-state-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'vringState',
  doc: `
A vring's state as the backend keeps it in the heap: what the control plane
set through vhost-user messages (vhost-dev.ts), published for whichever lcore
polls the queue, and the indices and counters that lcore moves. f64 slots, two
cache lines per vring; the control plane bumps \`gen\` after every change, and
the polling lcore (vhost-queue.ts) re-reads the block when it sees a new
generation.`,
  size: 128,
  prefix: 'VRS',
  index: { f64: 'S' },
  fields: {
    gen: { type: 'f64', at: 0, doc: 'Generation: bumped by the control plane after every change.' },
    ready: { type: 'f64', at: 8, doc: '1 when the ring may be used: addresses translated, memory table set, ring enabled.' },
    num: { type: 'f64', at: 16, doc: 'Ring size.' },
    desc: { type: 'f64', at: 24, doc: 'Guest-physical address of the descriptor table.' },
    avail: { type: 'f64', at: 32, doc: 'Guest-physical address of the avail ring.' },
    used: { type: 'f64', at: 40, doc: 'Guest-physical address of the used ring.' },
    call: { type: 'f64', at: 48, doc: "Heap offset of the notifier that calls the guest (NO_NOTIFIER = -1)." },
    kick: { type: 'f64', at: 56, doc: "Heap offset of the guest's kick notifier (NO_NOTIFIER = -1)." },
    lastAvail: { type: 'f64', at: 64, doc: 'The next avail entry to take (u16 ring index; packed: position | wrap << 15).' },
    lastUsed: { type: 'f64', at: 72, doc: 'The next used entry to fill (u16 ring index; packed: position | wrap << 15).' },
    flags: { type: 'f64', at: 80, doc: 'F_* bits from the negotiated features.' },
    badChains: { type: 'f64', at: 88, doc: 'Counter (one writer, the polling lcore): chains refused.' },
    drops: { type: 'f64', at: 96, doc: 'Counter: packets too big for a (non-mergeable) guest buffer.' },
    calls: { type: 'f64', at: 104, doc: 'Counter: notifications sent to the guest.' },
    availReads: { type: 'f64', at: 112, doc: "Counter: reads of the guest's avail index." },
    nombuf: { type: 'f64', at: 120, doc: 'Counter: failed mbuf allocations (when no port counts them).' },
  },
  consts: {
    F_MRG_RXBUF: { value: 1, doc: 'VIRTIO_NET_F_MRG_RXBUF negotiated.' },
    F_EVENT_IDX: { value: 2, doc: 'VIRTIO_RING_F_EVENT_IDX negotiated.' },
    F_INDIRECT: { value: 4, doc: 'VIRTIO_RING_F_INDIRECT_DESC negotiated.' },
    F_PACKED: { value: 16, doc: 'VIRTIO_F_RING_PACKED negotiated: desc is the packed ring, avail and used the driver and device event areas, and lastAvail / lastUsed hold a position with its wrap counter in bit 15 (as SET_VRING_BASE carries them).' },
    F_AVAIL_PER_PACKET: { value: 8, doc: "The vhost enqueue study's other arm: read the avail index before every packet instead of once per burst." },
  },
});
