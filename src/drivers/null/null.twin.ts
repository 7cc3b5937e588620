/**
 * net_null's per-burst work, the wasm kernels (null.as.ts) or their
 * TypeScript twins (here, same signatures), chosen once when a queue is
 * opened (`nullOps`). Arguments are heap byte offsets: `q` the queue's block
 * (null.record.ts), `lc` the calling thread's lcore block, `burst` a burst.
 */
import type { Heap } from '../../eal/heap.js';
import { queueOps, QueueTwin } from '../../ethdev/queue-ops.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_PORT, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import type { Mempool } from '../../mem/mempool.js';
import { NULLQ_F_COPY, NULLQ_F_NO_RX, NULLQ_W_DUMMY, NULLQ_W_FLAGS, NULLQ_W_PORT, NULLQ_W_SIZE, NULLQ_W_STATS } from './null-layout.js';

export interface NullOps {
  /** rte_eth_rx_burst on net_null. @returns n, or 0 (rx_nombuf counted) when the pool is short; 0 with no-rx. */
  rx(q: number, lc: number, burst: number, n: number): number;
  /** The tx counters, then the free of the burst's common case. @returns what mbufFreeBulk returns: Mbufs.freeBulkRest takes it. */
  tx(q: number, lc: number, burst: number, n: number): number;
}

/**
 * The kernels when the heap has them, else the twins. `mp` is the rx queue's
 * pool (null on a tx queue): a debug pool keeps rx on the twins, whose pool
 * calls do its checks.
 */
export function nullOps(heap: Heap, mb: Mbufs, mp: Mempool | null): NullOps {
  return queueOps(heap, mp, 'nullRx', 'nullTx', () => new NullTwin(heap, mb, mp));
}

/** The twins: what the kernels do, readable, and their oracle in the tests. */
class NullTwin extends QueueTwin implements NullOps {

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
    private readonly mp: Mempool | null,
  ) {
    super(heap);
  }

  rx(q: number, lc: number, burst: number, n: number): number {
    const u32 = this.u32;
    const w = q >>> 2;
    const flags = u32[w + NULLQ_W_FLAGS]!;
    if ((flags & NULLQ_F_NO_RX) !== 0) return 0;
    const stats = u32[w + NULLQ_W_STATS]! >>> 3;
    const b = burst >>> 2;
    if (this.mp!.allocBulk(this.words, n, b) !== n) {
      this.f64[stats + RXQ_NOMBUF] += n;
      return 0;
    }
    const size = u32[w + NULLQ_W_SIZE]!;
    const port = u32[w + NULLQ_W_PORT]!;
    const u16 = this.u16;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = size;
      u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = size;
      u16[(h << MBUF_HALF_SHIFT) + H_PORT] = port;
    }
    if ((flags & NULLQ_F_COPY) !== 0) {
      const src = u32[w + NULLQ_W_DUMMY]!;
      for (let i = 0; i < n; i++) this.u8.copyWithin(this.mb.mtod(u32[b + i]!), src, src + size);
    }
    this.f64[stats + RXQ_PACKETS] += n;
    this.f64[stats + RXQ_BYTES] += n * size;
    return n;
  }

  tx(q: number, lc: number, burst: number, n: number): number {
    const u32 = this.u32;
    const w = q >>> 2;
    const b = burst >>> 2;
    const mb = this.mb;
    if ((u32[w + NULLQ_W_FLAGS]! & NULLQ_F_COPY) !== 0) {
      const dst = u32[w + NULLQ_W_DUMMY]!;
      const size = u32[w + NULLQ_W_SIZE]!;
      for (let i = 0; i < n; i++) {
        const h = u32[b + i]!;
        const at = mb.mtod(h);
        this.u8.copyWithin(dst, at, at + Math.min(mb.dataLen(h), size));
      }
    }
    let bytes = 0;
    for (let i = 0; i < n; i++) bytes += u32[(u32[b + i]! << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
    const stats = u32[w + NULLQ_W_STATS]! >>> 3;
    this.f64[stats + TXQ_PACKETS] += n;
    this.f64[stats + TXQ_BYTES] += bytes;
    return mb.freeBulkDirect(lc, burst, n);
  }
}
