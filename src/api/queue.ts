/**
 * The queue handles user code polls: one port's rx or tx queue, checked once
 * per burst at the API boundary. A kernel works on a burst at its heap byte
 * offset, so a burst that is not in the heap would make it read the heap's
 * header as packets; the check costs one compare per burst, nothing per packet.
 */
import type { Burst } from '../eal/heap.js';
import type { RxQueue, TxQueue } from '../ethdev/driver.js';
import { badBurst } from '../ethdev/ethdev.js';

/**
 * Rx queue `queue` of port `port`, opened in this thread: rte_eth_rx_burst
 * on one (port, queue). One lcore polls a queue; the handle is not safe from
 * two threads at once (DPDK's rule: an rx queue has one poller).
 */
export class RxQueueHandle {
  /** @internal */
  constructor(
    /** The port id. */
    readonly port: number,
    /** The rx queue id. */
    readonly queue: number,
    private readonly q: RxQueue,
    private readonly buffer: ArrayBufferLike,
  ) {}

  /**
   * Receives up to `n` packets into `burst[0..)` (rte_eth_rx_burst).
   * @returns how many (0..n); the caller owns them and must transmit or free each.
   * @throws ArgError when `burst` is not in the heap or is shorter than `n`.
   */
  rxBurst(burst: Burst, n: number): number {
    if (burst.heapBuffer !== this.buffer || n > burst.length) throw badBurst(`port ${this.port} rxq ${this.queue}`, burst, n, this.buffer);
    return this.q.rxBurst(burst, n);
  }

  /** @internal Closes what this thread's handle opened (a capture file); the lcore calls it when its main returns. */
  release(): void {
    this.q.release?.();
  }
}

/**
 * Tx queue `queue` of port `port`, opened in this thread: rte_eth_tx_burst
 * on one (port, queue). One lcore sends on a queue (DPDK's rule).
 */
export class TxQueueHandle {
  /** @internal */
  constructor(
    /** The port id. */
    readonly port: number,
    /** The tx queue id. */
    readonly queue: number,
    private readonly q: TxQueue,
    private readonly buffer: ArrayBufferLike,
  ) {}

  /**
   * Sends `burst[0..n)` (rte_eth_tx_burst).
   * @returns how many the driver took (0..n), from the front; the caller
   *   still owns `burst[sent..n)` and must retry or free them (`mbufs.freeBulk(burst, n - sent, sent)`).
   * @throws ArgError when `burst` is not in the heap or is shorter than `n`.
   */
  txBurst(burst: Burst, n: number): number {
    if (burst.heapBuffer !== this.buffer || n > burst.length) throw badBurst(`port ${this.port} txq ${this.queue}`, burst, n, this.buffer);
    return this.q.txBurst(burst, n);
  }

  /** @internal Pushes out what the queue buffered (a capture file's records); the lcore calls it when its main returns. */
  flush(): void {
    this.q.flush?.();
  }
}
