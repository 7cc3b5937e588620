/**
 * net_af_packet: a port on a Linux network interface through AF_PACKET
 * sockets (DPDK's rte_eth_af_packet), for machines without a DPDK-bound NIC.
 *
 * Each queue pair is one packet socket bound to the interface with a
 * TPACKET_V2 rx ring and tx ring (PACKET_MMAP), both mapped into a window of
 * the heap, so the ring walk is a wasm kernel (af-packet.as.ts) like any
 * other driver's: rx copies each frame the kernel filled into a fresh mbuf
 * (a chain when it is larger than the data room) and hands the frame back;
 * tx copies each packet into a free frame, marks it for sending, and kicks
 * the socket with one sendto per burst. With qpairs > 1 the sockets form one
 * PACKET_FANOUT group (hash), so the kernel spreads flows over the queues as
 * RSS would, each flow staying on one.
 *
 * TPACKET_V2, as DPDK: V3 hands over whole blocks of variable-length frames,
 * which saves interrupts for a reader that sleeps in poll(); a poll-mode
 * reader gains nothing from it, and V3 has no tx ring of its own design (its
 * tx is V2's), so the two directions would walk two formats.
 *
 * Devargs (DPDK's): iface=NAME (required), qpairs=N (1..16), blocksz=BYTES
 * (page size), framesz=BYTES (2048, or what the interface's MTU needs),
 * framecnt=N (512), qdisc_bypass=0|1.
 *
 * Link: up while the interface is up with carrier. An interface that goes
 * away takes the port down with one line on stderr; the process goes on.
 * Needs the native shim and CAP_NET_RAW; without either, one line says which.
 */
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { mapWindow, pageSize, unmapWindow } from '../../native/memory.js';
import { requireNative } from '../../native/native.js';
import { IFF_RUNNING, IFF_UP, ifaceInfo, packetKicker, packetOpen, socketError, type IfaceInfo } from '../../native/packet.js';
import { HANGUP, closeFd, watch } from '../../native/watch.js';
import {
  AF_PACKET_QUEUE_SIZE,
  AFP_TX_DATA,
  AFPQ_MAX_SEGS,
  AFPQ_W_COUNT,
  AFPQ_W_FD,
  AFPQ_W_FRAMES,
  AFPQ_W_FRAME_CAP,
  AFPQ_W_FREED,
  AFPQ_W_FULL,
  AFPQ_W_POOL,
  AFPQ_W_PORT,
  AFPQ_W_SENT,
  AFPQ_W_STATS,
  TPACKET2_HDRLEN,
} from './af-packet-layout.js';
import { afPacketOps, type AfPacketOps } from './af-packet.twin.js';

/** RTE_PMD_AF_PACKET_MAX_RINGS. */
const MAX_QPAIRS = 16;
const DEFAULT_FRAME_SIZE = 2048;
const DEFAULT_FRAME_COUNT = 512;
/** Ethernet header and one VLAN tag: what a frame holds beyond the MTU. */
const L2_OVERHEAD = 18;
/** TPACKET_ALIGNMENT: frame sizes and the rx data offset are multiples of it. */
const TPACKET_ALIGN = 16;
/**
 * Where the kernel puts a received frame's Ethernet header: tp_mac =
 * TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - 14 (net/packet/af_packet.c), so the
 * network header lands aligned.
 */
export const RX_MAC_OFFSET = Math.ceil((TPACKET2_HDRLEN + 16) / TPACKET_ALIGN) * TPACKET_ALIGN - 14;

/** How a port's rings are cut, from its devargs and the interface's MTU. */
export interface RingGeometry {
  readonly blockSize: number;
  readonly blockCount: number;
  readonly frameSize: number;
  readonly frameCount: number;
  /** Bytes one socket maps: its rx ring and its tx ring. */
  readonly mapLength: number;
}

/**
 * The rings' geometry for devargs `args` on an interface with `mtu` (DPDK's
 * defaults, the frame grown to the MTU when framesz is not given).
 * @throws ArgError naming the devarg: a frame that cannot hold the MTU, a
 * block that is not a multiple of the page size or holds no whole frame.
 */
export function ringGeometry(dev: string, args: Map<string, string>, mtu: number, page: number): RingGeometry {
  const need = Math.ceil((RX_MAC_OFFSET + mtu + L2_OVERHEAD) / TPACKET_ALIGN) * TPACKET_ALIGN;
  const fitted = Math.max(DEFAULT_FRAME_SIZE, need);
  const frameSize = intArg(dev, args, 'framesz', fitted, TPACKET2_HDRLEN + TPACKET_ALIGN, 1 << 30);
  if (frameSize % TPACKET_ALIGN !== 0) throw new ArgError(`${dev}: framesz=${frameSize}: must be a multiple of ${TPACKET_ALIGN}`);
  if (frameSize < need) {
    throw new ArgError(`${dev}: framesz=${frameSize} holds frames up to ${frameSize - RX_MAC_OFFSET} bytes, the interface's MTU ${mtu} needs framesz=${need} or more`);
  }
  const blockSize = intArg(dev, args, 'blocksz', Math.ceil(frameSize / page) * page, page, 1 << 30);
  if (blockSize % page !== 0) throw new ArgError(`${dev}: blocksz=${blockSize}: must be a multiple of the page size ${page}`);
  if (blockSize < frameSize) throw new ArgError(`${dev}: blocksz=${blockSize} is smaller than framesz=${frameSize}`);
  const perBlock = Math.floor(blockSize / frameSize);
  const wanted = intArg(dev, args, 'framecnt', DEFAULT_FRAME_COUNT, 1, 1 << 20);
  const blockCount = Math.ceil(wanted / perBlock);
  return { blockSize, blockCount, frameSize, frameCount: blockCount * perBlock, mapLength: 2 * blockSize * blockCount };
}

/** A queue reopens in a worker from its block alone. */
interface AfPacketQueueDesc extends QueueDescriptor {
  driver: 'net_af_packet';
  /** Heap offset of the queue's block (af-packet.record.ts). */
  q: number;
}

class AfPacketRxQueue implements RxQueue {
  private readonly lc: number;
  private readonly ops: AfPacketOps;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    const mp = Mempool.attach(heap, { offset: heap.u32[(q >>> 2) + AFPQ_W_POOL]! });
    this.ops = afPacketOps(heap, new Mbufs(heap), mp);
  }

  rxBurst(burst: Burst, n: number): number {
    return this.ops.rx(this.q, this.lc, burst.byteOffset, n);
  }

  descriptor(): AfPacketQueueDesc {
    return { driver: 'net_af_packet', q: this.q };
  }
}

class AfPacketTxQueue implements TxQueue {
  private readonly lc: number;
  private readonly mb: Mbufs;
  private readonly ops: AfPacketOps;
  private readonly u32: Uint32Array;
  private readonly w: number;
  private readonly fd: number;
  private readonly kick: (fd: number) => number;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    this.mb = new Mbufs(heap);
    this.ops = afPacketOps(heap, this.mb, null);
    this.u32 = heap.u32;
    this.w = q >>> 2;
    this.fd = heap.u32[this.w + AFPQ_W_FD]!;
    this.kick = packetKicker('net_af_packet tx');
  }

  txBurst(burst: Burst, n: number): number {
    const taken = this.ops.tx(this.q, this.lc, burst.byteOffset, n);
    const u32 = this.u32;
    // A full ring is kicked too: a kick that found no room (ENOBUFS) must be retried by someone.
    if (u32[this.w + AFPQ_W_SENT] !== 0 || u32[this.w + AFPQ_W_FULL] !== 0) this.kick(this.fd);
    this.mb.freeBulkRest(burst, taken, 0, u32[this.w + AFPQ_W_FREED]!);
    return taken;
  }

  descriptor(): AfPacketQueueDesc {
    return { driver: 'net_af_packet', q: this.q };
  }
}

/** One queue pair: its socket, the heap window its rings are mapped at, and its two queue blocks. */
interface QueuePair {
  fd: number;
  window: number;
  /** 0 until the rings are mapped. */
  rxBlock: number;
  txBlock: number;
}

class AfPacketDriver implements EthDriver {
  private readonly iface: string;
  private readonly ifindex: number;
  private readonly mac: Uint8Array;
  private readonly geometry: RingGeometry;
  private readonly pairs: QueuePair[] = [];
  private gone = false;
  private watching = false;

  constructor(private readonly ctx: DriverContext) {
    const dev = ctx.name;
    requireNative(dev);
    const iface = ctx.args.get('iface');
    if (!iface) throw new ArgError(`${dev}: iface=NAME is required (the interface to attach to)`);
    const qpairs = intArg(dev, ctx.args, 'qpairs', 1, 1, MAX_QPAIRS);
    const qdiscBypass = boolArg(dev, ctx.args, 'qdisc_bypass');
    const info = ifaceInfo(iface, dev);
    if (!info) throw new ArgError(`${dev}: iface=${iface}: no such interface`);
    this.iface = iface;
    this.ifindex = info.ifindex;
    this.mac = info.mac;
    const page = pageSize();
    const g = (this.geometry = ringGeometry(dev, ctx.args, info.mtu, page));
    const heap = ctx.heap;
    if (!heap.memory) throw new ArgError(`${dev}: the heap is not a WebAssembly.Memory, so no ring can be mapped into it`);
    const fanoutGroup = qpairs > 1 ? ((process.pid ^ info.ifindex) & 0xffff) || 1 : 0;
    try {
      for (let p = 0; p < qpairs; p++) {
        const s = packetOpen(dev, iface, { ...g, qdiscBypass, fanoutGroup });
        const pair: QueuePair = { fd: s.fd, window: 0, rxBlock: 0, txBlock: 0 };
        this.pairs.push(pair);
        const window = (pair.window = heap.reserve(g.mapLength, page, `${dev} rings of queue pair ${p}`));
        mapWindow(heap.memory, { offset: window, length: g.mapLength, fd: s.fd });
        pair.rxBlock = this.ringBlock(window, s.fd, 0);
        pair.txBlock = this.ringBlock(window + g.mapLength / 2, s.fd, AFP_TX_DATA);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /**
   * A queue block over the ring at heap offset `ring` (af-packet.record.ts)
   * and its frame table, made once per ring so the walk's position survives
   * a queue's setup again.
   */
  private ringBlock(ring: number, fd: number, dataOff: number): number {
    const heap = this.ctx.heap;
    const g = this.geometry;
    const q = heap.reserve(AF_PACKET_QUEUE_SIZE, 64, `${this.ctx.name} queue`);
    const table = heap.reserve(g.frameCount * 4, 64, `${this.ctx.name} frame table`);
    const perBlock = Math.floor(g.blockSize / g.frameSize);
    for (let i = 0; i < g.frameCount; i++) {
      heap.u32[(table >>> 2) + i] = ring + Math.floor(i / perBlock) * g.blockSize + (i % perBlock) * g.frameSize;
    }
    const w = q >>> 2;
    heap.u32[w + AFPQ_W_FRAMES] = table;
    heap.u32[w + AFPQ_W_COUNT] = g.frameCount;
    heap.u32[w + AFPQ_W_FD] = fd;
    heap.u32[w + AFPQ_W_FRAME_CAP] = g.frameSize - dataOff;
    heap.u32[w + AFPQ_W_PORT] = this.ctx.portId;
    return q;
  }

  info(): DevInfo {
    const lim = { min: 0, max: this.geometry.frameCount, align: 1 };
    const n = this.pairs.length;
    return { driverName: 'net_af_packet', maxRxQueues: n, maxTxQueues: n, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    if (nbRxq > this.pairs.length || nbTxq > this.pairs.length) {
      throw new ArgError(`${this.ctx.name}: ${nbRxq} rx and ${nbTxq} tx queues asked, qpairs=${this.pairs.length}`);
    }
  }

  rxQueueSetup(q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    const room = pool.bufLen - pool.headroom;
    const largest = this.geometry.frameSize - RX_MAC_OFFSET;
    if (Math.ceil(largest / room) > AFPQ_MAX_SEGS) {
      throw new ArgError(`${this.ctx.name}: framesz=${this.geometry.frameSize} needs up to ${Math.ceil(largest / room)} mbufs of the pool's ${room}-byte data room; at most ${AFPQ_MAX_SEGS}`);
    }
    const block = this.pairs[q]!.rxBlock;
    const heap = this.ctx.heap;
    heap.u32[(block >>> 2) + AFPQ_W_POOL] = pool.offset;
    heap.u32[(block >>> 2) + AFPQ_W_STATS] = stats * 8;
    return new AfPacketRxQueue(heap, block);
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const block = this.pairs[q]!.txBlock;
    this.ctx.heap.u32[(block >>> 2) + AFPQ_W_STATS] = stats * 8;
    return new AfPacketTxQueue(this.ctx.heap, block);
  }

  /** Watches the first socket for the error the kernel reports when the interface goes down or away. */
  start(): void {
    if (this.watching || this.gone || this.pairs.length === 0) return;
    this.watching = true;
    const fd = this.pairs[0]!.fd;
    watch(fd, () => this.onSocketError(fd), HANGUP);
  }

  stop(): void {
    if (!this.watching) return;
    this.watching = false;
    requireNative(this.ctx.name).unwatch(this.pairs[0]!.fd);
  }

  private onSocketError(fd: number): void {
    socketError(fd); // clears it (ENETDOWN): the watch would fire again
    this.watching = false;
    if (this.link() !== null) this.start(); // down but still there: watch for the next change
  }

  /** The interface now, or null once it has gone (logged once: the port is down for good). */
  private link(): IfaceInfo | null {
    if (this.gone) return null;
    const info = ifaceInfo(this.ifindex, this.ctx.name);
    if (info) return info;
    this.gone = true;
    process.stderr.write(`${this.ctx.name}: iface=${this.iface} has gone; port ${this.ctx.portId} is down\n`);
    return null;
  }

  close(): void {
    const heap = this.ctx.heap;
    this.stop();
    for (const p of this.pairs) {
      if (p.rxBlock !== 0 && heap.memory) unmapWindow(heap.memory, { offset: p.window, length: this.geometry.mapLength });
      closeFd(p.fd);
      p.fd = -1;
    }
    this.pairs.length = 0;
  }

  linkUp(): boolean {
    const info = this.link();
    return info !== null && (info.flags & (IFF_UP | IFF_RUNNING)) === (IFF_UP | IFF_RUNNING);
  }

  linkSpeed(): number {
    return 10_000; // DPDK's af_packet reports 10G whatever the interface
  }
}

/** Heap bytes the rings of these devargs map (the interface's MTU read when it can be). */
function memoryNeeded(all: readonly [string, string][]): number {
  const args = new Map(all);
  let mtu = 1500;
  let page = 4096;
  try {
    page = pageSize();
    mtu = ifaceInfo(args.get('iface') ?? '', 'net_af_packet')?.mtu ?? mtu;
  } catch {
    // No shim: creating the port will say so.
  }
  try {
    const g = ringGeometry('net_af_packet', args, mtu, page);
    return Number(args.get('qpairs') ?? 1) * (g.mapLength + page + 2 * (64 + g.frameCount * 4 + 64));
  } catch {
    return 0; // bad devargs: creating the port will say which
  }
}

export const netAfPacket: DriverSpec = {
  name: 'net_af_packet',
  keys: ['iface', 'qpairs', 'blocksz', 'framesz', 'framecnt', 'qdisc_bypass'],
  create: (ctx) => new AfPacketDriver(ctx),
  memoryNeeded,
  openRxQueue: (heap, d) => new AfPacketRxQueue(heap, (d as AfPacketQueueDesc).q),
  openTxQueue: (heap, d) => new AfPacketTxQueue(heap, (d as AfPacketQueueDesc).q),
};
