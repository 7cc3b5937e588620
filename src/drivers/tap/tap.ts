/**
 * net_tap: a port on a TAP device (DPDK's rte_eth_tap). dpkit creates the
 * interface on /dev/net/tun when the port is probed, as DPDK does; what the
 * host sends out of it, dpkit receives, and what dpkit sends, the host
 * receives on it. The kernel removes the interface when the port closes its
 * fds (the tap is not persistent).
 *
 * One fd per queue pair (IFF_MULTI_QUEUE, as DPDK): the first is opened at
 * probe and creates the interface, the others at configure. The kernel
 * spreads the host's flows over the queues by flow hash, each flow on one.
 *
 * The data path: a tap gives one frame per read() and takes one per write(),
 * so each queue has a ring of frames in the heap, laid out as net_af_packet's
 * TPACKET_V2 rings, and the shim (native/src/tap.cc) plays the kernel's part
 * on it, one call per burst: rx reads up to a burst of frames into free
 * frames, then net_af_packet's rx kernel copies them into mbufs (chains above
 * the data room) and hands the frames back; tx is net_af_packet's tx kernel
 * filling frames, then one shim call writing them. So no mbuf work is written
 * twice, and JavaScript makes no call per packet.
 *
 * Devargs (DPDK's): iface=NAME (default dtap%d: dtap0, dtap1, … the first
 * free), mac=fixed|xx:xx:xx:xx:xx:xx (fixed: 00:64:74:61:70:3N, N counting
 * fixed ports, as DPDK; default a stable address from the device name).
 * remote=IFACE: what IFACE receives goes to the port and what the port
 * sends goes out of IFACE, by TC rules (remote.ts), and the port takes
 * IFACE's MAC unless mac= is given, as DPDK's.
 *
 * Link: up while the interface is up with carrier; once it has been moved to
 * another network namespace dpkit cannot read its flags and reports up while
 * the fd is attached. Deleted, it takes the port down with one line on
 * stderr; the process goes on. Needs the native shim, /dev/net/tun and
 * CAP_NET_ADMIN; without one, one line says which.
 */
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { requireNative } from '../../native/native.js';
import { IFF_RUNNING, IFF_UP, ifaceInfo } from '../../native/packet.js';
import { ifaceSetUp, tapName, tapOpen, tapReader, tapWriter, type TapBurstFn } from '../../native/tap.js';
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
  AFPQ_W_PEER,
  AFPQ_W_POOL,
  AFPQ_W_PORT,
  AFPQ_W_SENT,
  AFPQ_W_STATS,
} from '../af_packet/af-packet-layout.js';
import { afPacketOps, type AfPacketOps } from '../af_packet/af-packet.twin.js';
import { vdevMac } from '../mac.js';
import { setIfaceMtu } from '../iface-link.js';
import { TapRemote } from './remote.js';
import { ETHER_HDR_LEN } from '../../net/ether.js';

/** Interface names have at most IFNAMSIZ - 1 bytes. */
const IFNAMSIZ = 16;
/** RTE_PMD_TAP_MAX_QUEUES. */
const MAX_QUEUES = 16;
/** RTE_ETHER_MAX_JUMBO_FRAME_LEN, DPDK's tap max_rx_pktlen: the largest frame a ring frame holds. */
export const TAP_MAX_FRAME = 0x3f00;
/** Bytes per ring frame: net_af_packet's header room, then the packet. */
const FRAME_SIZE = AFP_TX_DATA + TAP_MAX_FRAME;
/** Frames per ring: a shim call moves at most this many, so it bounds a burst, not the rate. */
const FRAMES = 64;
/** The heap one queue pair takes: two rings, their tables, their blocks. */
const PAIR_BYTES = 2 * (FRAMES * FRAME_SIZE + FRAMES * 4 + AF_PACKET_QUEUE_SIZE + 3 * 64);

/** Fixed MACs handed out so far (DPDK counts them per process too). */
let fixedMacs = 0;

/** The port's MAC from `mac=` (DPDK's fixed|xx:xx:xx:xx:xx:xx). @throws ArgError naming a malformed one. */
export function tapMac(dev: string, value: string | undefined): Uint8Array {
  if (value === undefined) return vdevMac(dev);
  if (value.toLowerCase() === 'fixed') return Uint8Array.of(0x00, 0x64, 0x74, 0x61, 0x70, (0x30 + fixedMacs++) & 0xff);
  if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(value)) throw new ArgError(`${dev}: mac=${value}: expected fixed or xx:xx:xx:xx:xx:xx`);
  return Uint8Array.from(value.split(':').map((x) => parseInt(x, 16)));
}

interface TapQueueDesc extends QueueDescriptor {
  driver: 'net_tap';
  /** Heap offset of the queue's block (af-packet.record.ts). */
  q: number;
}

/** What both directions keep: the block, the ring's numbers, the shim's loop. */
abstract class TapQueue {
  protected readonly lc: number;
  protected readonly u32: Uint32Array;
  protected readonly u8: Uint8Array;
  protected readonly w: number;
  protected readonly fd: number;
  protected readonly table: number;
  protected readonly count: number;

  constructor(
    heap: Heap,
    protected readonly q: number,
  ) {
    this.lc = heap.lcore;
    this.u32 = heap.u32;
    // A view over the heap as it is now: the rings were reserved before any queue opens.
    this.u8 = heap.memory ? new Uint8Array(heap.memory.buffer) : heap.u8;
    this.w = q >>> 2;
    this.fd = this.u32[this.w + AFPQ_W_FD]!;
    this.table = this.u32[this.w + AFPQ_W_FRAMES]!;
    this.count = this.u32[this.w + AFPQ_W_COUNT]!;
  }

  /** Runs the shim's loop from the block's peer position and moves it past what was done. */
  protected shim(fn: TapBurstFn, max: number): number {
    const u32 = this.u32;
    const at = u32[this.w + AFPQ_W_PEER]!;
    const done = fn(this.fd, this.u8, this.table, this.count, at, max, FRAME_SIZE);
    if (done > 0) u32[this.w + AFPQ_W_PEER] = (at + done) % this.count;
    return done;
  }

  descriptor(): TapQueueDesc {
    return { driver: 'net_tap', q: this.q };
  }
}

class TapRxQueue extends TapQueue implements RxQueue {
  private readonly ops: AfPacketOps;
  private readonly read: TapBurstFn;

  constructor(heap: Heap, q: number) {
    super(heap, q);
    const mp = Mempool.attach(heap, { offset: this.u32[this.w + AFPQ_W_POOL]! });
    this.ops = afPacketOps(heap, new Mbufs(heap), mp);
    this.read = tapReader('net_tap rx');
  }

  rxBurst(burst: Burst, n: number): number {
    this.shim(this.read, n); // an error (the interface gone) reads as nothing: the control plane reports it
    return this.ops.rx(this.q, this.lc, burst.byteOffset, n);
  }
}

class TapTxQueue extends TapQueue implements TxQueue {
  private readonly mb: Mbufs;
  private readonly ops: AfPacketOps;
  private readonly write: TapBurstFn;

  constructor(heap: Heap, q: number) {
    super(heap, q);
    this.mb = new Mbufs(heap);
    this.ops = afPacketOps(heap, this.mb, null);
    this.write = tapWriter('net_tap tx');
  }

  txBurst(burst: Burst, n: number): number {
    const taken = this.ops.tx(this.q, this.lc, burst.byteOffset, n);
    const u32 = this.u32;
    // A full ring is written too: frames a refused write left must go out with someone's burst.
    if (u32[this.w + AFPQ_W_SENT] !== 0 || u32[this.w + AFPQ_W_FULL] !== 0) this.shim(this.write, this.count);
    this.mb.freeBulkRest(burst, taken, 0, u32[this.w + AFPQ_W_FREED]!);
    return taken;
  }
}

/** One queue pair: its fd on the tap and its two rings' blocks. */
interface QueuePair {
  fd: number;
  rxBlock: number;
  txBlock: number;
}

class TapDriver implements EthDriver {
  private readonly name: string;
  private readonly ifindex: number;
  private readonly mac: Uint8Array;
  private readonly pairs: QueuePair[] = [];
  private gone = false;
  private watching = false;
  /** The TC redirection of remote=, removed at close. */
  private remote: TapRemote | undefined;

  constructor(private readonly ctx: DriverContext) {
    const dev = ctx.name;
    requireNative(dev);
    const remote = ctx.args.get('remote');
    let remoteInfo;
    if (remote !== undefined) {
      remoteInfo = ifaceInfo(remote, dev);
      if (!remoteInfo) throw new ArgError(`${dev}: remote=${remote}: no such interface in this network namespace`);
    }
    this.mac = remoteInfo && !ctx.args.has('mac') ? Uint8Array.from(remoteInfo.mac) : tapMac(dev, ctx.args.get('mac'));
    if (!ctx.heap.memory) throw new ArgError(`${dev}: the heap is not a WebAssembly.Memory, so the shim cannot reach the rings`);
    const iface = ctx.args.get('iface') ?? 'dtap%d';
    if (iface.length === 0 || Buffer.byteLength(iface) > IFNAMSIZ - 1) throw new ArgError(`${dev}: iface=${iface}: an interface name has 1 to ${IFNAMSIZ - 1} bytes`);
    const first = tapOpen(dev, iface);
    this.name = first.name;
    try {
      this.pairs.push(this.pair(first.fd));
      const info = ifaceInfo(this.name, dev);
      if (!info) throw new ArgError(`${dev}: iface=${this.name} vanished as it was made`);
      this.ifindex = info.ifindex;
      if (remote !== undefined) {
        // The tap must be up for the kernel to take the remote's frames into it.
        ifaceSetUp(this.name, true, dev);
        this.remote = new TapRemote(dev, remote, this.name);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** A queue pair on `fd`: its rings and blocks in the heap. */
  private pair(fd: number): QueuePair {
    return { fd, rxBlock: this.ring(fd), txBlock: this.ring(fd) };
  }

  /** A queue block over a fresh ring of FRAMES frames (af-packet.record.ts), every frame free. */
  private ring(fd: number): number {
    const heap = this.ctx.heap;
    const label = `${this.ctx.name} ring`;
    const q = heap.reserve(AF_PACKET_QUEUE_SIZE, 64, label);
    const table = heap.reserve(FRAMES * 4, 64, label);
    const frames = heap.reserve(FRAMES * FRAME_SIZE, 64, label);
    const w = q >>> 2;
    for (let i = 0; i < FRAMES; i++) heap.u32[(table >>> 2) + i] = frames + i * FRAME_SIZE;
    heap.u32[w + AFPQ_W_FRAMES] = table;
    heap.u32[w + AFPQ_W_COUNT] = FRAMES;
    heap.u32[w + AFPQ_W_FD] = fd;
    heap.u32[w + AFPQ_W_FRAME_CAP] = TAP_MAX_FRAME;
    heap.u32[w + AFPQ_W_PORT] = this.ctx.portId;
    return q;
  }

  info(): DevInfo {
    const lim = { min: 0, max: FRAMES, align: 1 };
    return { driverName: 'net_tap', maxRxQueues: MAX_QUEUES, maxTxQueues: MAX_QUEUES, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  /** Opens the queue pairs asked beyond those open; the tap must still be in this namespace to take them. */
  configure(nbRxq: number, nbTxq: number): void {
    const want = Math.max(nbRxq, nbTxq);
    if (want > MAX_QUEUES) throw new ArgError(`${this.ctx.name}: ${want} queues asked, at most ${MAX_QUEUES}`);
    if (want <= this.pairs.length) return;
    if (ifaceInfo(this.name, this.ctx.name)?.ifindex !== this.ifindex) {
      throw new ArgError(`${this.ctx.name}: iface=${this.name} is no longer in this network namespace; queues can only be added while it is`);
    }
    while (this.pairs.length < want) this.pairs.push(this.pair(tapOpen(this.ctx.name, this.name).fd));
  }

  rxQueueSetup(q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    const room = pool.bufLen - pool.headroom;
    if (Math.ceil(TAP_MAX_FRAME / room) > AFPQ_MAX_SEGS) {
      throw new ArgError(`${this.ctx.name}: frames up to ${TAP_MAX_FRAME} bytes need ${Math.ceil(TAP_MAX_FRAME / room)} mbufs of the pool's ${room}-byte data room; at most ${AFPQ_MAX_SEGS}`);
    }
    const block = this.pairs[q]!.rxBlock;
    const u32 = this.ctx.heap.u32;
    u32[(block >>> 2) + AFPQ_W_POOL] = pool.offset;
    u32[(block >>> 2) + AFPQ_W_STATS] = stats * 8;
    return new TapRxQueue(this.ctx.heap, block);
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const block = this.pairs[q]!.txBlock;
    this.ctx.heap.u32[(block >>> 2) + AFPQ_W_STATS] = stats * 8;
    return new TapTxQueue(this.ctx.heap, block);
  }

  /** Brings the interface up (when it is in this namespace, as DPDK's dev_start) and watches for its deletion. */
  start(): void {
    if (this.gone || this.pairs.length === 0) return;
    if (this.here()) ifaceSetUp(this.name, true, this.ctx.name);
    if (this.watching) return;
    this.watching = true;
    const fd = this.pairs[0]!.fd;
    // A tap whose interface is deleted polls as an error (EPOLLERR), which ends the watch.
    watch(fd, () => {
      this.watching = false;
      if (this.link() !== null) this.start();
    }, HANGUP);
  }

  /** Takes the interface down (as DPDK's dev_stop) and stops watching. */
  stop(): void {
    if (!this.gone && this.pairs.length > 0 && this.here()) ifaceSetUp(this.name, false, this.ctx.name);
    if (!this.watching) return;
    this.watching = false;
    requireNative(this.ctx.name).unwatch(this.pairs[0]!.fd);
  }

  /** Whether the tap is still in this process's network namespace under its name. */
  private here(): boolean {
    return ifaceInfo(this.name, this.ctx.name)?.ifindex === this.ifindex;
  }

  /** The tap's name now, or null once it has gone (logged once: the port is down for good). */
  private link(): string | null {
    if (this.gone || this.pairs.length === 0) return null;
    const name = tapName(this.pairs[0]!.fd, this.ctx.name);
    if (name !== null) return name;
    this.gone = true;
    process.stderr.write(`${this.ctx.name}: iface=${this.name} has gone; port ${this.ctx.portId} is down\n`);
    return null;
  }

  close(): void {
    this.remote?.remove();
    if (this.watching) this.stop();
    for (const p of this.pairs) {
      closeFd(p.fd);
      p.fd = -1;
    }
    this.pairs.length = 0;
  }

  linkUp(): boolean {
    const name = this.link();
    if (name === null) return false;
    const info = ifaceInfo(name, this.ctx.name);
    // Moved to another namespace: its flags are out of sight, and its carrier is our fd.
    if (!info || info.ifindex !== this.ifindex) return true;
    return (info.flags & (IFF_UP | IFF_RUNNING)) === (IFF_UP | IFF_RUNNING);
  }

  linkSpeed(): number {
    return 10_000; // DPDK's tap reports 10G
  }

  /** As DPDK's tap_mtu_set: the tap's MTU (SIOCSIFMTU), while it is in this namespace to be reached by name. */
  mtuSet(mtu: number): void {
    if (mtu > TAP_MAX_FRAME - ETHER_HDR_LEN) throw new ArgError(`${this.ctx.name}: MTU ${mtu}: frames are at most ${TAP_MAX_FRAME} bytes (MTU at most ${TAP_MAX_FRAME - ETHER_HDR_LEN})`);
    if (this.gone || !this.here()) throw new ArgError(`${this.ctx.name}: iface=${this.name} is not in this network namespace; its MTU is set where it is (ip link set ${this.name} mtu ${mtu})`);
    setIfaceMtu(this.ctx.name, this.name, mtu);
  }
}

export const netTap: DriverSpec = {
  name: 'net_tap',
  keys: ['iface', 'mac', 'remote'],
  create: (ctx) => new TapDriver(ctx),
  // Two queue pairs' rings; more come out of the heap's slack.
  memoryNeeded: () => 2 * PAIR_BYTES,
  openRxQueue: (heap, d) => new TapRxQueue(heap, (d as TapQueueDesc).q),
  openTxQueue: (heap, d) => new TapTxQueue(heap, (d as TapQueueDesc).q),
};
