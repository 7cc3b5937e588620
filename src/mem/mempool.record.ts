// The mempool's shared records, declared once (scripts/gen-layouts.ts writes
// mempool-layout.ts and mempool-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'pool',
    doc: `
The pool header: everything a thread (or a kernel) needs to open the pool and
run its fast path, at the pool's heap offset. Read-only after create except
the magic, stored last so a pool is never seen half-made.`,
    size: 256,
    prefix: 'POOL',
    index: { u32: 'P' },
    fields: {
      magic: { type: 'u32', at: 0, doc: '"MPOL", stored last at create.' },
      id: { type: 'u32', at: 4, doc: "The pool's id (its index in the heap's pool table)." },
      n: { type: 'u32', at: 8, doc: 'Mbufs in the pool.' },
      stride: { type: 'u32', at: 12, doc: 'Bytes between two buffers (bufLen rounded up to a cache line).' },
      headroom: { type: 'u32', at: 16, doc: 'dataOff of a fresh mbuf.' },
      bufLen: { type: 'u32', at: 20, doc: 'Buffer bytes per mbuf, headroom included.' },
      metaBase: { type: 'u32', at: 24, doc: 'Heap offset of the first mbuf record.' },
      first: { type: 'u32', at: 28, doc: 'Handle of the first mbuf; the pool owns [first, first + n).' },
      arena: { type: 'u32', at: 32, doc: 'Heap offset of the first buffer.' },
      ring: { type: 'u32', at: 36, doc: "Heap offset of the ring of free handles." },
      cacheSize: { type: 'u32', at: 40, doc: 'Per-lcore cache size; 0: no cache.' },
      flush: { type: 'u32', at: 44, doc: 'Flush threshold, 1.5 × cacheSize (rte_mempool).' },
      cacheBase: { type: 'u32', at: 48, doc: "Heap offset of lcore 0's cache (one per lcore, CACHE_STRIDE apart)." },
      cacheStride: { type: 'u32', at: 52, doc: 'CACHE_STRIDE, for a reader of the heap alone.' },
      flags: { type: 'u32', at: 56, doc: 'POOL_F_* bits.' },
      state: { type: 'u32', at: 60, doc: "Debug pools: heap offset of a state byte per mbuf (1 = in the pool)." },
      nameLen: { type: 'u32', at: 64, doc: 'Bytes of the name.' },
      name: { type: 'u8', at: 128, count: 64, doc: 'The name, UTF-8.' },
    },
    consts: {
      POOL_F_DEBUG: { value: 1, doc: 'A debug pool (RTE_LIBRTE_MBUF_DEBUG): its checks live in TypeScript, so kernels leave it alone.' },
    },
  },
  {
    name: 'cache',
    doc: `
One lcore's mempool cache (rte_mempool_cache): the length on its own cache
line, then a LIFO stack of handles. A refill brings size + a request of up
to size, so the stack holds twice the largest cache.`,
    size: 64 + 1024 * 4,
    sizeName: 'CACHE_STRIDE',
    prefix: 'CACHE',
    index: { u32: 'CACHE_W' },
    fields: {
      len: { type: 'u32', at: 0, doc: 'Handles on the stack.' },
      objs: { type: 'u32', at: 64, count: 1024, doc: 'The stack, hot handles on top.' },
    },
    consts: {
      MEMPOOL_CACHE_MAX_SIZE: { value: 512, doc: "rte_mempool's RTE_MEMPOOL_CACHE_MAX_SIZE." },
    },
  },
);
