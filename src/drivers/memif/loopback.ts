/**
 * net_memif's kernels without a peer or the native shim: one region in plain
 * heap memory holding a C2S and an S2C ring, as a client lays them out, and
 * the four queue blocks a connection would have over them (the client's tx
 * and the server's rx on C2S, the server's tx and the client's rx on S2C).
 * The twin tests drive both sides of a connection through it, and the memif
 * micro-benchmark times the copy path with no second process and no second
 * CPU in the way. Its queue blocks are made as the driver makes them
 * (queue-block.ts).
 */
import type { Heap } from '../../eal/heap.js';
import type { Mempool } from '../../mem/mempool.js';
import {
  MEMIF_COOKIE,
  MEMIF_DESC_SIZE,
  MEMIF_REGIONS_HDR_SIZE,
  MEMIF_REGION_ENTRY,
  MEMIF_RING_FLAG_MASK_INT,
  MEMIF_RING_HDR_SIZE,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MQ_NO_FD,
  MRING_COOKIE,
  MRING_FLAGS,
} from './memif-layout.js';
import { attachQueueRing, newQueueBlock, writeRegionTable } from './queue-block.js';

export interface MemifLoopbackOptions {
  /** log2 of each ring's slots (the rsize devarg). */
  log2: number;
  /** Bytes per buffer (the bsize devarg). */
  bsize: number;
  /** The port the rx queues stamp on their mbufs. Default 0. */
  port?: number;
}

export interface MemifLoopback {
  /** The region's heap offset and size in bytes: ring headers, then every slot's buffer. */
  readonly base: number;
  readonly size: number;
  /** The rings' heap offsets: [C2S, S2C]. */
  readonly rings: readonly [number, number];
  /** Queue blocks (memif.record.ts), by who uses them on which ring. */
  readonly q: { readonly cliTx: number; readonly srvRx: number; readonly srvTx: number; readonly cliRx: number };
}

/**
 * Lays out the region and the queues in `heap`; the rx queues allocate from
 * `pool`. The C2S ring's receiver wants interrupts (its flags 0), so a tx on
 * it sets the queue's kick; the S2C ring's receiver polls (MASK_INT).
 */
export function memifLoopback(heap: Heap, pool: Mempool, opts: MemifLoopbackOptions): MemifLoopback {
  const { u32, u16 } = heap;
  const slots = 1 << opts.log2;
  const hdr = MEMIF_RING_HDR_SIZE + MEMIF_DESC_SIZE * slots;
  const size = 2 * hdr + 2 * slots * opts.bsize;
  const base = heap.reserve(size, 65536, 'memif loopback region');
  const table = heap.reserve(MEMIF_REGIONS_HDR_SIZE + MEMIF_REGION_ENTRY, 64, 'memif loopback region table');
  writeRegionTable(heap, table, [{ base, size }]);
  const rings: [number, number] = [base, base + hdr];
  rings.forEach((ring, r) => {
    u32[(ring + MRING_COOKIE) >>> 2] = MEMIF_COOKIE;
    u16[(ring + MRING_FLAGS) >>> 1] = r === 0 ? 0 : MEMIF_RING_FLAG_MASK_INT;
    for (let j = 0; j < slots; j++) {
      const d = ring + MEMIF_RING_HDR_SIZE + j * MEMIF_DESC_SIZE;
      u32[(d + MDESC_OFFSET) >>> 2] = 2 * hdr + (r * slots + j) * opts.bsize;
      u32[(d + MDESC_LENGTH) >>> 2] = opts.bsize;
    }
  });
  // The client's tx knows where its C2S buffers are, as the driver's does (attachQueueRing's bufs).
  const queue = (ring: number, c2s: boolean, rx: boolean) => {
    const q = newQueueBlock(heap, {
      name: 'memif loopback',
      stats: heap.reserve(64, 64, 'memif loopback queue stats'),
      pool: rx ? pool : null,
      port: opts.port ?? 0,
      c2s,
      regions: table,
    });
    attachQueueRing(heap, q, ring, opts.log2, opts.bsize, MQ_NO_FD, c2s && !rx ? base + 2 * hdr : 0);
    return q;
  };
  const q = { cliTx: queue(rings[0], true, false), srvRx: queue(rings[0], true, true), srvTx: queue(rings[1], false, false), cliRx: queue(rings[1], false, true) };
  return { base, size, rings, q };
}
