/**
 * A memif queue's data-path block (memif.record.ts) in its two steps: made
 * when the queue is set up, and pointed at a ring when the connection (or a
 * loopback) gives it one; and the region table the blocks' descriptors refer
 * to. The driver and the kernels' loopback rig both write blocks and tables
 * only through these, so a field added here reaches both.
 */
import type { Heap } from '../../eal/heap.js';
import type { Mempool } from '../../mem/mempool.js';
import {
  MEMIF_QUEUE_SIZE,
  MQ_F_C2S,
  MQ_F_ZC,
  MQ_NO_FD,
  MQ_W_BSIZE,
  MQ_W_BUFS,
  MQ_W_CAP,
  MQ_W_DONE,
  MQ_W_DONE_CAP,
  MQ_W_FAULT,
  MQ_W_FLAGS,
  MQ_W_HEAD,
  MQ_W_INT_FD,
  MQ_W_LAST,
  MQ_W_MASK,
  MQ_W_PEER,
  MQ_W_POOL,
  MQ_W_PORT,
  MQ_W_REGIONS,
  MQ_W_RING,
  MQ_W_SLOTS,
  MQ_W_STATS,
  MREGS_W_COUNT,
  MREGS_W_ENTRIES,
} from './memif-layout.js';

/** A region as the kernels see it: where it is mapped in the heap, and its length. */
export interface HeapRegion {
  base: number;
  size: number;
}

/**
 * Writes the region table at heap offset `table`: `regions` in index order,
 * the count last (an empty list, or a count of 0, leaves every descriptor
 * outside all regions).
 */
export function writeRegionTable(heap: Heap, table: number, regions: readonly HeapRegion[]): void {
  const u32 = heap.u32;
  const w = table >>> 2;
  regions.forEach((r, i) => {
    u32[w + MREGS_W_ENTRIES + 2 * i] = r.base;
    u32[w + MREGS_W_ENTRIES + 2 * i + 1] = r.size;
  });
  u32[w + MREGS_W_COUNT] = regions.length;
}

export interface QueueBlockSpec {
  /** Names the heap reservations. */
  name: string;
  /** Heap byte offset of the queue's counters. */
  stats: number;
  /** The rx queue's mempool; null for a tx queue. */
  pool: Mempool | null;
  port: number;
  /** Whether the queue's ring is client-to-server. */
  c2s: boolean;
  /** Heap offset of the region table the descriptors' offsets refer to. */
  regions: number;
  /** Zero-copy (our mbufs are the buffers): log2 of the largest ring the queue will get. */
  zeroCopyLog2?: number;
}

/** A new block with no ring yet (the kernels see ring 0 and move nothing). */
export function newQueueBlock(heap: Heap, spec: QueueBlockSpec): number {
  const u32 = heap.u32;
  const q = heap.reserve(MEMIF_QUEUE_SIZE, 64, `${spec.name} queue`);
  const w = q >>> 2;
  u32[w + MQ_W_STATS] = spec.stats;
  u32[w + MQ_W_PORT] = spec.port;
  u32[w + MQ_W_FLAGS] = spec.c2s ? MQ_F_C2S : 0;
  u32[w + MQ_W_REGIONS] = spec.regions;
  u32[w + MQ_W_INT_FD] = MQ_NO_FD;
  if (spec.zeroCopyLog2 !== undefined) {
    const size = 1 << spec.zeroCopyLog2;
    u32[w + MQ_W_FLAGS] |= MQ_F_ZC;
    u32[w + MQ_W_SLOTS] = heap.reserve(4 * size, 64, `${spec.name} queue slots`);
    if (spec.c2s) {
      // What one burst can leave: every slot consumed, and as many unshareable packets again.
      u32[w + MQ_W_DONE] = heap.reserve(8 * size, 64, `${spec.name} queue done`);
      u32[w + MQ_W_DONE_CAP] = 2 * size;
    }
  }
  if (spec.pool) setQueuePool(heap, q, spec.pool);
  return q;
}

/**
 * Points rx block `q` at `pool`: the rx kernels allocate from it, and a
 * zero-copy client posts its mbufs' data room as each buffer's length. A
 * queue set up again with another pool is pointed again, never left on the
 * first.
 */
export function setQueuePool(heap: Heap, q: number, pool: Mempool): void {
  const w = q >>> 2;
  heap.u32[w + MQ_W_POOL] = pool.offset;
  heap.u32[w + MQ_W_CAP] = pool.bufLen - pool.headroom;
}

/**
 * Gives block `q` the ring at heap offset `ring` (2^log2 slots of `bsize`
 * bytes; `intFd` the eventfd its peer wants kicked, or MQ_NO_FD), its own
 * indices from 0. `bufs`: for a tx queue on a ring this side laid out, the
 * heap address of slot 0's buffer (the rest follow in slot order), so the tx
 * kernel need not read the descriptors back; 0 otherwise. The ring is stored
 * last, with release: a kernel that sees it sees the rest.
 */
export function attachQueueRing(heap: Heap, q: number, ring: number, log2: number, bsize: number, intFd: number, bufs = 0): void {
  const u32 = heap.u32;
  const w = q >>> 2;
  u32[w + MQ_W_MASK] = (1 << log2) - 1;
  u32[w + MQ_W_LAST] = 0;
  u32[w + MQ_W_BSIZE] = bsize;
  u32[w + MQ_W_BUFS] = bufs;
  u32[w + MQ_W_PEER] = 0;
  u32[w + MQ_W_INT_FD] = intFd;
  u32[w + MQ_W_FAULT] = 0;
  u32[w + MQ_W_HEAD] = 0;
  Atomics.store(u32, w + MQ_W_RING, ring);
}
