// net_memif's shared-memory records, declared once (scripts/gen-layouts.ts
// writes memif-layout.ts and memif-layout.as.ts): the wire layouts of the
// ring and its descriptors (memif 2.0, as DPDK's drivers/net/memif/memif.h
// and libmemif lay them out), and dpkit's own queue block and region table.
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'memifRing',
    doc: `
memif_ring_t, in a region the client made: the header is three cache lines so
the producer's and the consumer's index never share one. On a C2S ring the
client produces (moves head) and the server consumes (moves tail); on an S2C
ring the client posts empty buffers (moves head) and the server fills them
(moves tail). head and tail are free-running u16 counters, masked by the ring
size; the side that moves one stores it with release order after writing the
descriptors, the other loads it with acquire order (Atomics in both languages).`,
    size: 128,
    sizeName: 'MEMIF_RING_HDR_SIZE',
    prefix: 'MRING',
    fields: {
      cookie: { type: 'u32', at: 0, doc: 'MEMIF_COOKIE, written by the ring\'s creator; checked at connect.' },
      flags: { type: 'u16', at: 4, doc: 'MEMIF_RING_FLAG_MASK_INT: the receiver polls, so the sender must not write the eventfd.' },
      head: { type: 'u16', at: 6, doc: 'Moved by the client (produced packets on C2S, posted buffers on S2C).' },
      tail: { type: 'u16', at: 64, doc: 'Moved by the server (consumed packets on C2S, filled buffers on S2C). Its own cache line.' },
      desc: { type: 'u32', at: 128, count: 0, doc: 'The descriptors (memifDesc, 16 bytes each), ring-size many.' },
    },
    consts: {
      MEMIF_COOKIE: { value: 0x3e31f20, doc: 'memif.h: marks an initialised ring.' },
      MEMIF_RING_FLAG_MASK_INT: { value: 1, doc: 'The ring\'s receiver polls: no interrupt wanted.' },
    },
  },
  {
    name: 'memifDesc',
    doc: `
memif_desc_t: one buffer of a ring, at \`offset\` in region \`region\`. The
sender writes \`length\` (bytes in the buffer) and \`flags\`; on S2C rings the
client writes \`length\` as the buffer's capacity when it posts it. Every field
comes from the peer's memory: kernels check region, offset and length against
the region table before touching a byte.`,
    size: 16,
    sizeName: 'MEMIF_DESC_SIZE',
    prefix: 'MDESC',
    fields: {
      flags: { type: 'u16', at: 0, doc: 'MEMIF_DESC_FLAG_NEXT: the packet continues in the next slot.' },
      region: { type: 'u16', at: 2, doc: 'Index of the region holding the buffer.' },
      length: { type: 'u32', at: 4, doc: 'Bytes in the buffer (S2C, as posted: its capacity).' },
      offset: { type: 'u32', at: 8, doc: 'Byte offset of the buffer in its region.' },
      metadata: { type: 'u32', at: 12, doc: 'Unused by ethernet mode.' },
    },
    consts: {
      MEMIF_DESC_FLAG_NEXT: { value: 1, doc: 'A chained buffer: the packet continues in the next slot.' },
    },
  },
  {
    name: 'memifRegions',
    doc: `
A port's region table in the heap: how many regions the connection has and,
for each, where its window is in the heap and how many bytes are the peer's.
Written by the control plane while every queue is down (MQ ring = 0), read by
the kernels to check and translate descriptors.`,
    size: 8,
    sizeName: 'MEMIF_REGIONS_HDR_SIZE',
    prefix: 'MREGS',
    index: { u32: 'MREGS_W' },
    fields: {
      count: { type: 'u32', at: 0, doc: 'Regions mapped (indexes 0..count-1).' },
      entries: { type: 'u32', at: 8, count: 0, doc: 'count pairs of u32: the window\'s heap offset, the region\'s size in bytes.' },
    },
    consts: {
      MEMIF_MAX_REGIONS: { value: 16, doc: 'Regions a connection may add (DPDK allows 256; copy mode uses 1, zero-copy one per memseg list).' },
      MEMIF_REGION_ENTRY: { value: 8, doc: 'Bytes per region entry: base (u32), size (u32).' },
    },
  },
  {
    name: 'memifQueue',
    doc: `
One net_memif queue's state in the heap (struct memif_queue): written by the
control plane at setup and at each connect and disconnect, read and advanced by
the rx and tx kernels (memif.as.ts) and their twins (memif.twin.ts). \`ring\` is
0 while the link is down; the control plane zeroes it, then waits for \`busy\`
to drop before it unmaps the regions, so no burst ever touches a dead window.
In zero-copy mode (a client with zero-copy=yes) the ring's buffers are the
queue's own mbufs: \`slots\` holds, per ring slot, the handle of the mbuf the
slot points at (rx: every posted buffer; tx: a sent packet's head, at its last
slot), so a disconnect can give every one back; the second cache line is that
bookkeeping.`,
    size: 128,
    sizeName: 'MEMIF_QUEUE_SIZE',
    prefix: 'MQ',
    index: { u32: 'MQ_W', f64: 'MQ_D' },
    fields: {
      ring: { type: 'u32', at: 0, doc: "Heap offset of the ring's header in its region's window; 0 while down." },
      mask: { type: 'u32', at: 4, doc: 'Ring size - 1.' },
      last: { type: 'u32', at: 8, doc: 'Rx: the next slot to read (last_head on C2S, last_tail on S2C), a u16 counter.' },
      regions: { type: 'u32', at: 12, doc: "Heap offset of the port's region table (memifRegions)." },
      pool: { type: 'u32', at: 16, doc: 'Rx: heap offset of the pool header mbufs come from.' },
      stats: { type: 'u32', at: 20, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
      port: { type: 'u32', at: 24, doc: 'Rx: port id stamped on received mbufs.' },
      flags: { type: 'u32', at: 28, doc: 'MQ_F_* bits.' },
      bsize: { type: 'u32', at: 32, doc: "The connection's buffer size: a C2S sender's buffer capacity, an S2C receiver's posted length." },
      kick: { type: 'u32', at: 36, doc: 'Tx: 1 when the last burst sent packets and the ring asks for an interrupt (no MASK_INT).' },
      intFd: { type: 'u32', at: 40, doc: "The ring's eventfd (0xffffffff: none); the tx queue writes it when `kick` says so." },
      busy: { type: 'u32', at: 44, doc: 'Set (Atomics) by the thread running a burst on the queue; the control plane waits for 0.' },
      badDesc: { type: 'f64', at: 48, doc: 'Counter: descriptors outside their region, or rings the peer got wrong (the packet is skipped).' },
      fault: { type: 'u32', at: 56, doc: 'Set by a burst that met a bad descriptor or index: the control plane disconnects.' },
      seg: { type: 'u32', at: 60, doc: 'Rx: one-word burst an extra segment is allocated into.' },
      head: { type: 'u32', at: 64, doc: "Zero-copy: the client's own copy of the index it moves (head), a u16 counter; the ring's copy is the peer's to read, never trusted back." },
      slots: { type: 'u32', at: 68, doc: 'Zero-copy: heap offset of the per-slot mbuf handles (ring-size u32, 0: none).' },
      done: { type: 'u32', at: 72, doc: 'Zero-copy tx: heap offset of a burst the tx kernel leaves consumed (or unsendable) packets in, for the caller to free.' },
      nbDone: { type: 'u32', at: 76, doc: 'Zero-copy tx: packets the last burst left in `done`.' },
      doneCap: { type: 'u32', at: 80, doc: 'Zero-copy tx: capacity of `done`, in handles.' },
      cap: { type: 'u32', at: 84, doc: "Zero-copy rx: the length posted with each buffer (the pool's data room)." },
      bufs: { type: 'u32', at: 88, doc: "Tx on a ring this side laid out (a client's C2S ring, copy mode): heap address of slot 0's buffer, slot s's at bufs + (s & mask) * bsize. The ring's descriptors are not read back: their offsets are the peer's to rewrite, and their line is the peer's last read. 0: each descriptor's region and offset are read and checked." },
      peer: { type: 'u32', at: 92, doc: "The peer's index as last read, a u16 counter: on tx the consumer's (tail on C2S, head on S2C), on rx the producer's (head on C2S, tail on S2C). It only moves forward, so free slots or waiting packets counted from it are never too many; a kernel reads the ring's copy (a line the peer writes: a miss) only when they are fewer than the burst, and again when they run out before the burst is done (chains take more slots than packets)." },
    },
    consts: {
      MQ_F_C2S: { value: 1, doc: 'The queue works a C2S ring (server rx, client tx); else S2C.' },
      MQ_F_ZC: { value: 2, doc: 'Zero-copy: descriptors point at the queue\'s mbufs in region 0 (the heap\'s prefix).' },
      MEMIF_ZC_REFILL: { value: 32, doc: 'Zero-copy rx posts new buffers once this many slots are free (or half the ring), as DPDK\'s refill threshold.' },
      MQ_NO_FD: { value: 0xffffffff, doc: '`intFd` when the ring has no eventfd.' },
    },
  },
);
