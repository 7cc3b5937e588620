/**
 * net_af_xdp: a port on a Linux network interface through AF_XDP sockets
 * (DPDK's rte_eth_af_xdp), one per queue, each bound to one of the
 * interface's rx queues (start_queue, start_queue + 1, ...).
 *
 * The UMEM is the rx queue's mempool: its arena of mbuf buffers, a range of
 * the wasm heap, is registered with XDP_UMEM_REG at the heap's own address
 * (unaligned chunks, one chunk per buffer at the pool's stride), as DPDK's
 * zero-copy mode registers its mempool. The fill ring hands the kernel mbufs'
 * buffers; a received descriptor names the buffer it filled, and that mbuf
 * goes up without a copy. Tx hands the kernel an mbuf of that pool as it is
 * and frees it when the completion ring returns it; a packet of another pool
 * is copied into one. The four rings are mapped into heap windows, so the
 * walk is a wasm kernel (af-xdp.as.ts) like any other driver's, and the only
 * system calls on the data path are the wake-ups the kernel asks for
 * (XDP_USE_NEED_WAKEUP): a sendto per tx burst, a recvfrom when rx is empty.
 * On veth (no zero-copy driver) the kernel copies between skb and UMEM; on a
 * zero-copy NIC it DMAs into the mbufs.
 *
 * The XDP program is libxdp's xsk_def_xdp_prog (queues with a socket are
 * redirected to it, the rest pass to the stack) or the object file named by
 * xdp_prog=, which must have an XSKMAP called xsks_map, as DPDK requires.
 * It is attached when the first rx queue is set up and detached at close.
 *
 * Devargs (DPDK's): iface=NAME (required), start_queue=N (0), queue_count=N
 * (1), shared_umem=0|1 (the port's sockets share the first one's UMEM when
 * their pools are the same), xdp_prog=FILE, busy_budget=N (64; 0: no busy
 * polling). When the interface's MTU needs more than one buffer per frame
 * (jumbo frames), the sockets are bound with XDP_USE_SG and the program
 * loaded for fragments: a packet is a chain of UMEM mbufs, one per fragment,
 * in both directions.
 *
 * Link: up while the interface is up with carrier. An interface that goes
 * away takes the port down with one line on stderr; the process goes on.
 * Needs the native shim built with libxdp, CAP_NET_RAW, CAP_BPF and
 * CAP_NET_ADMIN; without any, one line says which.
 */
import { readdirSync } from 'node:fs';
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg, intArg } from '../../ethdev/devargs.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { IfaceLink } from '../iface-link.js';
import { mapWindow, pageSize, unmapWindow } from '../../native/memory.js';
import { NativeError, NativeUnavailableError, requireNative } from '../../native/native.js';
import { ifaceInfo, packetKicker } from '../../native/packet.js';
import {
  XDP_PACKET_HEADROOM,
  XDP_PGOFF_RX_RING,
  XDP_PGOFF_TX_RING,
  XDP_UMEM_PGOFF_COMPLETION_RING,
  XDP_UMEM_PGOFF_FILL_RING,
  xdpProgramAttach,
  xdpProgramDetach,
  xdpRxWaker,
  xdpSocketClose,
  xdpSocketOpen,
  xdpStatistics,
  xdpUnavailable,
  type XdpProgram,
  type XdpRingOffsets,
  type XdpSocket,
} from '../../native/xdp.js';
import {
  AF_XDP_QUEUE_SIZE,
  AFXQ_W_A_CONS,
  AFXQ_W_A_DESCS,
  AFXQ_W_A_FLAGS,
  AFXQ_W_A_MASK,
  AFXQ_W_A_PROD,
  AFXQ_W_ARENA,
  AFXQ_W_ARENA_END,
  AFXQ_W_B_CONS,
  AFXQ_W_B_DESCS,
  AFXQ_W_B_FLAGS,
  AFXQ_W_B_MASK,
  AFXQ_W_B_PROD,
  AFXQ_W_BUSY,
  AFXQ_W_FD,
  AFXQ_W_FIRST,
  AFXQ_W_FRAME_CAP,
  AFXQ_W_FREED,
  AFXQ_W_FRONT,
  AFXQ_W_HELD,
  AFXQ_W_KICK,
  AFXQ_W_OWNED,
  AFXQ_W_POOL,
  AFXQ_W_PORT,
  AFXQ_W_SCRATCH,
  AFXQ_W_SCRATCH_COUNT,
  AFXQ_W_SG,
  AFXQ_W_STATS,
  AFXQ_W_STRIDE,
  AFXQ_W_TARGET,
  AFXQ_W_UMEM,
  XDP_DESC_SIZE,
} from './af-xdp-layout.js';
import { afXdpOps, type AfXdpOps } from './af-xdp.twin.js';

/** Queues one port may have (DPDK's RTE_MAX_QUEUES_PER_PORT is larger; 16 as net_af_packet). */
const MAX_QUEUES = 16;
/** Ring entries when the application asks for 0: DPDK's (XSK_RING_CONS__DEFAULT_NUM_DESCS); the fill ring has twice as many, as DPDK's. */
const DEFAULT_DESC = 2048;
const MAX_DESC = 4096;
/** DPDK's ETH_AF_XDP_DFLT_BUSY_BUDGET. */
const DEFAULT_BUSY_BUDGET = 64;
/** Handles the kernels allocate or free in one run (fill ring top-up, completions). */
const SCRATCH = 64;
/** Buffers one packet may span: the kernel's MAX_SKB_FRAGS + 1 (x86-64 default). */
const MAX_FRAGS = 18;
/** Ethernet header and one VLAN tag: what a frame holds beyond the MTU. */
const L2_OVERHEAD = 18;

/** A pool's arena of buffers, which becomes a UMEM. */
export interface Arena {
  /** Heap offset of the first buffer, of the byte past the last, and the stride between them. */
  readonly base: number;
  readonly end: number;
  readonly stride: number;
  /** Handle of the mbuf whose buffer is at `base`. */
  readonly first: number;
  readonly count: number;
}

/** `pool`'s arena: its buffers are at a fixed stride from its first mbuf's (mempool's layout). */
export function poolArena(pool: Mempool): Arena {
  const base = pool.bufAddrOf(pool.firstHandle);
  const stride = pool.size > 1 ? pool.bufAddrOf(pool.firstHandle + 1) - base : Math.ceil(pool.bufLen / 64) * 64;
  return { base, end: base + pool.size * stride, stride, first: pool.firstHandle, count: pool.size };
}

/**
 * The bytes of a frame one of `pool`'s buffers takes: the kernel puts data
 * XDP_PACKET_HEADROOM into each buffer; a larger frame spans several
 * (multi-buffer AF_XDP).
 */
export function frameRoom(pool: Mempool): number {
  return pool.bufLen - XDP_PACKET_HEADROOM;
}

/**
 * Gives back to their pool the mbufs of `arena` whose byte in the owned
 * array at heap offset `owned` is 1 (the ones a closed socket's kernel side
 * held), clearing the bytes. @returns how many it freed.
 */
export function freeOwned(heap: Heap, mb: Mbufs, owned: number, arena: Arena): number {
  const burst = heap.scratch('net_af_xdp owned buffers', SCRATCH);
  let k = 0;
  let freed = 0;
  for (let i = 0; i < arena.count; i++) {
    if (heap.u8[owned + i] === 0) continue;
    heap.u8[owned + i] = 0;
    burst[k++] = arena.first + i;
    if (k === SCRATCH) {
      mb.freeBulk(burst, k);
      freed += k;
      k = 0;
    }
  }
  if (k !== 0) mb.freeBulk(burst, k);
  return freed + k;
}

/** A queue reopens in a worker from its block alone. */
interface AfXdpQueueDesc extends QueueDescriptor {
  driver: 'net_af_xdp';
  /** Heap offset of the queue's block (af-xdp.record.ts). */
  q: number;
}

class AfXdpRxQueue implements RxQueue {
  private readonly lc: number;
  private readonly ops: AfXdpOps;
  private readonly u32: Uint32Array;
  private readonly w: number;
  private readonly fd: number;
  private readonly wake: (fd: number) => number;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    this.u32 = heap.u32;
    this.w = q >>> 2;
    this.fd = heap.u32[this.w + AFXQ_W_FD]!;
    const mp = Mempool.attach(heap, { offset: heap.u32[this.w + AFXQ_W_POOL]! });
    this.ops = afXdpOps(heap, new Mbufs(heap), mp);
    this.wake = xdpRxWaker('net_af_xdp rx');
  }

  rxBurst(burst: Burst, n: number): number {
    const got = this.ops.rx(this.q, this.lc, burst.heapOffset, n);
    if (this.u32[this.w + AFXQ_W_KICK] !== 0) this.wake(this.fd);
    return got;
  }

  descriptor(): AfXdpQueueDesc {
    return { driver: 'net_af_xdp', q: this.q };
  }
}

class AfXdpTxQueue implements TxQueue {
  private readonly lc: number;
  private readonly mb: Mbufs;
  private readonly ops: AfXdpOps;
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
    this.u32 = heap.u32;
    this.w = q >>> 2;
    this.fd = heap.u32[this.w + AFXQ_W_FD]!;
    const mp = Mempool.attach(heap, { offset: heap.u32[this.w + AFXQ_W_POOL]! });
    this.ops = afXdpOps(heap, this.mb, mp);
    this.kick = packetKicker('net_af_xdp tx'); // the same sendto(MSG_DONTWAIT) wakes an XDP socket's tx
  }

  txBurst(burst: Burst, n: number): number {
    const taken = this.ops.tx(this.q, this.lc, burst.heapOffset, n);
    const u32 = this.u32;
    if (u32[this.w + AFXQ_W_KICK] !== 0) this.kick(this.fd);
    // The packets tx copied or dropped are at the burst's front: what the kernel's free left, freed here.
    this.mb.freeBulkRest(burst, u32[this.w + AFXQ_W_FRONT]!, 0, u32[this.w + AFXQ_W_FREED]!);
    return taken;
  }

  descriptor(): AfXdpQueueDesc {
    return { driver: 'net_af_xdp', q: this.q };
  }
}

/** One queue: its socket, its ring windows, its two blocks and the owned array. */
interface XdpQueue {
  queueId: number;
  fd: number;
  pool: Mempool | null;
  windows: { offset: number; length: number }[];
  rxBlock: number;
  txBlock: number;
  owned: number;
  arena: Arena | null;
}

class AfXdpDriver implements EthDriver {
  private readonly dev: string;
  private readonly iface: string;
  private readonly ifindex: number;
  private readonly mac: Uint8Array;
  private readonly mtu: number;
  private readonly startQueue: number;
  private readonly sharedUmem: boolean;
  private readonly prog: string;
  private readonly busyBudget: number;
  private readonly queues: XdpQueue[] = [];
  private program: XdpProgram | null = null;
  /** Whether the program was loaded for multi-buffer frames (BPF_F_XDP_HAS_FRAGS). */
  private frags = false;
  private readonly link: IfaceLink;

  constructor(private readonly ctx: DriverContext) {
    const dev = (this.dev = ctx.name);
    requireNative(dev);
    const why = xdpUnavailable();
    if (why) throw new NativeUnavailableError(why.replace(/^net_af_xdp/, dev));
    const iface = ctx.args.get('iface');
    if (!iface) throw new ArgError(`${dev}: iface=NAME is required (the interface to attach to)`);
    this.startQueue = intArg(dev, ctx.args, 'start_queue', 0, 0, 1023);
    const count = intArg(dev, ctx.args, 'queue_count', 1, 1, MAX_QUEUES);
    this.sharedUmem = boolArg(dev, ctx.args, 'shared_umem');
    this.prog = ctx.args.get('xdp_prog') ?? '';
    this.busyBudget = intArg(dev, ctx.args, 'busy_budget', DEFAULT_BUSY_BUDGET, 0, 1 << 16);
    const info = ifaceInfo(iface, dev);
    if (!info) throw new ArgError(`${dev}: iface=${iface}: no such interface`);
    this.iface = iface;
    this.ifindex = info.ifindex;
    this.mac = info.mac;
    this.link = new IfaceLink(ctx.name, ctx.portId, iface, info.ifindex);
    this.mtu = info.mtu;
    const have = rxQueueCount(iface);
    if (have !== 0 && this.startQueue + count > have) {
      throw new ArgError(`${dev}: start_queue=${this.startQueue} queue_count=${count} asks for rx queues up to ${this.startQueue + count - 1}; iface=${iface} has ${have} (more: ethtool -L, or a veth made with numrxqueues/numtxqueues)`);
    }
    if (!ctx.heap.memory) throw new ArgError(`${dev}: the heap is not a WebAssembly.Memory, so it cannot be a UMEM`);
    for (let q = 0; q < count; q++) {
      this.queues.push({ queueId: this.startQueue + q, fd: -1, pool: null, windows: [], rxBlock: 0, txBlock: 0, owned: 0, arena: null });
    }
  }

  info(): DevInfo {
    const lim = { min: 0, max: MAX_DESC, align: 1 };
    const n = this.queues.length;
    return { driverName: 'net_af_xdp', maxRxQueues: n, maxTxQueues: n, rxDescLim: lim, txDescLim: lim, defaultRxDesc: DEFAULT_DESC, defaultTxDesc: DEFAULT_DESC };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    if (nbRxq !== this.queues.length || nbTxq !== this.queues.length) {
      throw new ArgError(`${this.dev}: ${nbRxq} rx and ${nbTxq} tx queues asked, queue_count=${this.queues.length} (one socket per queue pair)`);
    }
  }

  /**
   * Opens queue `q`'s socket with `pool`'s arena as its UMEM, maps its rings,
   * and gives the kernel its first buffers. The XDP program is attached on
   * the first call.
   */
  rxQueueSetup(q: number, nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    const dev = this.dev;
    const xq = this.queues[q]!;
    if (xq.fd >= 0) throw new ArgError(`${dev}: rx queue ${q} is set up already (its socket holds the pool's buffers)`);
    // A frame larger than one buffer spans several (multi-buffer AF_XDP): the socket and the program must say so.
    const room = frameRoom(pool);
    const frags = Math.ceil((this.mtu + L2_OVERHEAD) / room);
    if (frags > MAX_FRAGS) {
      throw new ArgError(`${dev}: iface=${this.iface} has MTU ${this.mtu}: a frame would span ${frags} of the pool's ${pool.bufLen}-byte buffers (${room} bytes each after ${XDP_PACKET_HEADROOM} of XDP headroom), more than AF_XDP's ${MAX_FRAGS}: lower the MTU or give the pool a larger data room`);
    }
    const sg = frags > 1;
    if (sg && this.program && !this.frags) throw new ArgError(`${dev}: rx queue ${q}'s pool needs multi-buffer frames and queue 0's did not: give every queue the same pool`);
    const heap = this.ctx.heap;
    const page = pageSize();
    const arena = poolArena(pool);
    const size = ringSize(nbDesc);
    if (!this.program) {
      this.program = xdpProgramAttach(dev, this.iface, this.ifindex, this.prog, this.startQueue + this.queues.length, sg);
      this.frags = sg;
    }
    const umemOffset = Math.floor(arena.base / page) * page;
    const umemEnd = Math.ceil(arena.end / page) * page;
    let s: XdpSocket;
    try {
      s = this.openSocket(xq, pool, arena, size, umemOffset, umemEnd, sg);
    } catch (e) {
      // The first queue's failure leaves no program behind on the interface (it would outlive the process).
      if (this.queues.every((o) => o.fd < 0)) this.detachProgram();
      if (sg && e instanceof NativeError && e.syscall === 'bind') {
        throw new ArgError(`${dev}: iface=${this.iface} has MTU ${this.mtu}, so frames span ${frags} buffers, and the kernel refused multi-buffer AF_XDP (XDP_USE_SG, Linux 6.6 and later): ${e.message}`);
      }
      throw e;
    }
    xq.fd = s.fd;
    xq.pool = pool;
    xq.arena = arena;
    xq.owned = heap.reserve(arena.count, 64, `${dev} queue ${q} owned buffers`);
    heap.u8.fill(0, xq.owned, xq.owned + arena.count);
    const rx = this.mapRing(xq, s.rx, XDP_PGOFF_RX_RING, size, XDP_DESC_SIZE);
    const fill = this.mapRing(xq, s.fill, XDP_UMEM_PGOFF_FILL_RING, 2 * size, 8);
    const tx = this.mapRing(xq, s.tx, XDP_PGOFF_TX_RING, size, XDP_DESC_SIZE);
    const comp = this.mapRing(xq, s.comp, XDP_UMEM_PGOFF_COMPLETION_RING, size, 8);
    xq.rxBlock = this.queueBlock(xq, umemOffset, rx, fill);
    xq.txBlock = this.queueBlock(xq, umemOffset, tx, comp);
    heap.u32[(xq.txBlock >>> 2) + AFXQ_W_SG] = sg ? 1 : 0;
    const w = xq.rxBlock >>> 2;
    heap.u32[w + AFXQ_W_STATS] = stats * 8;
    // Keep a quarter of the pool with the kernel at most: the rest is for the other queues and the application.
    heap.u32[w + AFXQ_W_TARGET] = Math.min(size, Math.floor(arena.count / 4));
    heap.u32[w + AFXQ_W_BUSY] = this.busyBudget > 0 ? 1 : 0;
    const queue = new AfXdpRxQueue(heap, xq.rxBlock);
    // Give the kernel its buffers before the first packet (rx of 0 only tops up the fill ring).
    const ops = afXdpOps(heap, new Mbufs(heap), pool);
    for (let held = -1; held !== heap.u32[w + AFXQ_W_HELD]; ) {
      held = heap.u32[w + AFXQ_W_HELD]!;
      ops.rx(xq.rxBlock, heap.lcore, 0, 0);
    }
    return queue;
  }

  /** Queue `xq`'s socket over `pool`'s arena (or the UMEM of an earlier queue with the same pool, with shared_umem=1). */
  private openSocket(xq: XdpQueue, pool: Mempool, arena: Arena, size: number, umemOffset: number, umemEnd: number, sg: boolean): XdpSocket {
    const shared = this.sharedUmem ? this.queues.find((o) => o.fd >= 0 && o.pool?.offset === pool.offset) : undefined;
    return xdpSocketOpen(this.dev, this.iface, this.ctx.heap.memory!, {
      ifindex: this.ifindex,
      queue: xq.queueId,
      mapFd: this.program!.mapFd,
      umemOffset,
      umemLength: umemEnd - umemOffset,
      chunkSize: arena.stride,
      rxSize: size,
      txSize: size,
      fillSize: 2 * size,
      compSize: size,
      sharedFd: shared ? shared.fd : -1,
      busyBudget: this.busyBudget,
      sg,
    });
  }

  private detachProgram(): void {
    if (!this.program) return;
    xdpProgramDetach(this.dev, this.program.handle);
    this.program = null;
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const xq = this.queues[q]!;
    if (xq.fd < 0) throw new ArgError(`${this.dev}: set up rx queue ${q} before tx queue ${q}: their socket's UMEM is the rx queue's pool`);
    this.ctx.heap.u32[(xq.txBlock >>> 2) + AFXQ_W_STATS] = stats * 8;
    return new AfXdpTxQueue(this.ctx.heap, xq.txBlock);
  }

  /** Maps one ring of `xq`'s socket into a fresh page-aligned heap window. @returns the window's heap offset. */
  private mapRing(xq: XdpQueue, off: XdpRingOffsets, pgoff: number, entries: number, descSize: number): { base: number; off: XdpRingOffsets; mask: number } {
    const heap = this.ctx.heap;
    const page = pageSize();
    const length = Math.ceil((off.desc + entries * descSize) / page) * page;
    const offset = heap.reserve(length, page, `${this.dev} queue ${xq.queueId} ring`);
    mapWindow(heap.memory!, { offset, length, fd: xq.fd, fdOffset: pgoff });
    xq.windows.push({ offset, length });
    return { base: offset, off, mask: entries - 1 };
  }

  /** A queue block over ring A (rx or tx) and ring B (fill or completion) of `xq` (af-xdp.record.ts). */
  private queueBlock(xq: XdpQueue, umem: number, a: { base: number; off: XdpRingOffsets; mask: number }, b: { base: number; off: XdpRingOffsets; mask: number }): number {
    const heap = this.ctx.heap;
    const arena = xq.arena!;
    const q = heap.reserve(AF_XDP_QUEUE_SIZE, 64, `${this.dev} queue block`);
    const w = q >>> 2;
    const u32 = heap.u32;
    u32.fill(0, w, w + AF_XDP_QUEUE_SIZE / 4);
    u32[w + AFXQ_W_POOL] = xq.pool!.offset;
    u32[w + AFXQ_W_PORT] = this.ctx.portId;
    u32[w + AFXQ_W_FD] = xq.fd;
    u32[w + AFXQ_W_UMEM] = umem;
    u32[w + AFXQ_W_ARENA] = arena.base;
    u32[w + AFXQ_W_ARENA_END] = arena.end;
    u32[w + AFXQ_W_STRIDE] = arena.stride;
    u32[w + AFXQ_W_FIRST] = arena.first;
    u32[w + AFXQ_W_OWNED] = xq.owned;
    u32[w + AFXQ_W_FRAME_CAP] = xq.pool!.bufLen - xq.pool!.headroom;
    u32[w + AFXQ_W_SCRATCH] = heap.reserve(SCRATCH * 4, 64, `${this.dev} queue scratch`);
    u32[w + AFXQ_W_SCRATCH_COUNT] = SCRATCH;
    u32[w + AFXQ_W_A_PROD] = a.base + a.off.producer;
    u32[w + AFXQ_W_A_CONS] = a.base + a.off.consumer;
    u32[w + AFXQ_W_A_FLAGS] = a.base + a.off.flags;
    u32[w + AFXQ_W_A_DESCS] = a.base + a.off.desc;
    u32[w + AFXQ_W_A_MASK] = a.mask;
    u32[w + AFXQ_W_B_PROD] = b.base + b.off.producer;
    u32[w + AFXQ_W_B_CONS] = b.base + b.off.consumer;
    u32[w + AFXQ_W_B_FLAGS] = b.base + b.off.flags;
    u32[w + AFXQ_W_B_DESCS] = b.base + b.off.desc;
    u32[w + AFXQ_W_B_MASK] = b.mask;
    return q;
  }

  /** Watches the first socket for the error the kernel reports when the interface goes down or away. */
  start(): void {
    const missing = this.queues.findIndex((q) => q.fd < 0);
    if (missing >= 0) throw new ArgError(`${this.dev}: queue ${missing} was never set up`);
    this.link.start(this.queues[0]!.fd);
  }

  stop(): void {
    this.link.stop();
  }

  /**
   * Closes each socket (out of the map first), unmaps its rings, and gives
   * back every mbuf its kernel side still held (the owned array says which),
   * then detaches the program.
   */
  close(): void {
    const heap = this.ctx.heap;
    this.stop();
    const mb = new Mbufs(heap);
    for (const xq of this.queues) {
      if (xq.fd < 0) continue;
      xdpSocketClose(this.dev, xq.fd, this.program?.mapFd ?? -1, xq.queueId);
      xq.fd = -1;
      for (const win of xq.windows) unmapWindow(heap.memory!, win);
      xq.windows.length = 0;
      freeOwned(heap, mb, xq.owned, xq.arena!);
    }
    this.queues.length = 0;
    this.detachProgram();
  }

  linkUp(): boolean {
    return this.link.up();
  }

  linkSpeed(): number {
    return 10_000;
  }

  /** The kernel's AF_XDP counters, summed over the queues (DPDK's af_xdp xstats carry the same). */
  xstats(): Record<string, number> {
    const out: Record<string, number> = { rx_dropped: 0, rx_invalid_descs: 0, tx_invalid_descs: 0, rx_ring_full: 0, rx_fill_ring_empty: 0, tx_ring_empty: 0 };
    for (const xq of this.queues) {
      if (xq.fd < 0 || this.link.hasGone()) continue;
      const s = xdpStatistics(this.dev, xq.fd);
      out['rx_dropped']! += s.rxDropped;
      out['rx_invalid_descs']! += s.rxInvalidDescs;
      out['tx_invalid_descs']! += s.txInvalidDescs;
      out['rx_ring_full']! += s.rxRingFull;
      out['rx_fill_ring_empty']! += s.rxFillRingEmpty;
      out['tx_ring_empty']! += s.txRingEmpty;
    }
    return out;
  }
}

/** Ring entries for `nbDesc` (0: the default), a power of two as the kernel requires. */
export function ringSize(nbDesc: number): number {
  const n = nbDesc === 0 ? DEFAULT_DESC : Math.min(nbDesc, MAX_DESC);
  return 1 << Math.ceil(Math.log2(Math.max(n, 64)));
}

/** The interface's rx queues (its /sys/class/net/IFACE/queues/rx-N), 0 when unknown. */
function rxQueueCount(iface: string): number {
  try {
    return readdirSync(`/sys/class/net/${iface}/queues`).filter((n) => n.startsWith('rx-')).length;
  } catch {
    return 0;
  }
}

/** Heap bytes a port of these devargs maps and reserves beyond its pool: four rings, blocks, scratch and owned arrays per queue. */
function memoryNeeded(all: readonly [string, string][]): number {
  const args = new Map(all);
  const count = Math.max(1, Math.min(MAX_QUEUES, Number(args.get('queue_count') ?? 1) || 1));
  const ring = 4096 + MAX_DESC * XDP_DESC_SIZE;
  return count * (4 * (ring + 4096) + 2 * (AF_XDP_QUEUE_SIZE + SCRATCH * 4 + 128) + (1 << 20));
}

export const netAfXdp: DriverSpec = {
  name: 'net_af_xdp',
  keys: ['iface', 'start_queue', 'queue_count', 'shared_umem', 'xdp_prog', 'busy_budget'],
  create: (ctx) => new AfXdpDriver(ctx),
  memoryNeeded,
  openRxQueue: (heap, d) => new AfXdpRxQueue(heap, (d as AfXdpQueueDesc).q),
  openTxQueue: (heap, d) => new AfXdpTxQueue(heap, (d as AfXdpQueueDesc).q),
};
