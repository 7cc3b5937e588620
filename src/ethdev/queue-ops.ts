/**
 * A driver queue's per-burst work, chosen once when the queue is set up: the
 * driver's kernels (`<driver>Rx`, `<driver>Tx` in its `.as.ts`) or their
 * TypeScript twins, both taking `(state, lc, burst, n)` as heap byte offsets
 * (the queue's block, the calling lcore's block, the burst, its length).
 * The shared half of every `<driver>.twin.ts` (net_null is the worked example).
 */
import type { Burst, Heap } from '../eal/heap.js';
import type { Mempool } from '../mem/mempool.js';

/** What a queue calls per burst; each driver's own interface says what its counts mean. */
export interface QueueOps {
  rx(q: number, lc: number, burst: number, n: number): number;
  tx(q: number, lc: number, burst: number, n: number): number;
}

/**
 * The kernels exported as `rx` and `tx` when the heap has kernels, else
 * `twins()`. `mp` is the rx queue's pool (null on a tx queue): a debug pool
 * keeps rx on the twins, whose pool calls do its checks.
 */
export function queueOps<T extends QueueOps>(heap: Heap, mp: Mempool | null, rx: string, tx: string, twins: () => T): QueueOps | T {
  const k = heap.kernels;
  if (k === null || (mp !== null && mp.debug)) return twins();
  return { rx: k.fn(rx), tx: k.fn(tx) };
}

/** The heap's views a queue's twins index, made once (no view is made per burst). */
export abstract class QueueTwin {
  protected readonly u8: Uint8Array;
  protected readonly u16: Uint16Array;
  protected readonly u32: Uint32Array;
  protected readonly f64: Float64Array;
  /** The whole heap as one burst: the burst at byte `b` is its words from `b >>> 2`. */
  protected readonly words: Burst;

  constructor(heap: Heap) {
    this.u8 = heap.u8;
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.words = heap.burstAt(0, heap.u32.length);
  }
}
