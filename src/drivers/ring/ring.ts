/**
 * net_ring: a port whose queues are rings in the shared heap (DPDK's
 * rte_eth_ring). By default each queue's tx ring is also its rx ring, so a
 * port loops back what it sends; `nodeaction=NAME:NODE:CREATE` names the
 * rings and `nodeaction=NAME:NODE:ATTACH` makes another port use them.
 * `Ethdev.create` makes ports from devargs; `ringPort()` wires ports to any
 * rings (rte_eth_from_rings), e.g. port A's tx to port B's rx.
 *
 * Rings are single-producer / single-consumer: one lcore transmits on a
 * queue and one receives from it, as testpmd assigns them.
 *
 * dpkit extension, `rss=1`: the port spreads what it sends over its rx
 * queues by the packets' Toeplitz RSS hash, as a NIC spreads what it
 * receives, and stores the hash in each mbuf (RX_RSS_HASH). Its rings are
 * then multi-producer, since every tx queue may feed every rx ring; packets
 * an rx ring has no room for are dropped and counted as tx errors.
 */
import { ArgError } from '../../errors.js';
import { boolArg } from '../../ethdev/devargs.js';
import { newHdrInfo } from '../../net/headers.js';
import { RETA_SIZE, Toeplitz, packetRssHash } from '../../net/rss.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { RXQ_BYTES, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { OlFlags } from '../../mem/mbuf-layout.js';
import { Ring, type RingDescriptor } from '../../ring/ring.js';
import { vdevMac } from '../mac.js';

/** DPDK's RTE_PMD_RING_MAX_RX_RINGS / TX_RINGS. */
const MAX_RINGS = 16;
/** Slots per ring DPDK's ring PMD creates. */
const RING_SIZE = 1024;

interface RingQueueDesc extends QueueDescriptor {
  driver: 'net_ring';
  ring: RingDescriptor;
  stats: number;
  /** With rss=1, a tx queue's target rings (the port's rx rings), by queue. */
  rssRings?: RingDescriptor[];
}

class RingRxQueue implements RxQueue {
  private readonly ring: Ring;
  private readonly f64: Float64Array;
  private readonly mb: Mbufs;

  constructor(
    heap: Heap,
    private readonly d: RingQueueDesc,
  ) {
    this.ring = Ring.attach(heap, d.ring);
    this.f64 = heap.f64;
    this.mb = new Mbufs(heap);
  }

  rxBurst(burst: Burst, n: number): number {
    const got = this.ring.dequeueBurst(burst, n);
    if (got === 0) return 0;
    const bytes = this.mb.pktLenSum(burst, got);
    this.f64[this.d.stats + RXQ_PACKETS] += got;
    this.f64[this.d.stats + RXQ_BYTES] += bytes;
    return got;
  }

  descriptor(): RingQueueDesc {
    return this.d;
  }
}

class RingTxQueue implements TxQueue {
  private readonly ring: Ring;
  private readonly f64: Float64Array;
  private readonly mb: Mbufs;
  private readonly rss: RssSpreader | null;

  constructor(
    heap: Heap,
    private readonly d: RingQueueDesc,
  ) {
    this.ring = Ring.attach(heap, d.ring);
    this.f64 = heap.f64;
    this.mb = new Mbufs(heap);
    this.rss = d.rssRings ? new RssSpreader(heap, d.rssRings) : null;
  }

  txBurst(burst: Burst, n: number): number {
    if (this.rss !== null) return this.rssBurst(burst, n);
    const sent = this.ring.enqueueBurst(burst, n);
    // As DPDK's ring PMD: what a full ring refuses counts as tx errors (the caller still owns it).
    if (sent < n) this.f64[this.d.stats + TXQ_ERRORS] += n - sent;
    if (sent === 0) return 0;
    const bytes = this.mb.pktLenSum(burst, sent);
    this.f64[this.d.stats + TXQ_PACKETS] += sent;
    this.f64[this.d.stats + TXQ_BYTES] += bytes;
    return sent;
  }

  /** rss=1: every packet is taken; those their rx ring cannot hold are dropped (tx errors). */
  private rssBurst(burst: Burst, n: number): number {
    const bytes = this.mb.pktLenSum(burst, n);
    const dropped = this.rss!.spread(burst, n);
    this.f64[this.d.stats + TXQ_PACKETS] += n;
    this.f64[this.d.stats + TXQ_BYTES] += bytes;
    if (dropped > 0) this.f64[this.d.stats + TXQ_ERRORS] += dropped;
    return n;
  }

  descriptor(): RingQueueDesc {
    return this.d;
  }
}

/** Hashes each packet, stamps the hash in the mbuf and enqueues it on its rx ring by RETA. */
class RssSpreader {
  private readonly rings: Ring[];
  private readonly toeplitz = new Toeplitz();
  private readonly info = newHdrInfo();
  private readonly queueOf = new Uint16Array(512);
  private readonly scratch: Burst;
  private readonly mb: Mbufs;

  constructor(heap: Heap, rings: RingDescriptor[]) {
    this.rings = rings.map((r) => Ring.attach(heap, r));
    this.mb = new Mbufs(heap);
    this.scratch = heap.burst(512);
  }

  /** @returns how many packets were dropped (and freed) for lack of room. */
  spread(burst: Burst, n: number): number {
    const mb = this.mb;
    const nbq = this.rings.length;
    let dropped = 0;
    for (let start = 0; start < n; start += 512) {
      const m = Math.min(512, n - start);
      for (let i = 0; i < m; i++) {
        const h = burst[start + i]!;
        const hash = packetRssHash(this.toeplitz, mb.u8, mb.mtod(h), mb.dataLen(h), this.info);
        mb.setHash(h, hash);
        mb.setOlFlags(h, mb.olFlags(h) | OlFlags.RX_RSS_HASH);
        this.queueOf[i] = (hash % RETA_SIZE) % nbq;
      }
      for (let q = 0; q < nbq; q++) {
        let k = 0;
        for (let i = 0; i < m; i++) if (this.queueOf[i] === q) this.scratch[k++] = burst[start + i]!;
        if (k === 0) continue;
        const sent = this.rings[q]!.enqueueBurst(this.scratch, k);
        if (sent < k) {
          mb.freeBulk(this.scratch, k - sent, sent);
          dropped += k - sent;
        }
      }
    }
    return dropped;
  }
}

/** Named ring sets per heap, for nodeaction CREATE / ATTACH. */
const named = new WeakMap<Heap, Map<string, Ring[]>>();

class RingDriver implements EthDriver {
  private rxRings: Ring[];
  private txRings: Ring[];
  /** Rings this port created and must drain on close. */
  private readonly owned: Ring[] = [];
  private readonly mac: Uint8Array;
  private readonly rss: boolean;
  private nbRxq = 0;

  constructor(
    private readonly ctx: DriverContext,
    rx?: Ring[],
    tx?: Ring[],
  ) {
    this.mac = vdevMac(ctx.name);
    this.rss = boolArg(ctx.name, ctx.args, 'rss');
    if (this.rss && ctx.args.has('nodeaction')) throw new ArgError(`${ctx.name}: rss=1 and nodeaction cannot be combined`);
    this.rxRings = rx ?? [];
    this.txRings = tx ?? [];
    const action = ctx.args.get('nodeaction');
    if (action !== undefined) this.nodeAction(action);
  }

  private nodeAction(action: string): void {
    const [name, node, what] = action.split(':');
    if (!name || node === undefined || !/^\d+$/.test(node) || (what !== 'CREATE' && what !== 'ATTACH')) {
      throw new ArgError(`${this.ctx.name}: nodeaction=${action}: expected NAME:NODE:CREATE or NAME:NODE:ATTACH`);
    }
    let byName = named.get(this.ctx.heap);
    if (!byName) named.set(this.ctx.heap, (byName = new Map()));
    if (what === 'CREATE') {
      if (byName.has(name)) throw new ArgError(`${this.ctx.name}: nodeaction=${action}: rings '${name}' already exist`);
      const rings = this.createRings(name, MAX_RINGS);
      byName.set(name, rings);
      this.rxRings = this.txRings = rings;
    } else {
      const rings = byName.get(name);
      if (!rings) throw new ArgError(`${this.ctx.name}: nodeaction=${action}: no rings named '${name}' (CREATE them with an earlier --vdev)`);
      this.rxRings = this.txRings = rings;
    }
  }

  private createRings(name: string, n: number): Ring[] {
    const rings: Ring[] = [];
    for (let i = 0; i < n; i++) {
      const r = Ring.create(this.ctx.heap, { name: `ETH_RXTX${i}_${name}`, count: RING_SIZE, sp: !this.rss, sc: true });
      rings.push(r);
      this.owned.push(r);
    }
    return rings;
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    const max = this.rxRings.length || MAX_RINGS;
    return { driverName: 'net_ring', maxRxQueues: max, maxTxQueues: this.txRings.length || MAX_RINGS, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    this.nbRxq = nbRxq;
    // A plain `net_ringN` loops each queue back to itself: one ring per queue, rx = tx.
    if (this.rxRings.length === 0 && this.txRings.length === 0) {
      this.rxRings = this.txRings = this.createRings(this.ctx.name, Math.max(nbRxq, nbTxq));
    }
    while (this.rxRings === this.txRings && this.rxRings.length < Math.max(nbRxq, nbTxq) && this.owned.length > 0) {
      const r = Ring.create(this.ctx.heap, { name: `ETH_RXTX${this.rxRings.length}_${this.ctx.name}`, count: RING_SIZE, sp: !this.rss, sc: true });
      this.rxRings.push(r);
      this.owned.push(r);
    }
  }

  rxQueueSetup(q: number, _nbDesc: number, _pool: unknown, _conf: object, stats: number): RxQueue {
    const ring = this.rxRings[q];
    if (!ring) throw new ArgError(`${this.ctx.name}: no ring for rx queue ${q}`);
    return new RingRxQueue(this.ctx.heap, { driver: 'net_ring', ring: ring.descriptor(), stats });
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const ring = this.txRings[q];
    if (!ring) throw new ArgError(`${this.ctx.name}: no ring for tx queue ${q}`);
    const rssRings = this.rss ? this.rxRings.slice(0, this.nbRxq).map((r) => r.descriptor()) : undefined;
    return new RingTxQueue(this.ctx.heap, { driver: 'net_ring', ring: ring.descriptor(), stats, ...(rssRings ? { rssRings } : {}) });
  }

  start(): void {}
  stop(): void {}

  close(): void {
    // Packets still in our rings belong to nobody else: return them to their pools.
    const mb = new Mbufs(this.ctx.heap);
    const burst = this.ctx.heap.scratch('net_ring close', 64);
    for (const r of this.owned) {
      for (let n; (n = r.dequeueBurst(burst, 64)) > 0; ) mb.freeBulk(burst, n);
    }
  }

  linkUp(): boolean {
    return true;
  }

  linkSpeed(): number {
    return 10_000;
  }
}

export const netRing: DriverSpec = {
  name: 'net_ring',
  keys: ['nodeaction', 'rss'],
  create: (ctx) => new RingDriver(ctx),
  openRxQueue: (heap, d) => new RingRxQueue(heap, d as RingQueueDesc),
  openTxQueue: (heap, d) => new RingTxQueue(heap, d as RingQueueDesc),
};

/**
 * A driver over given rings (rte_eth_from_rings): queue i receives from
 * rx[i] and sends to tx[i]. Register it with Ethdev.createWith().
 */
export function ringPortDriver(ctx: DriverContext, rx: Ring[], tx: Ring[]): EthDriver {
  if (rx.length === 0 || tx.length === 0) throw new ArgError(`${ctx.name}: needs at least one rx and one tx ring`);
  return new RingDriver(ctx, rx, tx);
}
