// The vhost queue block the fast kernels read, declared once
// (scripts/gen-layouts.ts writes vhost-queue-layout.ts and vhost-queue-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'vhostQueue',
  doc: `
One vring's data-path block: the ring as the polling lcore (vhost-queue.ts)
translated it from the vring state, in heap byte offsets, for the enqueue
and dequeue kernels (vhost-queue.as.ts) and their twins (vhost-queue.twin.ts)
to read into locals at entry, as DPDK's burst functions read their
vhost_virtqueue. The ring's part is written when the lcore (re)opens the
ring (a new generation); the call's part (the indices and the room left)
before each call. One writer: the polling lcore.`,
  size: 64,
  prefix: 'VQ',
  index: { u32: 'VQ_W' },
  fields: {
    desc: { type: 'u32', at: 0, doc: 'Heap offset of the descriptor table.' },
    availRing: { type: 'u32', at: 4, doc: "Heap offset of the avail ring's entries (its index is the u16 before them)." },
    used: { type: 'u32', at: 8, doc: 'Heap offset of the used ring (flags, index, then 8-byte entries).' },
    mask: { type: 'u32', at: 12, doc: 'num - 1.' },
    num: { type: 'u32', at: 16, doc: 'Ring size.' },
    table: { type: 'u32', at: 20, doc: "Heap offset of the device's guest memory table (virtio/guest-memory.record.ts)." },
    port: { type: 'u32', at: 24, doc: 'Port id stamped on dequeued mbufs.' },
    flags: { type: 'u32', at: 28, doc: 'VQ_F_* bits.' },
    lastAvail: { type: 'u32', at: 32, doc: 'Call: the next avail entry to take.' },
    usedIdx: { type: 'u32', at: 36, doc: 'Call: the next used entry to fill.' },
    avail: { type: 'u32', at: 40, doc: 'Call (enqueue): avail entries known to be available after lastAvail.' },
    segRoom: { type: 'u32', at: 44, doc: "Call (dequeue): an mbuf's room for packet bytes." },
    addrs: { type: 'u32', at: 48, doc: "Call: heap offset of the scratch where the first pass notes each packet's guest bytes for the second." },
    wrap: { type: 'u32', at: 52, doc: 'Call (packed rings): VQ_WRAP_AVAIL and VQ_WRAP_USED, the wrap counters of lastAvail and usedIdx (which are ring positions there, not u16 indices).' },
  },
  consts: {
    VQ_WRAP_AVAIL: { value: 1, doc: "Packed: the device's avail wrap counter (a descriptor at lastAvail is available when its AVAIL bit equals it and USED does not)." },
    VQ_WRAP_USED: { value: 2, doc: 'Packed: the used wrap counter (the AVAIL and USED bits of the used elements written at usedIdx).' },
    VQ_F_AVAIL_PER_PACKET: { value: 1, doc: "Enqueue re-reads the guest's avail index before every packet (the study arm)." },
  },
});
