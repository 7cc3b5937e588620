// net_af_xdp's shared-memory records, declared once (scripts/gen-layouts.ts
// writes af-xdp-layout.ts and af-xdp-layout.as.ts): the queue block the
// kernels walk an XDP socket's rings with, and the kernel's ring descriptor.
import { defineRecords } from '../../eal/record.js';

export default defineRecords(
  {
    name: 'afXdpQueue',
    doc: `
One net_af_xdp queue's state in the heap. An rx queue walks the socket's rx
ring (ring A) and refills its fill ring (ring B); a tx queue fills the tx ring
(A) and reaps the completion ring (B). Each ring is mapped into a window of
the heap, so its producer, consumer, flags and descriptors are heap offsets,
written once when the socket is made.

The UMEM is the rx queue's mempool arena itself (DPDK's zero-copy mode): the
fill ring hands the kernel mbufs' buffers, a received descriptor names the
buffer it filled, and the mbuf whose buffer that is goes up the stack
without a copy; an mbuf of that pool is sent by handing its buffer to the tx
ring. A buffer's index is (heap offset - arena) / stride, its mbuf handle
first + index. While the kernel holds a buffer (fill ring to rx ring, tx ring
to completion ring) its byte in the owned array is 1: at close the driver
frees exactly those mbufs, so the pool ends full whatever the kernel held.`,
    size: 128,
    prefix: 'AFXQ',
    index: { u32: 'AFXQ_W' },
    fields: {
      pool: { type: 'u32', at: 0, doc: "Heap offset of the UMEM's pool header: rx refills the fill ring from it; tx copies packets of other pools into its mbufs." },
      stats: { type: 'u32', at: 4, doc: "Heap offset of the queue's statistics block (ethdev/stats.record.ts)." },
      port: { type: 'u32', at: 8, doc: 'Port id stamped on received mbufs.' },
      fd: { type: 'u32', at: 12, doc: 'The XDP socket, which the caller wakes when `kick` says so.' },
      umem: { type: 'u32', at: 16, doc: "Heap offset of the UMEM's start (page aligned): descriptor addresses are relative to it." },
      arena: { type: 'u32', at: 20, doc: "Heap offset of the pool's first buffer." },
      arenaEnd: { type: 'u32', at: 24, doc: "Heap offset just past the pool's last buffer." },
      stride: { type: 'u32', at: 28, doc: "Bytes from one buffer to the next (the pool's stride, the UMEM's chunk size)." },
      first: { type: 'u32', at: 32, doc: "Handle of the mbuf whose buffer starts the arena; buffer i is handle first + i's." },
      owned: { type: 'u32', at: 36, doc: "Heap offset of the owned array: one byte per buffer, 1 while this socket's kernel side holds it." },
      frameCap: { type: 'u32', at: 40, doc: 'Tx: most bytes a packet copied into a UMEM mbuf may have (its data room); longer ones are dropped as errors.' },
      target: { type: 'u32', at: 44, doc: 'Rx: buffers to keep with the kernel (in the fill ring or filled and not yet received).' },
      held: { type: 'u32', at: 48, doc: 'Rx: buffers the kernel holds now.' },
      kick: { type: 'u32', at: 52, doc: 'Out: 1 when the caller must wake the kernel (tx: sendto; rx: recvfrom), as XDP_RING_NEED_WAKEUP or busy polling asks.' },
      freed: { type: 'u32', at: 56, doc: "Tx, out: mbufFreeBulk's result for the `front` packets (the caller frees what it could not)." },
      busy: { type: 'u32', at: 60, doc: 'Rx: 1 when busy_budget > 0: an empty poll always wakes the socket (the kernel busy-polls the device in that recvfrom).' },
      scratch: { type: 'u32', at: 64, doc: 'Heap offset of `scratchCount` u32 handles: fresh mbufs for the fill ring, completed mbufs to free.' },
      scratchCount: { type: 'u32', at: 68, doc: 'Entries of the scratch array.' },
      aProd: { type: 'u32', at: 72, doc: "Ring A (rx or tx): heap offset of its producer index." },
      aCons: { type: 'u32', at: 76, doc: 'Ring A: heap offset of its consumer index.' },
      aFlags: { type: 'u32', at: 80, doc: 'Ring A: heap offset of its flags word (XDP_RING_NEED_WAKEUP).' },
      aDescs: { type: 'u32', at: 84, doc: 'Ring A: heap offset of its descriptors (xdpDesc).' },
      aMask: { type: 'u32', at: 88, doc: 'Ring A: entries - 1 (a power of two).' },
      bProd: { type: 'u32', at: 92, doc: 'Ring B (fill or completion): heap offset of its producer index.' },
      bCons: { type: 'u32', at: 96, doc: 'Ring B: heap offset of its consumer index.' },
      bFlags: { type: 'u32', at: 100, doc: 'Ring B: heap offset of its flags word.' },
      bDescs: { type: 'u32', at: 104, doc: 'Ring B: heap offset of its entries (u64 UMEM addresses).' },
      bMask: { type: 'u32', at: 108, doc: 'Ring B: entries - 1.' },
      sg: { type: 'u32', at: 116, doc: 'Tx: 1 when the socket is bound with XDP_USE_SG: a chain of UMEM mbufs goes out as one descriptor per segment, XDP_PKT_CONTD on all but the last.' },
      front: { type: 'u32', at: 112, doc: "Tx, out: packets the last burst moved to the burst's front to be freed (copied into UMEM mbufs, or dropped as too long)." },
    },
    consts: {
      XDP_RING_NEED_WAKEUP: { value: 1, doc: "A ring's flags bit: the kernel sleeps until woken by a system call on the socket." },
      XDP_PKT_CONTD: { value: 1, doc: "A descriptor's options bit: the packet goes on in the next descriptor (multi-buffer, XDP_USE_SG)." },
      XSK_OFFSET_SHIFT: { value: 16, doc: "Unaligned chunks: a received descriptor's data offset is in the address's bits 48..63, the high word's top half (XSK_UNALIGNED_BUF_OFFSET_SHIFT - 32)." },
    },
  },
  {
    name: 'xdpDesc',
    doc: `
struct xdp_desc (linux/if_xdp.h), an rx or tx ring entry. The address is a
u64 UMEM offset; the heap is below 4 GiB, so its low word is the buffer's
offset in the UMEM and the high word carries only the unaligned-chunk data
offset (rx). Fill and completion entries are bare u64 addresses.`,
    size: 16,
    prefix: 'XDPD',
    index: { u32: 'XDPD_W' },
    fields: {
      addrLo: { type: 'u32', at: 0, doc: "Address bits 0..31: the buffer's offset from the UMEM's start (tx: where the packet starts)." },
      addrHi: { type: 'u32', at: 4, doc: 'Address bits 32..63: rx, the data offset from the buffer in the top 16 bits; tx, 0.' },
      len: { type: 'u32', at: 8, doc: 'Packet bytes.' },
      options: { type: 'u32', at: 12, doc: "XDP_PKT_CONTD on every fragment of a multi-buffer packet but its last." },
    },
  },
);
