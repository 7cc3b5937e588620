// The heap's header and the per-thread lcore block, declared once
// (scripts/gen-layouts.ts writes heap-layout.ts and heap-layout.as.ts).
import { defineRecords } from './record.js';

export default defineRecords(
  {
    name: 'heapHeader',
    doc: `
The heap header: the first HEAP_HEADER_SIZE bytes of the heap. Nothing else
lives there, so offset 0 and mbuf handle 0 are never valid and serve as NULL.
The pool table maps a pool id (the mbuf record's u16 \`pool\`) to its header,
so a kernel freeing an mbuf finds its pool with two loads.`,
    size: 1024,
    prefix: 'HEAP',
    index: { u32: 'HEAP_W' },
    fields: {
      magic: { type: 'u32', at: 0, doc: '"DPKT": Heap.attach checks it.' },
      size: { type: 'u32', at: 4, doc: 'Heap bytes.' },
      brk: { type: 'u32', at: 8, doc: 'Next free byte, bumped with Atomics by any thread (Heap.reserve).' },
      nbPools: { type: 'u32', at: 12, doc: 'Pools registered.' },
      poolTable: { type: 'u32', at: 64, count: 240, doc: "Byte offset of each pool's header, by pool id; 240 pools keep the table inside the header." },
    },
  },
  {
    name: 'lcore',
    doc: `
One thread's lcore block (Heap.lcore), what DPDK keeps in thread-local storage:
the lcore id (which per-lcore mempool cache is ours) and free_bulk's pending
array (RTE_PKTMBUF_FREE_PENDING_SZ handles, on the stack in DPDK; wasm kernels
have no stack of their own, so the block holds it). Kernels that need either
take the block's offset, \`lc\`.`,
    size: 320,
    prefix: 'LCORE',
    index: { u32: 'LCORE_W' },
    fields: {
      id: { type: 'u32', at: 0, doc: 'The lcore id this thread runs as.' },
      pending: { type: 'u32', at: 64, count: 64, doc: "free_bulk's segments waiting for one putBulk per run of one pool." },
    },
  },
);
