// net_tap's queue block, declared once (scripts/gen-layouts.ts writes
// tap-layout.ts and tap-layout.as.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'tapQueue',
  doc: `
One net_tap queue's state in the heap, written at queue setup and read by the
shim's burst calls (native/src/tap.cc: tapRxBurst, tapTxBurst), which readv()
frames straight into mbufs and writev() them from the mbufs' segments. A
worker reopens the queue from the block's offset alone.

The shim walks mbuf records itself: it reads them, and this block, with the
generated native/src/mbuf-layout.h and tap-layout.h, so the C++ has no
offset written by hand.

Rx: before each burst the queue allocates the burst's heads and the spares
in one bulk call into the block's array (mbufs): the shim reads frame after
frame into the head at the front and, for a frame larger than one data room,
the spares at the back, chaining those it filled; it stops at EAGAIN or when
the array cannot give a head and a full set of spares. What lies between
front and back goes back to the pool in bulk. The queue holds no mbuf
between bursts.`,
  size: 64,
  native: true,
  prefix: 'TAPQ',
  index: { u32: 'TAPQ_W' },
  fields: {
    fd: { type: 'u32', at: 0, doc: "The queue's fd on /dev/net/tun." },
    port: { type: 'u32', at: 4, doc: 'Port id stamped on received mbufs.' },
    stats: { type: 'u32', at: 8, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
    pool: { type: 'u32', at: 12, doc: 'Rx: heap offset of the pool header the bursts allocate from (0 on a tx queue).' },
    mbufs: { type: 'u32', at: 16, doc: 'Rx: heap offset of the array the burst allocates into: TAPQ_RX_BURST_MAX + TAPQ_MAX_SEGS - 1 u32 handles.' },
    spares: { type: 'u32', at: 20, doc: 'Rx: segments past the head the largest frame (TAP_MAX_FRAME) takes in this pool: the iovec of one read is 1 + spares.' },
    front: { type: 'u32', at: 24, doc: 'Rx, out: heads the last burst used; mbufs[front..back) were left unused.' },
    back: { type: 'u32', at: 28, doc: 'Rx, out: mbufs[back..) went into chains as segments.' },
    bytes: { type: 'u32', at: 32, doc: 'Out: bytes the last burst received or wrote.' },
    errors: { type: 'u32', at: 36, doc: 'Out: frames the last burst dropped (rx: longer than its mbufs; tx: too long, too many segments, or refused by the tap other than for room).' },
    waiting: { type: 'u32', at: 40, doc: 'Rx, out: 1 when a burst without mbufs found a frame waiting (the queue counts rx_nombuf).' },
  },
  consts: {
    TAP_MAX_FRAME: { value: 0x3f00, doc: "RTE_ETHER_MAX_JUMBO_FRAME_LEN, DPDK's tap max_rx_pktlen: the largest frame a queue reads or writes." },
    TAPQ_RX_BURST_MAX: { value: 512, doc: "Most frames one rx burst reads (testpmd's MAX_PKT_BURST); a larger ask gets this many." },
    TAPQ_MAX_SEGS: { value: 17, doc: 'Most mbufs one frame may take (the iovec of one readv); setup refuses a pool whose data room needs more for TAP_MAX_FRAME.' },
    TAPQ_TX_MAX_SEGS: { value: 64, doc: 'Most segments of a packet tx writes (one writev); a longer chain is dropped as an error.' },
  },
});
