/** dpkit's public API: the packet core. Ports, drivers and lcores come with their modules. */
export * from './errors.js';
export { Heap, MAX_LCORES, MAX_POOLS, wasmMemoryProvider } from './eal/heap.js';
export type { HeapDescriptor, HeapOptions, MemoryProvider } from './eal/heap.js';
export { Mempool, MEMPOOL_CACHE_MAX_SIZE, MBUF_DEFAULT_BUF_SIZE } from './mem/mempool.js';
export type { MempoolDescriptor, MempoolOptions } from './mem/mempool.js';
export { Mbufs, FREE_PENDING_SZ } from './mem/mbuf.js';
export { OlFlags, OlFlagsHi, PORT_INVALID, PKTMBUF_HEADROOM, MBUF_SIZE } from './mem/mbuf-layout.js';
export { Ring, RING_F_EXACT_SZ, RING_F_SC_DEQ, RING_F_SP_ENQ } from './ring/ring.js';
export type { RingDescriptor, RingOptions } from './ring/ring.js';
