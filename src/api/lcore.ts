/**
 * What a user's lcore function gets (the worker side of `Eal.launch`): its
 * lcore id, the heap, the pools, rings and port queues reopened in this
 * thread from the plain descriptors the main thread sent, and `stopping()`.
 * DPDK passes an lcore function one `void *arg`; dpkit passes this context,
 * whose `args` is that argument.
 */
import { ArgError } from '../errors.js';
import { CTL_STOP } from '../eal/launcher.js';
import type { Burst, Heap, HeapDescriptor } from '../eal/heap.js';
import type { Datapath } from '../eal/kernels.js';
import type { DriverSpec, QueueDescriptor } from '../ethdev/driver.js';
import { Mbufs } from '../mem/mbuf.js';
import { Mempool } from '../mem/mempool.js';
import { Ring, type RingDescriptor } from '../ring/ring.js';
import { RxQueueHandle, TxQueueHandle } from './queue.js';

/** One port as the main thread describes it to an lcore: its queues' descriptors (null: not set up). */
export interface PortJob {
  id: number;
  name: string;
  mac: Uint8Array;
  rxq: (QueueDescriptor | null)[];
  txq: (QueueDescriptor | null)[];
}

/** workerData.job of an API lcore: plain, structured-clonable data. */
export interface ApiLcoreJob {
  /** The user's module (a file URL). */
  module: string;
  heap: HeapDescriptor;
  datapath: Datapath;
  /** Id of the pool `ctx.pool` names. */
  pool: number;
  ports: PortJob[];
  rings: RingDescriptor[];
  /** Every lcore of this launch, in order. */
  lcores: number[];
  args: unknown;
}

/**
 * The context a launched lcore function receives (`export function main(ctx)`).
 * Everything in it belongs to this lcore's thread: use it from that thread only.
 *
 * @typeParam A - the `args` given to `Eal.launch`, structured-cloned
 *   (a SharedArrayBuffer in it is shared, not copied).
 */
export interface LcoreContext<A = unknown> {
  /** This lcore's id (rte_lcore_id()). */
  readonly lcoreId: number;
  /** Every lcore of this launch, in launch order (for splitting work: `lcores.indexOf(lcoreId)`). */
  readonly lcores: readonly number[];
  /** The shared heap, opened as this lcore (its mempool caches are this lcore's). */
  readonly heap: Heap;
  /** The mbuf accessors over the heap (rte_pktmbuf_*). */
  readonly mbufs: Mbufs;
  /** The default mbuf pool (`Eal.pool`), with this lcore's cache. */
  readonly pool: Mempool;
  /** `LaunchOptions.args`, as the main thread gave them. */
  readonly args: A;
  /**
   * Whether the main thread asked this launch to stop (`Launch.stop()`), or
   * another lcore's function threw. A loop checks it every so often (every
   * burst is fine: one atomic load) and returns when it is true.
   */
  stopping(): boolean;
  /** A burst array of `n` handles in the heap (rte_mbuf pointer array): make it once, before the loop. */
  burst(n: number): Burst;
  /**
   * Rx queue `queue` of port `port`, reopened in this thread (opened once, then the same handle).
   * @throws ArgError when the port does not exist or the queue was not set up before the launch.
   */
  rxQueue(port: number, queue: number): RxQueueHandle;
  /**
   * Tx queue `queue` of port `port`, reopened in this thread.
   * @throws ArgError when the port does not exist or the queue was not set up before the launch.
   */
  txQueue(port: number, queue: number): TxQueueHandle;
  /** Ids of the ports that existed at the launch (rte_eth_dev_count_avail / RTE_ETH_FOREACH_DEV). */
  portIds(): number[];
  /** Port `port`'s MAC address (rte_eth_macaddr_get). @throws ArgError for a missing port. */
  macAddr(port: number): Uint8Array;
  /** The pool named `name` (rte_mempool_lookup), with this lcore's cache. @throws ArgError when there is none. */
  mempool(name: string): Mempool;
  /** The ring named `name`, made by `Eal.ringCreate` before the launch (rte_ring_lookup). @throws ArgError when there is none. */
  ring(name: string): Ring;
}

/** The context's implementation; also what the worker closes when the user's function returns. */
export class LcoreEnv<A = unknown> implements LcoreContext<A> {
  readonly mbufs: Mbufs;
  readonly args: A;
  readonly lcores: readonly number[];
  private readonly rx = new Map<string, RxQueueHandle>();
  private readonly tx = new Map<string, TxQueueHandle>();
  private readonly rings = new Map<string, Ring>();

  constructor(
    readonly lcoreId: number,
    readonly heap: Heap,
    private readonly job: ApiLcoreJob,
    private readonly ctl: Int32Array,
    private readonly drivers: ReadonlyMap<string, DriverSpec>,
  ) {
    this.mbufs = new Mbufs(heap);
    this.args = job.args as A;
    this.lcores = job.lcores;
  }

  get pool(): Mempool {
    const mp = Mempool.byId(this.heap, this.job.pool);
    if (!mp) throw new ArgError('init({ mbufs: 0 }) made no default pool: use ctx.mempool(name)');
    return mp;
  }

  stopping(): boolean {
    return Atomics.load(this.ctl, CTL_STOP) !== 0;
  }

  burst(n: number): Burst {
    return this.heap.burst(n);
  }

  rxQueue(port: number, queue: number): RxQueueHandle {
    const key = `${port}/${queue}`;
    let h = this.rx.get(key);
    if (!h) {
      const d = this.queueDesc(port, queue, 'rx');
      h = new RxQueueHandle(port, queue, this.spec(d).openRxQueue(this.heap, d), this.heap.buffer);
      this.rx.set(key, h);
    }
    return h;
  }

  txQueue(port: number, queue: number): TxQueueHandle {
    const key = `${port}/${queue}`;
    let h = this.tx.get(key);
    if (!h) {
      const d = this.queueDesc(port, queue, 'tx');
      h = new TxQueueHandle(port, queue, this.spec(d).openTxQueue(this.heap, d), this.heap.buffer);
      this.tx.set(key, h);
    }
    return h;
  }

  portIds(): number[] {
    return this.job.ports.map((p) => p.id);
  }

  macAddr(port: number): Uint8Array {
    return this.portJob(port).mac;
  }

  mempool(name: string): Mempool {
    for (let id = 0; id < this.heap.nbPools; id++) {
      const mp = Mempool.byId(this.heap, id);
      if (mp?.name === name) return mp;
    }
    throw new ArgError(`lcore ${this.lcoreId}: no mempool named '${name}'`);
  }

  ring(name: string): Ring {
    let r = this.rings.get(name);
    if (!r) {
      const d = this.job.rings.find((x) => x.name === name);
      if (!d) throw new ArgError(`lcore ${this.lcoreId}: no ring named '${name}' (rings made with eal.ringCreate before the launch: ${this.job.rings.map((x) => x.name).join(', ') || 'none'})`);
      this.rings.set(name, (r = Ring.attach(this.heap, d)));
    }
    return r;
  }

  /** Flushes what tx queues buffered and the pools' caches of this lcore, so every mbuf it held is back or in a port. */
  close(): void {
    for (const q of this.tx.values()) q.flush();
    for (const q of this.rx.values()) q.release();
    for (let id = 0; id < this.heap.nbPools; id++) Mempool.byId(this.heap, id)?.flushCache();
  }

  private portJob(port: number): PortJob {
    const p = this.job.ports.find((x) => x.id === port);
    if (!p) throw new ArgError(`port ${port}: no such port (ports: ${this.portIds().join(', ') || 'none'})`);
    return p;
  }

  private queueDesc(port: number, queue: number, dir: 'rx' | 'tx'): QueueDescriptor {
    const list = dir === 'rx' ? this.portJob(port).rxq : this.portJob(port).txq;
    const d = list[queue];
    if (!d) throw new ArgError(`port ${port}: ${dir} queue ${queue} not set up (${list.length} configured; set queues up and start the port before the launch)`);
    return d;
  }

  private spec(d: QueueDescriptor): DriverSpec {
    const s = this.drivers.get(d.driver);
    if (!s) throw new ArgError(`no driver ${d.driver} to open a queue`);
    return s;
  }
}
