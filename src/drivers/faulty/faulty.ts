/**
 * net_faulty: a loopback port that breaks what it carries on purpose, so a
 * test can prove loss, duplicates, reordering and latency are measured
 * exactly. Each queue's tx feeds the same queue's rx through a delay line:
 *
 *   --vdev net_faulty0,drop=0.01,dup=0.01,swap=0.01,delay_ns=50000,seed=7
 *
 * Per packet sent, one draw of a seeded generator decides at most one
 * fault: dropped (freed), delivered twice (one more reference, the same
 * mbuf on the line twice), or swapped with the next packet of the burst
 * (which then gets no fault of its own); the last packet of a burst has no
 * next and is not swapped. Every packet stays on the line `delay_ns` before
 * rx may take it. The faults made are the xstats `faulty_dropped`,
 * `faulty_duplicated`, `faulty_swapped`, so a test compares the measured
 * counts with them. A full line (4096 slots a queue) refuses the rest of a
 * burst, counted as tx errors, as net_ring does.
 *
 * A test driver: TypeScript only (no kernel), one draw per packet.
 */
import { ArgError } from '../../errors.js';
import { nowNs } from '../../eal/clock.js';
import type { Burst, Heap } from '../../eal/heap.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { RXQ_BYTES, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats.js';
import { Mbufs } from '../../mem/mbuf.js';
import { vdevMac } from '../mac.js';
import {
  FAULTY_QUEUE_SIZE,
  FQ_D_DELAY_NS,
  FQ_D_DROP,
  FQ_D_DROPPED,
  FQ_D_DUP,
  FQ_D_DUPLICATED,
  FQ_D_SWAP,
  FQ_D_SWAPPED,
  FQ_W_HEAD,
  FQ_W_RNG,
  FQ_W_SIZE,
  FQ_W_SLOTS,
  FQ_W_TAIL,
  FQ_W_TIMES,
} from './faulty-layout.js';

/** Slots on each queue's delay line. */
const LINE_SIZE = 4096;
const MAX_QUEUES = 16;

interface FaultyQueueDesc extends QueueDescriptor {
  driver: 'net_faulty';
  /** Heap offset of the queue pair's block. */
  q: number;
  /** The ethdev statistics block of this queue. */
  stats: number;
}

/** The delay line's views, shared by a queue pair's two ends. */
class Line {
  protected readonly u32: Uint32Array;
  protected readonly i32: Int32Array;
  protected readonly f64: Float64Array;
  protected readonly w: number;
  protected readonly d: number;
  protected readonly mask: number;
  protected readonly slots: number;
  protected readonly times: number;
  protected readonly mb: Mbufs;

  constructor(
    heap: Heap,
    protected readonly desc: FaultyQueueDesc,
  ) {
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.f64 = heap.f64;
    this.w = desc.q >>> 2;
    this.d = desc.q >>> 3;
    this.mask = this.u32[this.w + FQ_W_SIZE]! - 1;
    this.slots = this.u32[this.w + FQ_W_SLOTS]! >>> 2;
    this.times = this.u32[this.w + FQ_W_TIMES]! >>> 3;
    this.mb = new Mbufs(heap);
  }

  descriptor(): FaultyQueueDesc {
    return this.desc;
  }
}

class FaultyRxQueue extends Line implements RxQueue {
  rxBurst(burst: Burst, n: number): number {
    const tail = Atomics.load(this.i32, this.w + FQ_W_TAIL) >>> 0;
    let head = this.u32[this.w + FQ_W_HEAD]!;
    if (head === tail) return 0;
    const now = nowNs();
    let got = 0;
    while (got < n && head !== tail && this.f64[this.times + (head & this.mask)]! <= now) {
      burst[got++] = this.u32[this.slots + (head & this.mask)]!;
      head = (head + 1) >>> 0;
    }
    if (got === 0) return 0;
    Atomics.store(this.i32, this.w + FQ_W_HEAD, head | 0);
    this.f64[this.desc.stats + RXQ_PACKETS] += got;
    this.f64[this.desc.stats + RXQ_BYTES] += this.mb.pktLenSum(burst, got);
    return got;
  }
}

class FaultyTxQueue extends Line implements TxQueue {
  private readonly drops: Burst;

  constructor(heap: Heap, desc: FaultyQueueDesc) {
    super(heap, desc);
    this.drops = heap.burst(512);
  }

  /** xorshift32: the next draw in [0, 1). */
  private draw(): number {
    let x = this.u32[this.w + FQ_W_RNG]!;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.u32[this.w + FQ_W_RNG] = x >>> 0;
    return (x >>> 0) / 2 ** 32;
  }

  private put(tail: number, h: number, at: number): void {
    this.u32[this.slots + (tail & this.mask)] = h;
    this.f64[this.times + (tail & this.mask)] = at;
  }

  txBurst(burst: Burst, n: number): number {
    const f = this.f64;
    const d = this.d;
    const pDrop = f[d + FQ_D_DROP]!;
    const pDup = pDrop + f[d + FQ_D_DUP]!;
    const pSwap = pDup + f[d + FQ_D_SWAP]!;
    const at = nowNs() + f[d + FQ_D_DELAY_NS]!;
    const head = Atomics.load(this.i32, this.w + FQ_W_HEAD) >>> 0;
    let tail = this.u32[this.w + FQ_W_TAIL]!;
    const size = this.mask + 1;
    let nDrop = 0;
    let i = 0;
    let bytes = 0;
    // Each step needs at most two slots (a duplicate, a swapped pair).
    while (i < n && size - ((tail - head) >>> 0) >= 2 && nDrop < this.drops.length) {
      const h = burst[i]!;
      const r = this.draw();
      bytes += this.mb.pktLen(h);
      if (r < pDrop) {
        this.drops[nDrop++] = h;
        f[d + FQ_D_DROPPED]! += 1;
      } else if (r < pDup) {
        this.mb.refcntUpdate(h, 1);
        this.put(tail, h, at);
        this.put(tail + 1, h, at);
        tail = (tail + 2) >>> 0;
        f[d + FQ_D_DUPLICATED]! += 1;
      } else if (r < pSwap && i + 1 < n) {
        const next = burst[++i]!;
        bytes += this.mb.pktLen(next);
        this.put(tail, next, at);
        this.put(tail + 1, h, at);
        tail = (tail + 2) >>> 0;
        f[d + FQ_D_SWAPPED]! += 1;
      } else {
        this.put(tail, h, at);
        tail = (tail + 1) >>> 0;
      }
      i++;
    }
    Atomics.store(this.i32, this.w + FQ_W_TAIL, tail | 0);
    if (nDrop > 0) this.mb.freeBulk(this.drops, nDrop);
    if (i < n) f[this.desc.stats + TXQ_ERRORS] += n - i;
    f[this.desc.stats + TXQ_PACKETS] += i;
    f[this.desc.stats + TXQ_BYTES] += bytes;
    return i;
  }
}

function probArg(ctx: DriverContext, key: string): number {
  const v = ctx.args.get(key);
  if (v === undefined) return 0;
  const p = Number(v);
  if (v.trim() === '' || !(p >= 0 && p <= 1)) throw new ArgError(`${ctx.name}: ${key}=${v}: must be a probability in [0, 1]`);
  return p;
}

function numArg(ctx: DriverContext, key: string, dflt: number, max: number): number {
  const v = ctx.args.get(key);
  if (v === undefined) return dflt;
  const x = Number(v);
  if (!/^\d+$/.test(v) || x > max) throw new ArgError(`${ctx.name}: ${key}=${v}: must be an integer in [0, ${max}]`);
  return x;
}

class FaultyDriver implements EthDriver {
  private readonly mac: Uint8Array;
  private readonly blocks: number[] = [];
  private readonly drop: number;
  private readonly dup: number;
  private readonly swap: number;
  private readonly delayNs: number;
  private readonly seed: number;

  constructor(private readonly ctx: DriverContext) {
    this.mac = vdevMac(ctx.name);
    this.drop = probArg(ctx, 'drop');
    this.dup = probArg(ctx, 'dup');
    this.swap = probArg(ctx, 'swap');
    if (this.drop + this.dup + this.swap > 1) throw new ArgError(`${ctx.name}: drop + dup + swap = ${this.drop + this.dup + this.swap}: the probabilities must add up to at most 1`);
    this.delayNs = numArg(ctx, 'delay_ns', 0, 100e9);
    this.seed = numArg(ctx, 'seed', 1, 0xffffffff);
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    return { driverName: 'net_faulty', maxRxQueues: MAX_QUEUES, maxTxQueues: MAX_QUEUES, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    const heap = this.ctx.heap;
    while (this.blocks.length < Math.max(nbRxq, nbTxq)) {
      const q = heap.reserve(FAULTY_QUEUE_SIZE, 64, `${this.ctx.name} queue`);
      const w = q >>> 2;
      const d = q >>> 3;
      heap.u32[w + FQ_W_SIZE] = LINE_SIZE;
      heap.u32[w + FQ_W_SLOTS] = heap.reserve(4 * LINE_SIZE, 64, `${this.ctx.name} line`);
      heap.u32[w + FQ_W_TIMES] = heap.reserve(8 * LINE_SIZE, 64, `${this.ctx.name} line times`);
      // Each queue its own stream of draws, all from the seed; xorshift needs a non-zero state.
      heap.u32[w + FQ_W_RNG] = (Math.imul(this.seed ^ 0x9e3779b9, this.blocks.length + 1) >>> 0) || 1;
      heap.f64[d + FQ_D_DROP] = this.drop;
      heap.f64[d + FQ_D_DUP] = this.dup;
      heap.f64[d + FQ_D_SWAP] = this.swap;
      heap.f64[d + FQ_D_DELAY_NS] = this.delayNs;
      this.blocks.push(q);
    }
  }

  private block(q: number): number {
    const b = this.blocks[q];
    if (b === undefined) throw new ArgError(`${this.ctx.name}: queue ${q} was not configured`);
    return b;
  }

  rxQueueSetup(q: number, _nbDesc: number, _pool: unknown, _conf: object, stats: number): RxQueue {
    return new FaultyRxQueue(this.ctx.heap, { driver: 'net_faulty', q: this.block(q), stats });
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    return new FaultyTxQueue(this.ctx.heap, { driver: 'net_faulty', q: this.block(q), stats });
  }

  start(): void {}
  stop(): void {}

  close(): void {
    // Packets still on a line belong to nobody else: free each slot's reference.
    const heap = this.ctx.heap;
    const mb = new Mbufs(heap);
    for (const q of this.blocks) {
      const w = q >>> 2;
      const mask = heap.u32[w + FQ_W_SIZE]! - 1;
      const slots = heap.u32[w + FQ_W_SLOTS]! >>> 2;
      const tail = heap.u32[w + FQ_W_TAIL]!;
      for (let h = heap.u32[w + FQ_W_HEAD]!; h !== tail; h = (h + 1) >>> 0) mb.free(heap.u32[slots + (h & mask)]!);
      heap.u32[w + FQ_W_HEAD] = tail;
    }
  }

  linkUp(): boolean {
    return true;
  }

  linkSpeed(): number {
    return 10_000;
  }

  xstats(): Record<string, number> {
    const f = this.ctx.heap.f64;
    let dropped = 0;
    let duplicated = 0;
    let swapped = 0;
    for (const q of this.blocks) {
      dropped += f[(q >>> 3) + FQ_D_DROPPED]!;
      duplicated += f[(q >>> 3) + FQ_D_DUPLICATED]!;
      swapped += f[(q >>> 3) + FQ_D_SWAPPED]!;
    }
    return { faulty_dropped: dropped, faulty_duplicated: duplicated, faulty_swapped: swapped };
  }
}

export const netFaulty: DriverSpec = {
  name: 'net_faulty',
  keys: ['drop', 'dup', 'swap', 'delay_ns', 'seed'],
  create: (ctx) => new FaultyDriver(ctx),
  openRxQueue: (heap, d) => new FaultyRxQueue(heap, d as FaultyQueueDesc),
  openTxQueue: (heap, d) => new FaultyTxQueue(heap, d as FaultyQueueDesc),
};
