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
 * framecnt=N (512), qdisc_bypass=0|1, fanout_mode=hash|lb|cpu|rollover|rnd|qm (hash;
 * with qpairs > 1, DEFRAG and ROLLOVER always, as DPDK 25.11).
 *
 * Link: up while the interface is up with carrier. An interface that goes
 * away takes the port down with one line on stderr; the process goes on.
 * Needs the native shim and CAP_NET_RAW; without either, one line says which.
 */
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { Mempool } from '../../mem/mempool.js';
import { pageSize } from '../../native/memory.js';
import { requireNative } from '../../native/native.js';
import { ifaceInfo } from '../../native/packet.js';
import { IfaceLink, setIfaceMtu } from '../iface-link.js';
import { ETHER_HDR_LEN } from '../../net/ether.js';
import { TPACKET2_HDRLEN } from './af-packet-layout.js';
import { AfPacketRxQueue, AfPacketTxQueue, PacketQueuePair, pairMemory, RX_MAC_OFFSET, TPACKET_ALIGN, type AfPacketQueueDesc, type RingGeometry } from './queue-pair.js';

export { RX_MAC_OFFSET, type RingGeometry };

/** RTE_PMD_AF_PACKET_MAX_RINGS. */
const MAX_QPAIRS = 16;
const DEFAULT_FRAME_SIZE = 2048;
const DEFAULT_FRAME_COUNT = 512;
/** Ethernet header and one VLAN tag: what a frame holds beyond the MTU. */
const L2_OVERHEAD = 18;
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

/** PACKET_FANOUT's modes (linux/if_packet.h), by DPDK 25.11's fanout_mode names. */
const FANOUT_MODES: ReadonlyMap<string, number> = new Map([
  ['hash', 0],
  ['lb', 1],
  ['cpu', 2],
  ['rollover', 3],
  ['rnd', 4],
  ['qm', 5],
]);
const PACKET_FANOUT_FLAG_ROLLOVER = 0x1000;
const PACKET_FANOUT_FLAG_DEFRAG = 0x8000;

/** fanout_mode=NAME (default hash), as DPDK 25.11's net_af_packet takes it. @throws ArgError naming the value and the choices. */
export function fanoutMode(dev: string, value: string | undefined): number {
  const mode = FANOUT_MODES.get(value ?? 'hash');
  if (mode === undefined) throw new ArgError(`${dev}: fanout_mode=${value}: expected ${[...FANOUT_MODES.keys()].join(', ')}`);
  return mode;
}

/**
 * PACKET_FANOUT's argument for group `group` in `mode`, with DPDK's flags:
 * DEFRAG (a flow's fragments to one socket) and ROLLOVER (a packet whose
 * socket's ring is full goes to the next socket instead of being dropped:
 * an lcore that falls behind, as one sharing its CPU does, sheds load to
 * the others).
 */
export function fanoutArg(group: number, mode: number): number {
  return (group | ((mode | PACKET_FANOUT_FLAG_DEFRAG | PACKET_FANOUT_FLAG_ROLLOVER) << 16)) >>> 0;
}

class AfPacketDriver implements EthDriver {
  private readonly mac: Uint8Array;
  private readonly geometry: RingGeometry;
  private readonly pairs: PacketQueuePair[] = [];
  private readonly link: IfaceLink;

  constructor(private readonly ctx: DriverContext) {
    const dev = ctx.name;
    requireNative(dev);
    const iface = ctx.args.get('iface');
    if (!iface) throw new ArgError(`${dev}: iface=NAME is required (the interface to attach to)`);
    const qpairs = intArg(dev, ctx.args, 'qpairs', 1, 1, MAX_QPAIRS);
    const qdiscBypass = boolArg(dev, ctx.args, 'qdisc_bypass');
    const mode = fanoutMode(dev, ctx.args.get('fanout_mode'));
    const info = ifaceInfo(iface, dev);
    if (!info) throw new ArgError(`${dev}: iface=${iface}: no such interface`);
    this.link = new IfaceLink(ctx.name, ctx.portId, iface, info.ifindex);
    this.mac = info.mac;
    const page = pageSize();
    const g = (this.geometry = ringGeometry(dev, ctx.args, info.mtu, page));
    const fanout = qpairs > 1 ? fanoutArg(((process.pid ^ info.ifindex) & 0xffff) || 1, mode) : 0;
    try {
      for (let p = 0; p < qpairs; p++) this.pairs.push(PacketQueuePair.open(ctx.heap, dev, ctx.portId, iface, g, { qdiscBypass, fanout }));
    } catch (e) {
      this.close();
      throw e;
    }
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
    return this.pairs[q]!.rxQueue(pool, stats);
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    return this.pairs[q]!.txQueue(stats);
  }

  /** Watches the first socket for the error the kernel reports when the interface goes down or away. */
  start(): void {
    if (this.pairs.length !== 0) this.link.start(this.pairs[0]!.fd);
  }

  stop(): void {
    this.link.stop();
  }

  close(): void {
    this.stop();
    for (const p of this.pairs) p.close();
    this.pairs.length = 0;
  }

  linkUp(): boolean {
    return this.link.up();
  }

  linkSpeed(): number {
    return 10_000; // DPDK's af_packet reports 10G whatever the interface
  }

  /** As DPDK's eth_dev_mtu_set: refused when a frame of that MTU does not fit a ring frame, else the interface's MTU is set. */
  mtuSet(mtu: number): void {
    const room = this.geometry.frameSize - RX_MAC_OFFSET - ETHER_HDR_LEN;
    if (mtu > room) throw new ArgError(`${this.ctx.name}: MTU ${mtu}: a frame must fit framesz=${this.geometry.frameSize} (MTU at most ${room})`);
    setIfaceMtu(this.ctx.name, this.link.name, mtu);
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
    return Number(args.get('qpairs') ?? 1) * pairMemory(g, page);
  } catch {
    return 0; // bad devargs: creating the port will say which
  }
}

export const netAfPacket: DriverSpec = {
  name: 'net_af_packet',
  keys: ['iface', 'qpairs', 'blocksz', 'framesz', 'framecnt', 'qdisc_bypass', 'fanout_mode'],
  create: (ctx) => new AfPacketDriver(ctx),
  memoryNeeded,
  openRxQueue: (heap, d) => new AfPacketRxQueue(heap, (d as AfPacketQueueDesc).q),
  openTxQueue: (heap, d) => new AfPacketTxQueue(heap, (d as AfPacketQueueDesc).q),
};
