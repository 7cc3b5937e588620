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
 * The data path moves each packet's bytes once, as DPDK's tap does: a tap
 * gives one frame per read() and takes one per write(), and the shim
 * (native/src/tap.cc) reads and writes straight between the tap and mbufs, one
 * call per burst. Rx allocates the burst's mbufs in one bulk call (a head per
 * frame asked and the spares one frame of TAP_MAX_FRAME needs past a data
 * room), then the shim readv()s frame after frame over a head and the spares,
 * chains the spares a large frame filled, stamps lengths and port, and stops
 * at EAGAIN; the mbufs left unused go back in one bulk free. DPDK keeps a
 * chain of mbufs per queue between bursts and refills it one mbuf at a time;
 * here the queue holds none between bursts, so a stopped port's pool is full
 * without a release step. Tx is one shim call writev()ing each packet from its
 * segments until the tap has no room (the rest stay the caller's, as any
 * txBurst), then one bulk free of what it took. JavaScript makes no call per
 * packet; the shim reads the queue block (tap.record.ts) and mbuf records
 * with the generated layouts.
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
import { ifaceSetUp, tapName, tapOpen, tapReader, tapWriter, type TapRxBurstFn, type TapTxBurstFn } from '../../native/tap.js';
import { HANGUP, closeFd, watch } from '../../native/watch.js';
import { RXQ_BYTES, RXQ_ERRORS, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import {
  TAP_MAX_FRAME,
  TAP_QUEUE_SIZE,
  TAPQ_MAX_SEGS,
  TAPQ_RX_BURST_MAX,
  TAPQ_W_BACK,
  TAPQ_W_BYTES,
  TAPQ_W_ERRORS,
  TAPQ_W_FD,
  TAPQ_W_FRONT,
  TAPQ_W_MBUFS,
  TAPQ_W_POOL,
  TAPQ_W_PORT,
  TAPQ_W_SPARES,
  TAPQ_W_STATS,
  TAPQ_W_WAITING,
} from './tap-layout.js';
import { vdevMac } from '../mac.js';
import { onLinkChange, setIfaceMtu } from '../iface-link.js';
import { TapRemote } from './remote.js';
import { ETHER_HDR_LEN } from '../../net/ether.js';

/** Interface names have at most IFNAMSIZ - 1 bytes. */
const IFNAMSIZ = 16;
/** RTE_PMD_TAP_MAX_QUEUES. */
const MAX_QUEUES = 16;
/** An rx queue's array of fresh mbufs: a burst's heads and one frame's spares. */
const RX_SLOTS = TAPQ_RX_BURST_MAX + TAPQ_MAX_SEGS - 1;
/** The heap one queue pair takes: two blocks and the rx queue's array. */
const PAIR_BYTES = 2 * (TAP_QUEUE_SIZE + 64) + RX_SLOTS * 4 + 64;

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
  /** Heap offset of the queue's block (tap.record.ts). */
  q: number;
}

/** What both directions keep: the block, the heap's views the shim and the counters need. */
abstract class TapQueue {
  protected readonly u32: Uint32Array;
  protected readonly f64: Float64Array;
  protected readonly u8: Uint8Array;
  protected readonly w: number;
  /** The queue's statistics block, as a Float64 index. */
  protected readonly stats: number;

  constructor(
    heap: Heap,
    protected readonly q: number,
  ) {
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    // The shim takes the WebAssembly.Memory's bytes (the driver refuses a heap without one).
    this.u8 = heap.memory ? new Uint8Array(heap.memory.buffer) : heap.u8;
    this.w = q >>> 2;
    this.stats = this.u32[this.w + TAPQ_W_STATS]! >>> 3;
  }

  descriptor(): TapQueueDesc {
    return { driver: 'net_tap', q: this.q };
  }
}

class TapRxQueue extends TapQueue implements RxQueue {
  private readonly mp: Mempool;
  private readonly mb: Mbufs;
  private readonly read: TapRxBurstFn;
  /** The block's array a burst allocates into (RX_SLOTS handles). */
  private readonly fresh: Burst;
  private readonly spares: number;

  constructor(heap: Heap, q: number) {
    super(heap, q);
    this.mp = Mempool.attach(heap, { offset: this.u32[this.w + TAPQ_W_POOL]! });
    this.mb = new Mbufs(heap);
    this.read = tapReader('net_tap rx');
    this.fresh = heap.burstAt(this.u32[this.w + TAPQ_W_MBUFS]!, RX_SLOTS);
    this.spares = this.u32[this.w + TAPQ_W_SPARES]!;
  }

  /**
   * Up to `n` frames (at most TAPQ_RX_BURST_MAX) read straight into mbufs:
   * one bulk alloc, one shim call, one bulk free of what was left. A pool
   * short of a full burst gives one frame's mbufs; short of those, nothing is
   * read and a waiting frame counts in rx_nombuf.
   */
  rxBurst(burst: Burst, n: number): number {
    const want = n < TAPQ_RX_BURST_MAX ? n : TAPQ_RX_BURST_MAX;
    if (want <= 0) return 0;
    let avail = want + this.spares;
    if (this.mp.allocBulk(this.fresh, avail) !== avail) {
      avail = 1 + this.spares;
      if (this.mp.allocBulk(this.fresh, avail) !== avail) avail = 0;
    }
    const got = this.read(this.u8, this.q, burst.heapOffset, want, avail);
    const { u32, f64, w, stats } = this;
    const front = u32[w + TAPQ_W_FRONT]!;
    const back = u32[w + TAPQ_W_BACK]!;
    if (back > front) this.mb.freeBulk(this.fresh, back - front, front);
    const errors = u32[w + TAPQ_W_ERRORS]!;
    if (errors !== 0) f64[stats + RXQ_ERRORS] += errors;
    if (u32[w + TAPQ_W_WAITING] !== 0) f64[stats + RXQ_NOMBUF] += 1;
    if (got <= 0) return 0; // an error (the interface gone) reads as nothing: the control plane reports it
    f64[stats + RXQ_PACKETS] += got;
    f64[stats + RXQ_BYTES] += u32[w + TAPQ_W_BYTES]!;
    return got;
  }
}

class TapTxQueue extends TapQueue implements TxQueue {
  private readonly mb: Mbufs;
  private readonly write: TapTxBurstFn;

  constructor(heap: Heap, q: number) {
    super(heap, q);
    this.mb = new Mbufs(heap);
    this.write = tapWriter('net_tap tx');
  }

  /** Writes the packets in order until the tap has no room; frees what it took (sent, or dropped as oerrors). */
  txBurst(burst: Burst, n: number): number {
    if (n <= 0) return 0;
    const taken = this.write(this.u8, this.q, burst.heapOffset, n);
    if (taken === 0) return 0;
    const { u32, f64, w, stats } = this;
    const errors = u32[w + TAPQ_W_ERRORS]!;
    f64[stats + TXQ_PACKETS] += taken - errors;
    f64[stats + TXQ_BYTES] += u32[w + TAPQ_W_BYTES]!;
    if (errors !== 0) f64[stats + TXQ_ERRORS] += errors;
    this.mb.freeBulk(burst, taken);
    return taken;
  }
}

/** One queue pair: its fd on the tap and its two queue blocks. */
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
  /** How the tap's deletion is watched for: the thread's netlink link events, the tap's fd, or not at all. */
  private watching: 'netlink' | 'fd' | 'none' = 'none';
  private unlisten: () => void = () => {};
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
    if (!ctx.heap.memory) throw new ArgError(`${dev}: the heap is not a WebAssembly.Memory, so the shim cannot reach the mbufs`);
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

  /** A queue pair on `fd`: its two blocks in the heap. */
  private pair(fd: number): QueuePair {
    return { fd, rxBlock: this.block(fd, true), txBlock: this.block(fd, false) };
  }

  /** A queue block on `fd` (tap.record.ts); an rx block gets its array of fresh mbufs. */
  private block(fd: number, rx: boolean): number {
    const heap = this.ctx.heap;
    const label = `${this.ctx.name} queue`;
    const q = heap.reserve(TAP_QUEUE_SIZE, 64, label);
    const w = q >>> 2;
    heap.u32[w + TAPQ_W_FD] = fd;
    heap.u32[w + TAPQ_W_PORT] = this.ctx.portId;
    if (rx) heap.u32[w + TAPQ_W_MBUFS] = heap.reserve(RX_SLOTS * 4, 64, label);
    return q;
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 }; // nb_desc sizes nothing: a burst reads straight into mbufs
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
    const segs = Math.ceil(TAP_MAX_FRAME / room);
    if (segs > TAPQ_MAX_SEGS) {
      throw new ArgError(`${this.ctx.name}: frames up to ${TAP_MAX_FRAME} bytes need ${segs} mbufs of the pool's ${room}-byte data room; at most ${TAPQ_MAX_SEGS}`);
    }
    const w = this.pairs[q]!.rxBlock >>> 2;
    const u32 = this.ctx.heap.u32;
    u32[w + TAPQ_W_POOL] = pool.offset;
    u32[w + TAPQ_W_STATS] = stats * 8;
    u32[w + TAPQ_W_SPARES] = segs - 1;
    return new TapRxQueue(this.ctx.heap, w << 2);
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const block = this.pairs[q]!.txBlock;
    this.ctx.heap.u32[(block >>> 2) + TAPQ_W_STATS] = stats * 8;
    return new TapTxQueue(this.ctx.heap, block);
  }

  /**
   * Brings the interface up (when it is in this namespace, as DPDK's dev_start) and watches for
   * its deletion: through the thread's netlink link events while the tap is here, since a watch on
   * the tap's own fd makes the kernel take its wait queue's lock, interrupts off, for every frame
   * it queues; once the tap lives in another namespace (whose events this thread does not hear),
   * through its fd, which polls as an error (EPOLLERR) when the tap is deleted.
   */
  start(): void {
    if (this.gone || this.pairs.length === 0) return;
    const here = this.here();
    if (here) ifaceSetUp(this.name, true, this.ctx.name);
    if (this.watching !== 'none') return;
    if (here) {
      this.watching = 'netlink';
      this.unlisten = onLinkChange(this.ctx.name, () => {
        if (this.link() !== null && this.here()) return;
        this.stopWatching();
        this.start(); // moved away: watch its fd instead; gone: nothing more
      });
      return;
    }
    this.watching = 'fd';
    watch(this.pairs[0]!.fd, () => {
      this.watching = 'none';
      if (this.link() !== null) this.start();
    }, HANGUP);
  }

  /** Takes the interface down (as DPDK's dev_stop) and stops watching. */
  stop(): void {
    if (!this.gone && this.pairs.length > 0 && this.here()) ifaceSetUp(this.name, false, this.ctx.name);
    this.stopWatching();
  }

  private stopWatching(): void {
    if (this.watching === 'netlink') this.unlisten();
    else if (this.watching === 'fd') requireNative(this.ctx.name).unwatch(this.pairs[0]!.fd);
    this.watching = 'none';
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
    if (this.watching !== 'none') this.stop();
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
  // Two queue pairs' blocks; more come out of the heap's slack.
  memoryNeeded: () => 2 * PAIR_BYTES,
  openRxQueue: (heap, d) => new TapRxQueue(heap, (d as TapQueueDesc).q),
  openTxQueue: (heap, d) => new TapTxQueue(heap, (d as TapQueueDesc).q),
};
