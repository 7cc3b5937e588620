/**
 * net_null: a port that receives packets from nowhere and drops what it
 * sends, doing the per-packet work of DPDK's net_null so a comparison with it
 * is honest: rx allocates each mbuf from the queue's pool (through the lcore
 * cache) reset as rte_pktmbuf_alloc does and sets its lengths and port; tx
 * frees every mbuf. `copy=1` also copies `size` bytes into each received
 * packet and out of each sent one.
 *
 * Devargs (DPDK's): size=N (packet size, default 64), copy=0|1, no-rx=0|1.
 *
 * The folder: null.ts (this: the driver, queue setup), null.record.ts (the
 * queue's block in the heap), null.as.ts (rx and tx, one wasm call per burst)
 * and null.twin.ts (their TypeScript twins, and the choice between them).
 */
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { vdevMac } from '../mac.js';
import { NULLQ_F_COPY, NULLQ_F_NO_RX, NULL_QUEUE_SIZE, NULLQ_W_DUMMY, NULLQ_W_FLAGS, NULLQ_W_POOL, NULLQ_W_PORT, NULLQ_W_SIZE, NULLQ_W_STATS } from './null-layout.js';
import { nullOps, type NullOps } from './null.twin.js';

const MAX_QUEUES = 1024; // RTE_MAX_QUEUES_PER_PORT

/** A queue reopens in a worker from its block alone. */
interface NullQueueDesc extends QueueDescriptor {
  driver: 'net_null';
  /** Heap offset of the queue's block (null.record.ts). */
  q: number;
}

class NullRxQueue implements RxQueue {
  private readonly lc: number;
  private readonly ops: NullOps;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    const mp = Mempool.attach(heap, { offset: heap.u32[(q >>> 2) + NULLQ_W_POOL]! });
    this.ops = nullOps(heap, new Mbufs(heap), mp);
  }

  rxBurst(burst: Burst, n: number): number {
    return this.ops.rx(this.q, this.lc, burst.heapOffset, n);
  }

  descriptor(): NullQueueDesc {
    return { driver: 'net_null', q: this.q };
  }
}

class NullTxQueue implements TxQueue {
  private readonly lc: number;
  private readonly mb: Mbufs;
  private readonly ops: NullOps;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    this.mb = new Mbufs(heap);
    this.ops = nullOps(heap, this.mb, null);
  }

  txBurst(burst: Burst, n: number): number {
    // The kernel (or twin) frees the common case; clones and refusals are the general free's.
    this.mb.freeBulkRest(burst, n, 0, this.ops.tx(this.q, this.lc, burst.heapOffset, n));
    return n;
  }

  descriptor(): NullQueueDesc {
    return { driver: 'net_null', q: this.q };
  }
}

class NullDriver implements EthDriver {
  private readonly size: number;
  private readonly copy: boolean;
  private readonly noRx: boolean;
  private readonly dummy: number;
  private readonly mac: Uint8Array;

  constructor(private readonly ctx: DriverContext) {
    this.size = intArg(ctx.name, ctx.args, 'size', 64, 1, 0xffff);
    this.copy = boolArg(ctx.name, ctx.args, 'copy');
    this.noRx = boolArg(ctx.name, ctx.args, 'no-rx');
    this.dummy = ctx.heap.reserve(this.size, 64, `${ctx.name} dummy packet`);
    this.mac = vdevMac(ctx.name);
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    return { driverName: 'net_null', maxRxQueues: MAX_QUEUES, maxTxQueues: MAX_QUEUES, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(): void {}

  /** A queue's block in the heap (null.record.ts), written once here. @returns its offset. */
  private queueBlock(stats: number, pool: number): number {
    const heap = this.ctx.heap;
    const q = heap.reserve(NULL_QUEUE_SIZE, 64, `${this.ctx.name} queue`);
    const w = q >>> 2;
    heap.u32[w + NULLQ_W_POOL] = pool;
    heap.u32[w + NULLQ_W_STATS] = stats * 8;
    heap.u32[w + NULLQ_W_DUMMY] = this.dummy;
    heap.u32[w + NULLQ_W_SIZE] = this.size;
    heap.u32[w + NULLQ_W_PORT] = this.ctx.portId;
    heap.u32[w + NULLQ_W_FLAGS] = (this.copy ? NULLQ_F_COPY : 0) | (this.noRx ? NULLQ_F_NO_RX : 0);
    return q;
  }

  rxQueueSetup(_q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    if (this.size > pool.bufLen - pool.headroom) {
      throw new ArgError(`${this.ctx.name}: size=${this.size} does not fit the pool's ${pool.bufLen - pool.headroom}-byte data room`);
    }
    return new NullRxQueue(this.ctx.heap, this.queueBlock(stats, pool.offset));
  }

  txQueueSetup(_q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    return new NullTxQueue(this.ctx.heap, this.queueBlock(stats, 0));
  }

  start(): void {}
  stop(): void {}
  close(): void {}
  linkUp(): boolean {
    return true;
  }
  linkSpeed(): number {
    return 10_000;
  }
}

export const netNull: DriverSpec = {
  name: 'net_null',
  keys: ['size', 'copy', 'no-rx'],
  create: (ctx) => new NullDriver(ctx),
  openRxQueue: (heap, d) => new NullRxQueue(heap, (d as NullQueueDesc).q),
  openTxQueue: (heap, d) => new NullTxQueue(heap, (d as NullQueueDesc).q),
};
