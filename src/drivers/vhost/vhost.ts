/**
 * net_vhost: the host side of a virtio-net link (DPDK's rte_eth_vhost).
 * `--vdev net_vhost0,iface=/tmp/vh.sock,queues=1` serves a vhost-user
 * frontend at iface: a virtio_user port of the same process pairs in
 * process; any other (DPDK's virtio-user, QEMU, OVS) comes over the unix
 * socket, which the port listens on from its start (`client=1`: connects to a
 * frontend that listens there, and reconnects). rx is dequeue (what the guest
 * sent), tx is enqueue (what the guest will receive). The link is up once the
 * guest's first queue pair is ready, down when it goes away.
 *
 * Guest memory is mapped into the heap (docs/vhost-user.md): `guest_mem=MB`
 * (dpkit's, default 1280) is the room testpmd adds to its heap for it.
 *
 * As DPDK's PMD, tx frees every packet the enqueue took, and counts what the
 * guest had no room for as missed (the caller keeps those). dpkit adds
 * `avail_per_packet=1`, the vhost enqueue study's arm that reads the avail index
 * before every packet instead of once per burst, `net_stats=1`, which counts every packet
 * by size bin, multicast and broadcast as DPDK's vhost library always does (its
 * xstats rx_q0_size_64_packets …; docs/benchmarks.md, "What differs from DPDK"), and `mrg_rxbuf=0`,
 * `indirect=0`, `event_idx=0` and `in_order=0` to withhold those features from the offer.
 */
import { ArgError } from '../../errors.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { PktStats, pktStatsOp, type PktStatsOp } from '../../ethdev/pkt-stats.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { listen, pathClaimed, unlisten } from '../../vhost/in-process.js';
import { BackendSocket } from '../../vhost/socket-backend.js';
import { VhostDev } from '../../vhost/vhost-dev.js';
import { VhostQueue, type VhostQueueDesc } from '../../vhost/vhost-queue.js';
import { S_AVAIL_READS, S_BAD_CHAINS, S_CALLS, S_DROPS } from '../../vhost/vring-state.js';
import { Feature, bit, rxVring, txVring, type Features } from '../../virtio/virtio-net.js';
import { vdevMac } from '../mac.js';

interface VhostRxDesc extends QueueDescriptor {
  driver: 'net_vhost';
  vq: VhostQueueDesc;
  pool: number;
  stats: number;
  /** net_stats=1: heap offset of the queue's pktStats block (ethdev/stats.record.ts); 0 without. */
  pktStats: number;
}

interface VhostTxDesc extends QueueDescriptor {
  driver: 'net_vhost';
  vq: VhostQueueDesc;
  stats: number;
  /** As VhostRxDesc's. */
  pktStats: number;
}

class VhostRxQueue implements RxQueue {
  private readonly vq: VhostQueue;
  private readonly pool: Mempool;
  private readonly mb: Mbufs;
  /** net_stats=1's per-packet count, chosen once. */
  private readonly countPkts: PktStatsOp;
  private readonly f64: Float64Array;
  private readonly stats: number;

  constructor(
    heap: Heap,
    private readonly d: VhostRxDesc,
  ) {
    this.vq = new VhostQueue(heap, d.vq);
    this.pool = Mempool.attach(heap, { offset: d.pool });
    this.mb = new Mbufs(heap);
    this.countPkts = pktStatsOp(heap);
    this.f64 = heap.f64;
    this.stats = d.stats;
  }

  /** Failed allocations the vhost queue counts straight into the port's rx_nombuf (the queue's descriptor says where). */
  rxBurst(burst: Burst, n: number): number {
    const got = this.vq.dequeueBurst(this.pool, burst, n);
    if (got === 0) return 0;
    const f = this.f64;
    f[this.stats + RXQ_PACKETS] += got;
    f[this.stats + RXQ_BYTES] += this.mb.pktLenSum(burst, got);
    if (this.d.pktStats) this.countPkts(burst, got, this.d.pktStats);
    return got;
  }

  descriptor(): VhostRxDesc {
    return this.d;
  }
}

class VhostTxQueue implements TxQueue {
  private readonly vq: VhostQueue;
  private readonly mb: Mbufs;
  /** net_stats=1's per-packet count, chosen once. */
  private readonly countPkts: PktStatsOp;
  private readonly f64: Float64Array;
  private readonly stats: number;

  constructor(
    heap: Heap,
    private readonly d: VhostTxDesc,
  ) {
    this.vq = new VhostQueue(heap, d.vq);
    this.mb = new Mbufs(heap);
    this.countPkts = pktStatsOp(heap);
    this.f64 = heap.f64;
    this.stats = d.stats;
  }

  txBurst(burst: Burst, n: number): number {
    const sent = this.vq.enqueueBurst(burst, n);
    const f = this.f64;
    // As DPDK's eth_vhost_tx: what the guest had no room for stays with the caller, counted.
    if (sent < n) f[this.stats + TXQ_ERRORS] += n - sent;
    if (sent === 0) return 0;
    f[this.stats + TXQ_PACKETS] += sent;
    f[this.stats + TXQ_BYTES] += this.mb.pktLenSum(burst, sent);
    if (this.d.pktStats) this.countPkts(burst, sent, this.d.pktStats);
    this.mb.freeBulk(burst, sent);
    return sent;
  }

  descriptor(): VhostTxDesc {
    return this.d;
  }
}

class VhostDriver implements EthDriver {
  readonly dev: VhostDev;
  private readonly iface: string;
  private readonly mac: Uint8Array;
  private readonly client: boolean;
  private socket: BackendSocket | null = null;
  private closed = false;
  private readonly pktStats: PktStats;

  constructor(private readonly ctx: DriverContext) {
    const { name, args, heap } = ctx;
    const iface = args.get('iface');
    if (!iface) throw new ArgError(`${name}: iface=SOCKET is required (the vhost-user socket path)`);
    this.iface = iface;
    const queues = intArg(name, args, 'queues', 1, 1, 128);
    this.client = boolArg(name, args, 'client');
    intArg(name, args, 'guest_mem', DEFAULT_GUEST_MEM_MB, 0, 4095);
    let disable: Features = 0n;
    if (args.has('mrg_rxbuf') && !boolArg(name, args, 'mrg_rxbuf')) disable |= bit(Feature.NET_F_MRG_RXBUF);
    if (args.has('indirect') && !boolArg(name, args, 'indirect')) disable |= bit(Feature.RING_F_INDIRECT_DESC);
    if (args.has('event_idx') && !boolArg(name, args, 'event_idx')) disable |= bit(Feature.RING_F_EVENT_IDX);
    if (args.has('in_order') && !boolArg(name, args, 'in_order')) disable |= bit(Feature.F_IN_ORDER);
    this.dev = new VhostDev(heap, name, { queues, disable, availPerPacket: boolArg(name, args, 'avail_per_packet') });
    this.pktStats = new PktStats(heap, name, boolArg(name, args, 'net_stats'));
    this.mac = vdevMac(name);
    listen(heap, iface, this.dev, name);
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    const q = this.dev.opts.queues;
    return { driverName: 'net_vhost', maxRxQueues: q, maxTxQueues: q, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    const q = this.dev.opts.queues;
    if (nbRxq > q || nbTxq > q) throw new ArgError(`${this.ctx.name}: ${Math.max(nbRxq, nbTxq)} queues asked, the device has queues=${q}`);
  }

  rxQueueSetup(q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    const vq = { ...this.dev.queueDesc(txVring(q), this.ctx.portId), nombuf: stats + RXQ_NOMBUF };
    return new VhostRxQueue(this.ctx.heap, { driver: 'net_vhost', vq, pool: pool.offset, stats, pktStats: this.pktStats.block('rx', q) });
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    return new VhostTxQueue(this.ctx.heap, { driver: 'net_vhost', vq: this.dev.queueDesc(rxVring(q), this.ctx.portId), stats, pktStats: this.pktStats.block('tx', q) });
  }

  /** Opens the socket (once; stop leaves it open, as DPDK's), unless the frontend is in this process. */
  start(): void {
    if (this.socket !== null || pathClaimed(this.ctx.heap, this.iface)) return;
    this.socket = new BackendSocket(this.ctx.heap, this.dev, this.ctx.name, { path: this.iface, client: this.client });
  }

  stop(): void {}

  /** Stops listening; the host holds no mbufs of its own (the guest's buffers are the guest's). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.close();
    this.socket = null;
    unlisten(this.ctx.heap, this.iface);
  }

  linkUp(): boolean {
    return this.dev.ready();
  }

  linkSpeed(): number {
    return 10_000;
  }

  xstats(): Record<string, number> {
    const d = this.dev;
    return {
      rx_bad_chains: d.counter(S_BAD_CHAINS, 1),
      tx_bad_chains: d.counter(S_BAD_CHAINS, 0),
      tx_dropped_too_big: d.counter(S_DROPS, 0),
      guest_notifications: d.counter(S_CALLS, 0) + d.counter(S_CALLS, 1),
      avail_idx_reads: d.counter(S_AVAIL_READS, 0) + d.counter(S_AVAIL_READS, 1),
      ...this.pktStats.xstats(),
    };
  }
}

/** Heap room for the guest's memory, in MiB: DPDK's virtio-user with `-m 1024` maps a little over 1 GiB. */
const DEFAULT_GUEST_MEM_MB = 1280;

export const netVhost: DriverSpec = {
  name: 'net_vhost',
  keys: ['iface', 'queues', 'client', 'guest_mem', 'avail_per_packet', 'net_stats', 'mrg_rxbuf', 'in_order', 'indirect', 'event_idx'],
  create: (ctx) => new VhostDriver(ctx),
  memoryNeeded: (args) => {
    const mb = Number(args.find(([k]) => k === 'guest_mem')?.[1] ?? DEFAULT_GUEST_MEM_MB);
    // A bad value is refused, with its name, when the port is created.
    return Number.isInteger(mb) && mb >= 0 && mb < 4096 ? mb * 1024 * 1024 : 0;
  },
  openRxQueue: (heap, d) => new VhostRxQueue(heap, d as VhostRxDesc),
  openTxQueue: (heap, d) => new VhostTxQueue(heap, d as VhostTxDesc),
};
