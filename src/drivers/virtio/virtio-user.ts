/**
 * virtio_user: a virtio-net device driven from user space through a
 * vhost-user backend (DPDK's net_virtio_user), the guest side of the link.
 * `--vdev virtio_user0,path=/tmp/vh.sock` connects to the backend at that
 * path: a net_vhost port of the same process pairs in process; any other
 * (DPDK's net_vhost, OVS-DPDK, another dpkit) over the unix socket, with the
 * heap backed by a memfd the backend maps (shared-heap.ts). As a client it
 * connects when configured (and fails then if no backend listens), and
 * reconnects every second after the backend went away; `server=1` listens at
 * path instead and takes the backend that connects, again after a disconnect.
 * The link is up while a backend has the rings.
 *
 * Devargs (DPDK's): path, server, queues, queue_size, mrg_rxbuf=0|1, in_order=0|1, mac,
 * packed_vq=0|1 (ask for packed rings, virtio-packed.ts; split if the
 * backend does not offer them, as DPDK's virtio_user). dpkit
 * adds: indirect=0|1 and event_idx=0|1 (offer the ring features, default 1),
 * mtu (largest frame received without MRG_RXBUF, default 1500: rx buffers
 * are chained to hold it), tx_free_mode=single|bulk64|bulkall (the i40e
 * bulk-free study's arms, see TxReclaim), and net_stats=1: every packet counted by
 * size bin, multicast and broadcast, as DPDK's virtio PMD always does (xstats
 * rx_q0_size_64_packets …), so a comparison with DPDK can do equal work.
 */
import { PktStats } from '../../ethdev/pkt-stats.js';
import { ArgError } from '../../errors.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, RxQueueConf, TxQueue, TxQueueConf } from '../../ethdev/driver.js';
import { parseTxFreeMode, type TxFreeMode } from '../../ethdev/tx-reclaim.js';
import type { Heap } from '../../eal/heap.js';
import type { Mempool } from '../../mem/mempool.js';
import { claimPath, connect, unclaimPath } from '../../vhost/in-process.js';
import { vhostLog } from '../../vhost/log.js';
import { NO_NOTIFIER, Req, type Channel } from '../../vhost/protocol.js';
import { sharedHeapFd } from '../../vhost/shared-heap.js';
import { SocketChannel } from '../../vhost/socket-frontend.js';
import { removeSocketFile, removeStaleSocket } from '../../vhost/socket-path.js';
import { PROTOCOL_F_MQ, PROTOCOL_F_REPLY_ACK } from '../../vhost/wire.js';
import { VhostError } from '../../errors.js';
import { NativeError, requireNative } from '../../native/native.js';
import { unixAccept, unixConnect, unixListen } from '../../native/unix.js';
import { READABLE, closeFd, watch } from '../../native/watch.js';
import { VRING_MAX_SIZE, isVringSize } from '../../virtio/vring.js';
import { Feature, NET_HDR_SIZE, SUPPORTED_FEATURES, VRING_AVAIL_F_NO_INTERRUPT, bit, featureNames, has, rxVring, txVring, type Features } from '../../virtio/virtio-net.js';
import { parseMac } from '../../net/ether.js';
import { vdevMac } from '../mac.js';
import { G_BAD_USED, G_KICKS, GPA_BASE, reserveGuestRing, type GuestRingLayout } from './guest-ring.js';
import { IND_MAX, VirtioRxQueue, VirtioTxQueue, type VirtioRxDesc, type VirtioTxDesc } from './virtio-rxtx.js';
import { PackedRxQueue, PackedTxQueue } from './virtio-packed.js';
import { PACKED_EVENT_FLAGS, RING_EVENT_FLAGS_DISABLE, encodeBase } from '../../virtio/packed.js';

type RxQ = VirtioRxQueue | PackedRxQueue;
type TxQ = VirtioTxQueue | PackedTxQueue;

const DEFAULT_QUEUE_SIZE = 256;
/** Features the rings' layout and descriptors depend on: every backend of a port must agree on these. */
const LAYOUT_FEATURES = bit(Feature.NET_F_MRG_RXBUF) | bit(Feature.RING_F_INDIRECT_DESC) | bit(Feature.RING_F_EVENT_IDX) | bit(Feature.F_IN_ORDER) | bit(Feature.F_RING_PACKED);
/** A client frontend retries its connect this often after the backend went away (DPDK's vhost reconnect: 1 s). */
const RECONNECT_MS = 1000;

function macArg(dev: string, text: string): Uint8Array {
  try {
    return parseMac(text);
  } catch (e) {
    throw new ArgError(`${dev}: mac=${text}: ${(e as Error).message}`);
  }
}
const ETHER_OVERHEAD = 18; // Ethernet header and CRC around the MTU

class VirtioUserDriver implements EthDriver {
  private readonly path: string;
  private readonly queues: number;
  private readonly queueSize: number;
  private readonly wanted: Features;
  private readonly mtu: number;
  private readonly txFreeMode: TxFreeMode;
  private readonly mac: Uint8Array;
  private readonly server: boolean;
  /** net_stats=1: per-packet counters, as DPDK's virtio PMD always keeps. */
  private readonly pktStats: PktStats;
  private channel: Channel | null = null;
  /** The backend is another process: the unix socket, not the in-process channel. */
  private overSocket = false;
  private features: Features = 0n;
  private negotiated = false;
  private rxq: RxQ[] = [];
  private txq: TxQ[] = [];
  private started = false;
  /** The rings were filled (once: a restart or reconnect keeps what is posted). */
  private filled = false;
  /** The current backend has the rings. */
  private ringsUp = false;
  private listenFd = -1;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Where each vring stopped (GET_VRING_BASE), to resume there on the next start. */
  private readonly bases = new Map<number, number>();
  /** The kick counter the device may be woken through (one per port: dpkit's backend polls). */
  private readonly kick: number;
  /**
   * Packed rings: the link state word the queues follow (virtio-packed.ts),
   * bumped to odd when a backend goes away (each queue's lcore then returns
   * its mbufs and clears its ring) and to even when a new one has the rings
   * (each sets its ring up afresh), as DPDK resets a packed ring on reconnect.
   */
  private readonly linkState: number;

  constructor(private readonly ctx: DriverContext) {
    const { name, args } = ctx;
    const path = args.get('path');
    if (!path) throw new ArgError(`${name}: path=SOCKET is required (the vhost-user socket of the backend)`);
    this.path = path;
    this.server = boolArg(name, args, 'server');
    this.pktStats = new PktStats(ctx.heap, name, boolArg(name, args, 'net_stats'));
    this.queues = intArg(name, args, 'queues', 1, 1, 128);
    this.queueSize = intArg(name, args, 'queue_size', DEFAULT_QUEUE_SIZE, 1, VRING_MAX_SIZE);
    if (!isVringSize(this.queueSize)) throw new ArgError(`${name}: queue_size=${this.queueSize}: must be a power of two`);
    let wanted = SUPPORTED_FEATURES;
    if (boolArg(name, args, 'packed_vq')) wanted |= bit(Feature.F_RING_PACKED);
    if (args.has('mrg_rxbuf') && !boolArg(name, args, 'mrg_rxbuf')) wanted &= ~bit(Feature.NET_F_MRG_RXBUF);
    if (args.has('indirect') && !boolArg(name, args, 'indirect')) wanted &= ~bit(Feature.RING_F_INDIRECT_DESC);
    if (args.has('event_idx') && !boolArg(name, args, 'event_idx')) wanted &= ~bit(Feature.RING_F_EVENT_IDX);
    if (args.has('in_order') && !boolArg(name, args, 'in_order')) wanted &= ~bit(Feature.F_IN_ORDER);
    this.wanted = wanted;
    this.mtu = intArg(name, args, 'mtu', 1500, 68, 65535 - ETHER_OVERHEAD - NET_HDR_SIZE);
    this.txFreeMode = parseTxFreeMode(name, args.get('tx_free_mode'));
    const mac = args.get('mac');
    this.mac = mac === undefined ? vdevMac(name) : macArg(name, mac);
    this.kick = ctx.heap.reserve(64, 64, 'virtio kick');
    this.linkState = ctx.heap.reserve(64, 64, 'virtio link state');
    claimPath(ctx.heap, path);
  }

  info(): DevInfo {
    const lim = { min: 1, max: VRING_MAX_SIZE, align: 1 };
    return { driverName: 'net_virtio_user', maxRxQueues: this.queues, maxTxQueues: this.queues, rxDescLim: lim, txDescLim: lim, defaultRxDesc: this.queueSize, defaultTxDesc: this.queueSize };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  /** Connects and negotiates features (virtio_user_dev_init): rings are laid out for what was agreed. */
  configure(nbRxq: number, nbTxq: number): void {
    if (nbRxq > this.queues || nbTxq > this.queues) throw new ArgError(`${this.ctx.name}: ${Math.max(nbRxq, nbTxq)} queues asked, the device has queues=${this.queues}`);
    if (this.channel === null && !this.overSocket) {
      const ch = connect(this.ctx.heap, this.path);
      if (ch !== null) {
        this.channel = ch;
        this.negotiate(ch);
      } else this.openSocket();
    }
    this.rxq = [];
    this.txq = [];
  }

  /** The backend is elsewhere: connect (client) or listen (server=1), the heap shared first. */
  private openSocket(): void {
    const name = this.ctx.name;
    requireNative(name);
    sharedHeapFd(this.ctx.heap, name);
    this.overSocket = true;
    if (this.server) {
      // Rings are laid out for what dpkit wants; a backend that offers less is refused when it connects.
      this.features = this.wanted;
      removeStaleSocket(this.path);
      this.listenFd = unixListen(this.path, 'stream');
      watch(this.listenFd, () => this.onAccept(), READABLE);
      return;
    }
    let fd: number;
    try {
      fd = unixConnect(this.path, 'stream');
    } catch (e) {
      if (!(e instanceof NativeError)) throw e;
      this.overSocket = false;
      throw new ArgError(`${name}: path=${this.path}: no vhost-user backend listens there (${e.code}); start the backend first, or use server=1`);
    }
    const ch = this.socketChannel(fd);
    try {
      this.negotiate(ch);
    } catch (e) {
      ch.close();
      this.channel = null;
      this.overSocket = false;
      throw e;
    }
  }

  private socketChannel(fd: number): SocketChannel {
    const ch = new SocketChannel(this.ctx.heap, fd, this.ctx.name, this.path, (why) => this.lost(why));
    this.channel = ch;
    return ch;
  }

  /**
   * Feature negotiation (and, on a reconnect, the check that the new backend
   * offers what the rings were laid out for).
   */
  private negotiate(ch: Channel): void {
    const name = this.ctx.name;
    const offered = ch.request({ req: Req.GET_FEATURES }) as Features;
    if (!has(offered, Feature.F_VERSION_1)) throw new VhostError(name, 'the backend does not offer VIRTIO_F_VERSION_1');
    // The first backend (of a client) decides the layout; later ones (and a server's every one) must offer it.
    const layout = this.negotiated || this.server ? this.features & LAYOUT_FEATURES : offered & this.wanted & LAYOUT_FEATURES;
    const missing = layout & ~offered;
    if (missing !== 0n) throw new VhostError(name, `the backend does not offer ${featureNames(missing)}, which the rings were set up for`);
    this.features = (offered & this.wanted & ~LAYOUT_FEATURES) | layout;
    if (has(this.features, Feature.F_PROTOCOL_FEATURES)) {
      const pf = ch.request({ req: Req.GET_PROTOCOL_FEATURES }) as Features;
      ch.request({ req: Req.SET_PROTOCOL_FEATURES, features: pf & (bit(PROTOCOL_F_MQ) | bit(PROTOCOL_F_REPLY_ACK)) });
      if (this.queues > 1 && has(pf, PROTOCOL_F_MQ)) {
        const n = ch.request({ req: Req.GET_QUEUE_NUM }) as number;
        if (n < this.queues) throw new VhostError(name, `queues=${this.queues}, the backend has ${n} queue pairs`);
      }
    }
    ch.request({ req: Req.SET_OWNER });
    ch.request({ req: Req.SET_FEATURES, features: this.features });
    this.negotiated = true;
  }

  /** server=1: a backend connected. */
  private onAccept(): void {
    for (;;) {
      const fd = unixAccept(this.listenFd);
      if (fd < 0) return;
      if (this.channel !== null) {
        vhostLog(`${this.ctx.name}: vhost-user ${this.path}: a second backend connected while one is attached; refused`);
        closeFd(fd);
        continue;
      }
      this.attach(fd);
    }
  }

  /** A (re)connected backend: negotiate, and hand it the rings when the port runs. A refusal is logged, and the connection dropped. */
  private attach(fd: number): void {
    const ch = this.socketChannel(fd);
    try {
      this.negotiate(ch);
      if (this.started) this.handOver(ch);
      vhostLog(`${this.ctx.name}: vhost-user ${this.path}: backend connected${this.ringsUp ? ', link up' : ''}`);
    } catch (e) {
      if (!(e instanceof VhostError || e instanceof NativeError)) throw e;
      vhostLog(`${e.message}; connection closed`);
      ch.close();
      this.lost('');
    }
  }

  /**
   * The backend went away: link down. Split rings keep what is posted for the
   * next backend; packed rings are emptied, every mbuf back in its pool, by
   * the lcores that poll them (at once here when the port is stopped).
   */
  private lost(why: string): void {
    this.channel = null;
    this.ringsUp = false;
    this.bases.clear();
    if (this.packed && this.filled) {
      const w = this.linkState >>> 2;
      if ((Atomics.load(this.ctx.heap.i32, w) & 1) === 0) Atomics.add(this.ctx.heap.i32, w, 1);
      if (!this.started) for (const q of this.packedQueues()) q.followLink();
    }
    if (why) vhostLog(`${this.ctx.name}: vhost-user ${this.path}: ${why}; link down`);
    if (!this.server && !this.closed) this.timer = setTimeout(() => this.reconnect(), RECONNECT_MS);
  }

  private reconnect(): void {
    this.timer = undefined;
    if (this.closed || this.channel !== null) return;
    let fd: number;
    try {
      fd = unixConnect(this.path, 'stream');
    } catch (e) {
      if (!(e instanceof NativeError)) throw e;
      this.timer = setTimeout(() => this.reconnect(), RECONNECT_MS);
      return;
    }
    this.attach(fd);
  }

  private ring(nbDesc: number, what: string): GuestRingLayout {
    const num = nbDesc || this.queueSize;
    if (!isVringSize(num)) throw new ArgError(`${this.ctx.name}: ${what}: ${num} descriptors: must be a power of two in [1, ${VRING_MAX_SIZE}]`);
    return reserveGuestRing(this.ctx.heap, num, this.packed);
  }

  /** VIRTIO_F_RING_PACKED was agreed: the rings are packed ones. */
  private get packed(): boolean {
    return has(this.features, Feature.F_RING_PACKED);
  }

  rxQueueSetup(q: number, nbDesc: number, pool: Mempool, conf: RxQueueConf, stats: number): RxQueue {
    const heap = this.ctx.heap;
    const ring = this.ring(nbDesc, `rx queue ${q}`);
    const mrg = has(this.features, Feature.NET_F_MRG_RXBUF);
    // Without mergeable buffers every posted chain must hold a whole frame (Linux's "big packets").
    if (pool.avail() === 0) throw new ArgError(`${this.ctx.name}: rx pool ${pool.name} is empty`);
    const bufCap = pool.bufLen - pool.headroom + NET_HDR_SIZE; // a fresh mbuf's room, header included
    const segsPerBuf = mrg ? 1 : Math.ceil((this.mtu + ETHER_OVERHEAD + NET_HDR_SIZE) / bufCap);
    const heads = Math.floor(ring.num / segsPerBuf);
    if (heads === 0) throw new ArgError(`${this.ctx.name}: rx queue ${q}: mtu=${this.mtu} needs chains of ${segsPerBuf} buffers, more than the ring's ${ring.num} descriptors`);
    const rxFreeThresh = conf.rxFreeThresh || Math.min(32, heads);
    if (rxFreeThresh > heads) throw new ArgError(`${this.ctx.name}: rx queue ${q}: rx_free_thresh ${rxFreeThresh} above the ring's ${heads} buffers`);
    const d: VirtioRxDesc = {
      driver: 'virtio_user',
      kind: 'rx',
      ring,
      packed: this.packed,
      port: this.ctx.portId,
      stats,
      eventIdx: has(this.features, Feature.RING_F_EVENT_IDX),
      kick: this.kick,
      linkState: this.linkState,
      pktStats: this.pktStats.block('rx', q),
      pool: pool.offset,
      mrg,
      segsPerBuf,
      rxFreeThresh,
      freeHeads: heap.reserve(2 * heads, 64, 'virtio rx free heads'),
    };
    const rxq = d.packed ? new PackedRxQueue(heap, d) : new VirtioRxQueue(heap, d);
    this.rxq[q] = rxq;
    return rxq;
  }

  txQueueSetup(q: number, nbDesc: number, conf: TxQueueConf, stats: number): TxQueue {
    const heap = this.ctx.heap;
    const ring = this.ring(nbDesc, `tx queue ${q}`);
    const txFreeThresh = conf.txFreeThresh || Math.min(32, ring.num >> 2);
    if (txFreeThresh >= ring.num) throw new ArgError(`${this.ctx.name}: tx queue ${q}: tx_free_thresh ${txFreeThresh} must be below the ring's ${ring.num} descriptors`);
    // Both ring kinds: a split table is of split descriptors, a packed one of packed (16 bytes each, too).
    const indirect = has(this.features, Feature.RING_F_INDIRECT_DESC);
    const d: VirtioTxDesc = {
      driver: 'virtio_user',
      kind: 'tx',
      ring,
      packed: this.packed,
      port: this.ctx.portId,
      stats,
      eventIdx: has(this.features, Feature.RING_F_EVENT_IDX),
      kick: this.kick,
      linkState: this.linkState,
      pktStats: this.pktStats.block('tx', q),
      indirect,
      inOrder: has(this.features, Feature.F_IN_ORDER),
      txFreeThresh,
      txFreeMode: this.txFreeMode,
      nextFree: heap.reserve(2 * ring.num, 64, 'virtio tx free list'),
      ndesc: heap.reserve(2 * ring.num, 64, 'virtio tx chain lengths'),
      hdrArea: heap.reserve(16 * ring.num, 64, 'virtio tx headers'),
      indArea: indirect ? heap.reserve(IND_MAX * 16 * ring.num, 64, 'virtio tx indirect tables') : 0,
    };
    const txq = d.packed ? new PackedTxQueue(heap, d) : new VirtioTxQueue(heap, d);
    this.txq[q] = txq;
    return txq;
  }

  /** Fills the rings (first start) and hands them to the backend when one is connected. */
  start(): void {
    if (this.channel === null && !this.overSocket) throw new ArgError(`${this.ctx.name}: start before configure`);
    this.started = true;
    if (this.channel !== null) this.handOver(this.channel);
    else this.fill();
  }

  private packedQueues(): (PackedRxQueue | PackedTxQueue)[] {
    return [...this.rxq, ...this.txq].filter((q): q is PackedRxQueue | PackedTxQueue => q instanceof PackedRxQueue || q instanceof PackedTxQueue);
  }

  /** Packed rings after a backend went away: every queue's lcore has emptied its ring (or none went away). */
  private settled(): boolean {
    const state = Atomics.load(this.ctx.heap.i32, this.linkState >>> 2);
    return (state & 1) === 0 || this.packedQueues().every((q) => q.linkFollowed() === state);
  }

  /**
   * Hands the rings to backend `ch` once they are settled: an lcore still
   * emptying a packed ring must finish before a new backend may read it
   * (checked again every millisecond). A refusal is logged and the connection dropped.
   */
  private handOver(ch: Channel): void {
    if (this.settled()) {
      this.giveRings(ch);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.channel !== ch || !this.started || this.ringsUp || this.closed) return;
      try {
        this.handOver(ch);
        if (this.ringsUp) vhostLog(`${this.ctx.name}: vhost-user ${this.path}: link up`);
      } catch (e) {
        if (!(e instanceof VhostError || e instanceof NativeError)) throw e;
        vhostLog(`${e.message}; connection closed`);
        ch.close();
        this.lost('');
      }
    }, 1);
  }

  private fill(): void {
    if (this.filled) return;
    this.filled = true;
    this.rxq.forEach((rxq) => rxq.init());
    this.txq.forEach((txq) => txq.init());
  }

  /** The vhost-user ring setup: the memory table, then every ring, rx rings filled once their ring is set up. */
  private giveRings(ch: Channel): void {
    const heap = this.ctx.heap;
    ch.request({ req: Req.SET_MEM_TABLE, regions: [{ gpa: GPA_BASE, size: heap.size, userAddr: GPA_BASE, heapOffset: 0 }] });
    const fresh = !this.filled;
    this.filled = true;
    // Packed rings emptied after a backend went away: they start afresh, set up by their lcores once the state turns even.
    const linkWord = this.linkState >>> 2;
    const reset = (Atomics.load(heap.i32, linkWord) & 1) !== 0;
    const setup = (index: number, q: RxQ | TxQ): void => {
      const ring = q.d.ring;
      ch.request({ req: Req.SET_VRING_NUM, index, num: ring.num });
      // Where the last backend stopped: GET_VRING_BASE's answer, or (it died) what it had used.
      // A fresh (or emptied) packed ring starts at position 0 with wrap counter 1 (bit 15); one that was
      // stopped, where GET_VRING_BASE said (a backend that went away instead emptied it: reset).
      const packedBase = fresh || reset ? encodeBase(0, 1) : (this.bases.get(index) ?? encodeBase(0, 1));
      const base = q.d.packed ? packedBase : (this.bases.get(index) ?? Atomics.load(heap.u16, (ring.used + 2) >>> 1));
      ch.request({ req: Req.SET_VRING_BASE, index, num: base });
      ch.request({ req: Req.SET_VRING_ADDR, index, desc: GPA_BASE + ring.desc, avail: GPA_BASE + ring.avail, used: GPA_BASE + ring.used });
      ch.request({ req: Req.SET_VRING_KICK, index, notifier: this.kick });
      // dpkit's lcores poll: no calls wanted (the flag for devices without EVENT_IDX).
      ch.request({ req: Req.SET_VRING_CALL, index, notifier: NO_NOTIFIER });
      if (q.d.packed) Atomics.store(heap.u16, (ring.avail + PACKED_EVENT_FLAGS) >>> 1, RING_EVENT_FLAGS_DISABLE);
      else Atomics.store(heap.u16, ring.avail >>> 1, VRING_AVAIL_F_NO_INTERRUPT);
      ch.request({ req: Req.SET_VRING_ENABLE, index, enable: true });
    };
    // Rings first, then the buffers: the device is listening when the rx rings fill.
    this.rxq.forEach((rxq, q) => setup(rxVring(q), rxq));
    if (fresh) this.rxq.forEach((rxq) => rxq.init());
    this.txq.forEach((txq, q) => {
      if (fresh) txq.init();
      setup(txVring(q), txq);
    });
    if (reset) Atomics.add(heap.i32, linkWord, 1);
    this.ringsUp = true;
  }

  /** Stops the device's use of every ring (GET_VRING_BASE); posted buffers stay posted for a restart. */
  stop(): void {
    if (!this.started) return;
    this.started = false;
    const ch = this.channel;
    if (ch === null || !this.ringsUp) return;
    this.ringsUp = false;
    try {
      this.rxq.forEach((_, q) => this.bases.set(rxVring(q), ch.request({ req: Req.GET_VRING_BASE, index: rxVring(q) }) as number));
      this.txq.forEach((_, q) => this.bases.set(txVring(q), ch.request({ req: Req.GET_VRING_BASE, index: txVring(q) }) as number));
    } catch (e) {
      // A backend that breaks while stopping is gone (the channel closed itself): the rings stay ours.
      if (!(e instanceof VhostError)) throw e;
      vhostLog(`${e.message}; link down`);
    }
  }

  close(): void {
    this.stop();
    this.closed = true;
    clearTimeout(this.timer);
    for (const q of this.rxq) q?.releaseAll();
    for (const q of this.txq) q?.releaseAll();
    this.channel?.close();
    this.channel = null;
    if (this.listenFd >= 0) {
      closeFd(this.listenFd);
      this.listenFd = -1;
      removeSocketFile(this.path);
    }
    unclaimPath(this.ctx.heap, this.path);
  }

  linkUp(): boolean {
    return this.started && this.ringsUp && this.channel !== null;
  }

  linkSpeed(): number {
    return 10_000;
  }

  xstats(): Record<string, number> {
    const f = this.ctx.heap.f64;
    let kicks = 0;
    let badUsed = 0;
    for (const q of [...this.rxq, ...this.txq]) {
      if (!q) continue;
      kicks += f[q.d.ring.state + G_KICKS]!;
      badUsed += f[q.d.ring.state + G_BAD_USED]!;
    }
    return { virtio_kicks: kicks, virtio_bad_used: badUsed, ...this.pktStats.xstats() };
  }
}

export const virtioUser: DriverSpec = {
  name: 'virtio_user',
  keys: ['path', 'server', 'queues', 'queue_size', 'mrg_rxbuf', 'in_order', 'mac', 'indirect', 'event_idx', 'mtu', 'tx_free_mode', 'packed_vq', 'net_stats'],
  create: (ctx) => new VirtioUserDriver(ctx),
  openRxQueue: (heap: Heap, d: QueueDescriptor) => ((d as VirtioRxDesc).packed ? new PackedRxQueue(heap, d as VirtioRxDesc) : new VirtioRxQueue(heap, d as VirtioRxDesc)),
  openTxQueue: (heap: Heap, d: QueueDescriptor) => ((d as VirtioTxDesc).packed ? new PackedTxQueue(heap, d as VirtioTxDesc) : new VirtioTxQueue(heap, d as VirtioTxDesc)),
};
