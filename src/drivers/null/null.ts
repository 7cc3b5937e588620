/**
 * net_null: a port that receives packets from nowhere and drops what it
 * sends, doing the per-packet work of DPDK's net_null so a comparison with it
 * is honest: rx allocates each mbuf from the queue's pool (through the lcore
 * cache) reset as rte_pktmbuf_alloc does and sets its lengths and port; tx
 * frees every mbuf. `copy=1` also copies `size` bytes into each received
 * packet and out of each sent one.
 *
 * Devargs (DPDK's): size=N (packet size, default 64), copy=0|1, no-rx=0|1.
 */
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats.js';
import type { Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { H_DATA_LEN, H_PORT, MBUF_WORD_SHIFT, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { vdevMac } from '../mac.js';
import type { FwdKernel, MbufKernel } from '../../kernels/kernels.js';

const MAX_QUEUES = 1024; // RTE_MAX_QUEUES_PER_PORT

interface NullQueueDesc extends QueueDescriptor {
  driver: 'net_null';
  port: number;
  size: number;
  copy: boolean;
  noRx: boolean;
  stats: number;
  /** Offset of the pool (rx) and of the dummy packet `copy` reads and writes. */
  pool: number;
  dummy: number;
}

class NullRxQueue implements RxQueue {
  private readonly mp: Mempool;
  private readonly f64: Float64Array;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly mb: Mbufs;
  private readonly kernel: FwdKernel | null;
  /** The fused rx kernel; not for debug pools, whose checks live in TypeScript. */
  private readonly mbufKernel: MbufKernel | null;

  constructor(
    private readonly heap: Heap,
    private readonly d: NullQueueDesc,
  ) {
    this.mp = Mempool.attach(heap, { offset: d.pool });
    this.f64 = heap.f64;
    this.u16 = heap.u16;
    this.u32 = heap.u32;
    this.mb = new Mbufs(heap);
    this.kernel = heap.kernels?.fwd ?? null;
    this.mbufKernel = this.mp.debug ? null : (heap.kernels?.mbuf ?? null);
  }

  rxBurst(burst: Uint32Array, n: number): number {
    const d = this.d;
    if (d.noRx) return 0;
    // The whole burst in one wasm call when the cache can serve it (copy=1 adds byte work: TypeScript).
    if (this.mbufKernel !== null && !d.copy && burst.buffer === this.heap.buffer) {
      if (this.mbufKernel.nullRx(this.mp.offset, this.heap.lcoreId, burst.byteOffset, n, d.size, d.port, d.stats * 8) === n && n > 0) return n;
    }
    if (this.mp.allocBulk(burst, n) === 0) {
      this.f64[d.stats + RXQ_NOMBUF] += n;
      return 0;
    }
    const size = d.size;
    const port = d.port;
    if (this.kernel !== null && burst.buffer === this.heap.buffer) {
      this.kernel.rxFill(burst.byteOffset, n, size, port);
    } else {
      // The twin of the rxFill kernel.
      const u16 = this.u16;
      const u32 = this.u32;
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        u16[(h << 5) + H_DATA_LEN] = size;
        u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = size;
        u16[(h << 5) + H_PORT] = port;
      }
    }
    if (d.copy) {
      if (this.kernel !== null && burst.buffer === this.heap.buffer) this.kernel.copyIn(burst.byteOffset, n, d.dummy, size);
      else for (let i = 0; i < n; i++) this.heap.u8.copyWithin(this.mb.mtod(burst[i]!), d.dummy, d.dummy + size); // the copyIn twin
    }
    this.f64[d.stats + RXQ_PACKETS] += n;
    this.f64[d.stats + RXQ_BYTES] += n * size;
    return n;
  }

  descriptor(): NullQueueDesc {
    return this.d;
  }
}

class NullTxQueue implements TxQueue {
  private readonly mb: Mbufs;
  private readonly f64: Float64Array;
  private readonly kernel: FwdKernel | null;
  private readonly mbufKernel: MbufKernel | null;

  constructor(
    private readonly heap: Heap,
    private readonly d: NullQueueDesc,
  ) {
    this.mb = new Mbufs(heap);
    this.f64 = heap.f64;
    this.kernel = heap.kernels?.fwd ?? null;
    this.mbufKernel = heap.kernels?.mbuf ?? null;
  }

  txBurst(burst: Uint32Array, n: number): number {
    const d = this.d;
    if (this.mbufKernel !== null && !d.copy && burst.buffer === this.heap.buffer) {
      // Counters and the free in one wasm call; the general free takes what it left (clones).
      this.mb.freeBulkRest(burst, n, 0, this.mbufKernel.nullTx(burst.byteOffset, n, this.heap.lcoreId, d.stats * 8, this.mb.freeScratch));
      return n;
    }
    let bytes = 0;
    if (d.copy && this.kernel !== null && burst.buffer === this.heap.buffer) {
      this.kernel.copyOut(burst.byteOffset, n, d.dummy, d.size);
      bytes = this.kernel.pktLenSum(burst.byteOffset, n);
    } else if (d.copy) {
      // The copyOut twin.
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const len = Math.min(this.mb.dataLen(h), d.size);
        this.heap.u8.copyWithin(d.dummy, this.mb.mtod(h), this.mb.mtod(h) + len);
        bytes += this.mb.pktLen(h);
      }
    } else if (this.kernel !== null && burst.buffer === this.heap.buffer) {
      bytes = this.kernel.pktLenSum(burst.byteOffset, n);
    } else {
      for (let i = 0; i < n; i++) bytes += this.mb.pktLen(burst[i]!); // the pktLenSum twin
    }
    this.mb.freeBulk(burst, n);
    this.f64[d.stats + TXQ_PACKETS] += n;
    this.f64[d.stats + TXQ_BYTES] += bytes;
    return n;
  }

  descriptor(): NullQueueDesc {
    return this.d;
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

  private desc(stats: number, pool: number): NullQueueDesc {
    return { driver: 'net_null', port: this.ctx.portId, size: this.size, copy: this.copy, noRx: this.noRx, stats, pool, dummy: this.dummy };
  }

  rxQueueSetup(_q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    if (this.size > pool.bufLen - pool.headroom) {
      throw new ArgError(`${this.ctx.name}: size=${this.size} does not fit the pool's ${pool.bufLen - pool.headroom}-byte data room`);
    }
    return new NullRxQueue(this.ctx.heap, this.desc(stats, pool.offset));
  }

  txQueueSetup(_q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    return new NullTxQueue(this.ctx.heap, this.desc(stats, 0));
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
  openRxQueue: (heap, d) => new NullRxQueue(heap, d as NullQueueDesc),
  openTxQueue: (heap, d) => new NullTxQueue(heap, d as NullQueueDesc),
};
