/**
 * net_memif: a shared-memory port to another process (DPDK's net_memif, VPP,
 * libmemif users), memif 2.0 in copy mode, in both roles, and zero-copy on a
 * client (zero-copy=yes: region 0 is the heap's memfd prefix, the rings hold
 * the queues' own mbufs; helloZc, the *Zc kernels, returnMbufs).
 *
 * The client makes one memfd region holding every ring and its buffers,
 * announces it and the rings over the control socket (channel.ts, messages in
 * protocol.ts), and the server maps it; as in DPDK, only the client creates
 * regions. Either side maps the region into a window of the heap (mapWindow),
 * so the rx and tx kernels (memif.as.ts, twins in memif.twin.ts) walk the
 * peer's descriptors and copy packets in place. The link is up from
 * CONNECT(ED) until either side disconnects, the peer dies (the socket
 * closes) or a burst meets a descriptor outside its region; then every queue
 * is parked, the windows unmapped and the fds closed, and a client reconnects.
 *
 * Devargs (DPDK's): role=server|client (default client), id=N, secret=S,
 * socket=PATH (default /run/memif.sock), socket-abstract=yes|no (default yes,
 * as DPDK 22.11: PATH is an abstract name), rsize=log2 ring size (default
 * 10), bsize=buffer bytes (default 2048), mac=xx:..., zero-copy=yes|no
 * (default no; yes on a client only, as DPDK).
 */
import { ArgError } from '../../errors.js';
import { intArg } from '../../ethdev/devargs.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { eventfdCreate, eventfdWrite } from '../../native/eventfd.js';
import { F_SEAL_SHRINK, fdSeals, mapWindow, memfdCreate, pageSize, unmapWindow } from '../../native/memory.js';
import { requireNative } from '../../native/native.js';
import { closeFd } from '../../native/watch.js';
import { sharedHeapFd } from '../../vhost/shared-heap.js';
import { parseMac } from '../../net/ether.js';
import { vdevMac } from '../mac.js';
import { Channel, MemifSocket, memifLog, type SocketMember } from './channel.js';
import {
  MEMIF_COOKIE,
  MEMIF_DESC_SIZE,
  MEMIF_MAX_REGIONS,
  MEMIF_REGIONS_HDR_SIZE,
  MEMIF_REGION_ENTRY,
  MEMIF_RING_FLAG_MASK_INT,
  MEMIF_RING_HDR_SIZE,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MDESC_REGION,
  MQ_D_BAD_DESC,
  MQ_F_ZC,
  MQ_NO_FD,
  MQ_W_DONE,
  MQ_W_DONE_CAP,
  MQ_W_HEAD,
  MQ_W_NB_DONE,
  MQ_W_SLOTS,
  MQ_W_BUSY,
  MQ_W_FAULT,
  MQ_W_FLAGS,
  MQ_W_INT_FD,
  MQ_W_KICK,
  MQ_W_LAST,
  MQ_W_POOL,
  MQ_W_RING,
  MRING_COOKIE,
  MRING_FLAGS,
  MRING_HEAD,
  MRING_TAIL,
} from './memif-layout.js';
import { memifOps, type MemifOps } from './memif.twin.js';
import { attachQueueRing, newQueueBlock, setQueuePool, writeRegionTable } from './queue-block.js';
import {
  ADD_RING_FLAG_C2S,
  MAX_LOG2_RING_SIZE,
  MEMIF_VERSION,
  MODE_ETHERNET,
  MemifError,
  MsgType,
  encodeAck,
  encodeAddRegion,
  encodeAddRing,
  encodeConnect,
  encodeInit,
  typeName,
  type Msg,
} from './protocol.js';

const DEFAULT_SOCKET = '/run/memif.sock';
/** Queue pairs a window budget is sized for (DPDK allows 255; each pair is two rings of buffers). */
const BUDGET_QUEUE_PAIRS = 8;
/** The least window budget per port: a peer's default region (1024 × 2048 B per ring) many times over. */
const MIN_WINDOW_BUDGET = 64 << 20;
/** A client retries its connect this often while no server listens (DPDK's client does not retry at all). */
const RECONNECT_MS = 200;
/** How often the control plane looks at the queues' fault flags while the link is up. */
const FAULT_CHECK_MS = 100;
/** How long a disconnect waits for a burst in flight on a worker (a burst takes microseconds). */
const BUSY_WAIT_MS = 1000;

/** Heap bytes of one ring: its header and descriptors, and its buffers. */
function ringBytes(log2: number, bsize: number): number {
  return MEMIF_RING_HDR_SIZE + (MEMIF_DESC_SIZE << log2) + (bsize << log2);
}

/**
 * Heap bytes a port reserves for the windows its regions are mapped into:
 * the client's own region for BUDGET_QUEUE_PAIRS pairs, or a server's peer's,
 * at least MIN_WINDOW_BUDGET; a region that does not fit is refused.
 */
function windowBudget(rsize: number, bsize: number): number {
  const want = Math.max(MIN_WINDOW_BUDGET, 2 * BUDGET_QUEUE_PAIRS * ringBytes(rsize, bsize));
  return Math.ceil(want / 65536) * 65536;
}

/** Why a peer's region fd could shrink under our mapping, or '' when it is sealed against it. */
function shrinkable(fd: number): string {
  let seals: number;
  try {
    seals = fdSeals(fd);
  } catch (e) {
    return (e as Error).message;
  }
  if (seals < 0) return 'the fd takes no seals (DPDK and libmemif send a memfd sealed with F_SEAL_SHRINK)';
  return (seals & F_SEAL_SHRINK) === 0 ? 'the memfd lacks F_SEAL_SHRINK (DPDK and libmemif add it)' : '';
}

interface Config {
  role: 'server' | 'client';
  /** Client only: the rings' buffers are the queues' mbufs, in region 0 = the heap's memfd prefix. */
  zeroCopy: boolean;
  id: number;
  secret: string;
  socket: string;
  abstract: boolean;
  log2: number;
  bsize: number;
  mac: Uint8Array;
}

function yesNo(dev: string, args: Map<string, string>, key: string, dflt: boolean): boolean {
  const v = args.get(key);
  if (v === undefined) return dflt;
  if (v === 'yes') return true;
  if (v === 'no') return false;
  throw new ArgError(`${dev}: ${key}=${v}: expected yes or no`);
}

function parseConfig(name: string, args: Map<string, string>): Config {
  const roleArg = args.get('role') ?? 'client';
  const role = roleArg === 'server' || roleArg === 'master' ? 'server' : roleArg === 'client' || roleArg === 'slave' ? 'client' : null;
  if (!role) throw new ArgError(`${name}: role=${roleArg}: expected server or client`);
  const zeroCopy = yesNo(name, args, 'zero-copy', false);
  // As in DPDK: only the client's buffers can be its own mbufs (the client makes the regions).
  if (zeroCopy && role === 'server') throw new ArgError(`${name}: zero-copy=yes is for role=client (the client makes the regions; a server copies)`);
  const secret = args.get('secret') ?? '';
  if (Buffer.byteLength(secret, 'latin1') > 23) throw new ArgError(`${name}: secret is ${secret.length} characters; memif allows 23`);
  const socket = args.get('socket') ?? DEFAULT_SOCKET;
  if (socket === '' || Buffer.byteLength(socket) > 107) throw new ArgError(`${name}: socket=${socket}: a unix socket address takes 1 to 107 bytes`);
  const mac = args.get('mac');
  return {
    role,
    zeroCopy,
    id: intArg(name, args, 'id', 0, 0, 0xffffffff),
    secret,
    socket,
    abstract: yesNo(name, args, 'socket-abstract', true),
    log2: intArg(name, args, 'rsize', 10, 1, MAX_LOG2_RING_SIZE),
    bsize: intArg(name, args, 'bsize', 2048, 1, 0xffff),
    mac: mac === undefined ? vdevMac(name) : macArg(name, mac),
  };
}

function macArg(dev: string, text: string): Uint8Array {
  try {
    return parseMac(text);
  } catch (e) {
    throw new ArgError(`${dev}: mac=${text}: ${(e as Error).message}`);
  }
}

/** A queue reopens in a worker from its block alone. */
interface MemifQueueDesc extends QueueDescriptor {
  driver: 'net_memif';
  /** Heap offset of the queue's block (memif.record.ts). */
  q: number;
}

class MemifRxQueue implements RxQueue {
  private readonly lc: number;
  private readonly ops: MemifOps;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    const mp = Mempool.attach(heap, { offset: heap.u32[(q >>> 2) + MQ_W_POOL]! });
    this.ops = memifOps(heap, new Mbufs(heap), mp);
    this.zc = (heap.u32[(q >>> 2) + MQ_W_FLAGS]! & MQ_F_ZC) !== 0;
  }

  private readonly zc: boolean;

  rxBurst(burst: Burst, n: number): number {
    // The kernel holds the queue's busy word around its touch of the rings (memif.as.ts, busy).
    return this.zc ? this.ops.rxZc(this.q, this.lc, burst.heapOffset, n) : this.ops.rx(this.q, this.lc, burst.heapOffset, n);
  }

  descriptor(): MemifQueueDesc {
    return { driver: 'net_memif', q: this.q };
  }
}

class MemifTxQueue implements TxQueue {
  private readonly lc: number;
  private readonly mb: Mbufs;
  private readonly ops: MemifOps;
  private readonly i32: Int32Array;
  private readonly u32: Uint32Array;
  private readonly w: number;

  constructor(
    heap: Heap,
    private readonly q: number,
  ) {
    this.lc = heap.lcore;
    this.mb = new Mbufs(heap);
    this.i32 = heap.i32;
    this.u32 = heap.u32;
    this.w = q >>> 2;
    this.ops = memifOps(heap, this.mb, null);
    const u32 = heap.u32;
    this.done = (u32[this.w + MQ_W_FLAGS]! & MQ_F_ZC) !== 0 ? heap.burstAt(u32[this.w + MQ_W_DONE]!, u32[this.w + MQ_W_DONE_CAP]!) : null;
  }

  /** Zero-copy: the burst the tx kernel leaves consumed packets in; null in copy mode. */
  private readonly done: Burst | null;

  txBurst(burst: Burst, n: number): number {
    const w = this.w;
    const done = this.done;
    const sent = done ? this.ops.txZc(this.q, this.lc, burst.heapOffset, n) : this.ops.tx(this.q, this.lc, burst.heapOffset, n);
    // Only when the receiver asked (no MASK_INT on its ring; DPDK's polling peers never do): the
    // kernel left the busy word set, so the eventfd is still open; clear it after the write.
    if (this.u32[w + MQ_W_KICK] !== 0) {
      eventfdWrite(this.u32[w + MQ_W_INT_FD]!);
      Atomics.store(this.i32, w + MQ_W_BUSY, 0);
    }
    // Copy mode is done with the sent packets; zero-copy frees what the server has consumed.
    if (done) this.mb.freeBulk(done, this.u32[w + MQ_W_NB_DONE]!);
    else this.mb.freeBulk(burst, sent);
    return sent;
  }

  descriptor(): MemifQueueDesc {
    return { driver: 'net_memif', q: this.q };
  }
}

/** A region of the connection, mapped at `base` in the heap. */
interface Region {
  fd: number;
  size: number;
  base: number;
  length: number;
  /** Zero-copy: the heap itself (its fd is the heap's, nothing is mapped). */
  heap?: boolean;
}

/** A ring as ADD_RING described it (server) or as the client laid it out. */
interface RingInfo {
  region: number;
  offset: number;
  log2: number;
  fd: number;
  /** A ring this side laid out (client, copy mode): heap address of slot 0's buffer, the rest after it in slot order. */
  bufs?: number;
}

class MemifDriver implements EthDriver, SocketMember {
  readonly id: number;
  readonly role: 'server' | 'client';
  readonly name: string;
  private readonly cfg: Config;
  private readonly heap: Heap;
  private readonly socket: MemifSocket;
  /** The heap range windows are mapped into, reserved once: [arena, arena + budget). */
  private readonly arena: number;
  private readonly budget: number;
  private readonly page: number;
  /** The region table (memifRegions) every queue block points at. */
  private readonly regionTable: number;
  private rxq: number[] = [];
  private txq: number[] = [];
  private started = false;
  private closed = false;
  private ch: Channel | null = null;
  private up = false;
  /** Client: INIT sent, CONNECTED not yet received; server: INIT accepted, CONNECT not yet received. */
  private regions: Region[] = [];
  /** C2S rings (client tx, server rx) and S2C rings (client rx, server tx), by index. */
  private c2s: (RingInfo | undefined)[] = [];
  private s2c: (RingInfo | undefined)[] = [];
  /** Client: eventfds it made for its rings (closed at disconnect). */
  private timer: NodeJS.Timeout | undefined;
  private waitingLogged = '';
  private remote = '';
  private connects = 0;
  private disconnects = 0;

  constructor(ctx: DriverContext) {
    this.name = ctx.name;
    requireNative(ctx.name);
    this.cfg = parseConfig(ctx.name, ctx.args);
    this.id = this.cfg.id;
    this.role = this.cfg.role;
    this.heap = ctx.heap;
    if (!this.heap.memory) throw new ArgError(`${ctx.name}: needs a heap over a WebAssembly.Memory (regions are mapped into it)`);
    this.page = pageSize();
    // A zero-copy client maps no window: its arena holds only its rings, and region 0 is the heap itself,
    // backed by a memfd now, before any lcore writes to it (backMemory's condition).
    if (this.cfg.zeroCopy) this.heapFd = sharedHeapFd(this.heap, ctx.name);
    this.budget = this.cfg.zeroCopy ? Math.ceil((2 * BUDGET_QUEUE_PAIRS * (MEMIF_RING_HDR_SIZE + (MEMIF_DESC_SIZE << this.cfg.log2))) / this.page) * this.page : windowBudget(this.cfg.log2, this.cfg.bsize);
    this.arena = this.heap.reserve(this.budget, Math.max(this.page, 65536), `${ctx.name} region windows`);
    this.regionTable = this.heap.reserve(MEMIF_REGIONS_HDR_SIZE + MEMIF_MAX_REGIONS * MEMIF_REGION_ENTRY, 64, `${ctx.name} region table`);
    this.portId = ctx.portId;
    this.socket = MemifSocket.join(this.cfg.socket, this.cfg.abstract, this);
    this.mb = new Mbufs(this.heap);
  }

  private readonly portId: number;
  /** Zero-copy client: the heap's memfd (the heap's for life: never closed here). */
  private heapFd = -1;
  /** Zero-copy client: each rx queue's pool, whose mbufs the control plane posts at connect. */
  private rxPools: Mempool[] = [];
  private readonly mb: Mbufs;

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    return { driverName: 'net_memif', maxRxQueues: 255, maxTxQueues: 255, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.cfg.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    this.rxq = new Array<number>(nbRxq).fill(0);
    this.txq = new Array<number>(nbTxq).fill(0);
  }

  private queueBlock(stats: number, pool: Mempool | null, c2s: boolean): number {
    return newQueueBlock(this.heap, {
      name: this.name,
      stats: stats * 8,
      pool,
      port: this.portId,
      c2s,
      regions: this.regionTable,
      // The connection's ring is never larger than ours.
      zeroCopyLog2: this.cfg.zeroCopy ? this.cfg.log2 : undefined,
    });
  }

  rxQueueSetup(q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    // The server receives on C2S rings, the client on S2C.
    const block = (this.rxq[q] ||= this.queueBlock(stats, pool, this.role === 'server'));
    setQueuePool(this.heap, block, pool);
    this.rxPools[q] = pool;
    return new MemifRxQueue(this.heap, block);
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const block = (this.txq[q] ||= this.queueBlock(stats, null, this.role === 'client'));
    return new MemifTxQueue(this.heap, block);
  }

  start(): void {
    this.started = true;
    if (this.role === 'client') this.dial();
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.ch) this.ch.disconnect('Device stopped');
    this.teardown();
  }

  close(): void {
    if (this.closed) return;
    this.stop();
    this.closed = true;
    this.socket.leave(this);
  }

  linkUp(): boolean {
    return this.up;
  }

  linkSpeed(): number {
    return 100_000; // DPDK's memif reports 100G
  }

  xstats(): Record<string, number> {
    let bad = 0;
    for (const q of [...this.rxq, ...this.txq]) if (q) bad += this.heap.f64[(q >>> 3) + MQ_D_BAD_DESC]!;
    return { bad_descriptors: bad, connects: this.connects, disconnects: this.disconnects };
  }

  // ---- client: connect, answer HELLO with the regions and rings ----------

  /** Opens the control socket, or retries later while nothing listens. */
  private dial(): void {
    this.timer = undefined;
    if (!this.started || this.ch) return;
    let fd: number;
    try {
      fd = this.socket.connect();
    } catch (e) {
      const why = (e as Error).message;
      if (why !== this.waitingLogged) memifLog(`${this.name}: waiting for a server on ${this.socket.shown}: ${why}`);
      this.waitingLogged = why;
      this.timer = setTimeout(() => this.dial(), RECONNECT_MS).unref();
      return;
    }
    this.waitingLogged = '';
    this.ch = new Channel(fd, this.name, (m, fds) => this.clientMsg(m, fds), (reason) => this.channelClosed(reason));
  }

  private clientMsg(msg: Msg, _fds: number[]): void {
    const t = msg.type;
    if (t === MsgType.ACK) return;
    if (t === MsgType.HELLO && this.regions.length === 0) return this.hello(msg.hello);
    if (t === MsgType.CONNECTED && this.regions.length > 0 && !this.up) {
      this.remote = msg.ifName;
      return this.connected();
    }
    throw new MemifError(this.name, 'Unexpected message', t === 'unknown' ? '' : typeName(t));
  }

  private hello(h: Extract<Msg, { type: typeof MsgType.HELLO }>['hello']): void {
    if (h.minVersion > MEMIF_VERSION || h.maxVersion < MEMIF_VERSION) throw new MemifError(this.name, 'Incompatible memif version', `peer speaks ${h.minVersion.toString(16)}..${h.maxVersion.toString(16)}`);
    const nC2s = Math.min(h.maxC2sRing + 1, this.txq.length);
    const nS2c = Math.min(h.maxS2cRing + 1, this.rxq.length);
    const log2 = Math.min(h.maxLog2RingSize, this.cfg.log2);
    const bsize = this.cfg.bsize;
    const hdr = MEMIF_RING_HDR_SIZE + (MEMIF_DESC_SIZE << log2);
    if (this.cfg.zeroCopy) return this.helloZc(nC2s, nS2c, log2, hdr);
    const bufOff = (nC2s + nS2c) * hdr;
    const size = Math.ceil((bufOff + (nC2s + nS2c) * (bsize << log2)) / this.page) * this.page;
    if (size > this.budget) throw new MemifError(this.name, 'Region too large', `${size} bytes; the port's window budget is ${this.budget}`);
    const fd = memfdCreate(`memif_region_0`, size, { sealSize: true });
    this.regions.push({ fd, size, base: this.arena, length: size });
    mapWindow(this.heap.memory!, { offset: this.arena, length: size, fd });
    const u8 = this.heap.u8;
    const u32 = this.heap.u32;
    const u16 = this.heap.u16;
    u8.fill(0, this.arena, this.arena + bufOff);
    for (let i = 0; i < nC2s + nS2c; i++) {
      const ring = this.arena + i * hdr;
      u32[(ring + MRING_COOKIE) >>> 2] = MEMIF_COOKIE;
      // Slot j's buffer, as its descriptor says and as the tx kernel computes it (bufs).
      const first = bufOff + i * (1 << log2) * bsize;
      for (let j = 0; j < 1 << log2; j++) {
        const d = ring + MEMIF_RING_HDR_SIZE + j * MEMIF_DESC_SIZE;
        u16[(d + MDESC_REGION) >>> 1] = 0;
        u32[(d + MDESC_OFFSET) >>> 2] = first + j * bsize;
        u32[(d + MDESC_LENGTH) >>> 2] = bsize;
      }
      const info: RingInfo = { region: 0, offset: i * hdr, log2, fd: eventfdCreate(), bufs: this.arena + first };
      if (i < nC2s) this.c2s[i] = info;
      else this.s2c[i - nC2s] = info;
    }
    const ch = this.ch!;
    ch.enqueue(encodeInit({ version: MEMIF_VERSION, id: this.id, mode: MODE_ETHERNET, secret: this.cfg.secret, name: 'dpkit' }));
    ch.enqueue(encodeAddRegion({ index: 0, size }), fd);
    for (let i = 0; i < nC2s; i++) ch.enqueue(encodeAddRing({ flags: ADD_RING_FLAG_C2S, index: i, region: 0, offset: this.c2s[i]!.offset, log2RingSize: log2, privateHdrSize: 0 }), this.c2s[i]!.fd);
    for (let i = 0; i < nS2c; i++) ch.enqueue(encodeAddRing({ flags: 0, index: i, region: 0, offset: this.s2c[i]!.offset, log2RingSize: log2, privateHdrSize: 0 }), this.s2c[i]!.fd);
    ch.enqueue(encodeConnect(MsgType.CONNECT, this.name));
  }

  /**
   * Zero-copy (DPDK's memif_init_regions_and_queues with zero-copy, one region
   * instead of one per memseg list): region 0 is the prefix of the heap's
   * memfd up to everything reserved so far, the rings (in this port's arena)
   * and every pool included, so a descriptor's offset is an mbuf's heap
   * offset. The server is trusted with that whole prefix, as DPDK's zero-copy
   * client trusts it with its memsegs.
   */
  private helloZc(nC2s: number, nS2c: number, log2: number, hdr: number): void {
    const size = Math.ceil((this.heap.size - this.heap.free()) / this.page) * this.page;
    this.regions.push({ fd: this.heapFd, size, base: 0, length: size, heap: true });
    const u32 = this.heap.u32;
    this.heap.u8.fill(0, this.arena, this.arena + (nC2s + nS2c) * hdr);
    for (let i = 0; i < nC2s + nS2c; i++) {
      const ring = this.arena + i * hdr;
      u32[(ring + MRING_COOKIE) >>> 2] = MEMIF_COOKIE;
      const info: RingInfo = { region: 0, offset: ring, log2, fd: eventfdCreate() };
      if (i < nC2s) this.c2s[i] = info;
      else this.s2c[i - nC2s] = info;
    }
    const ch = this.ch!;
    ch.enqueue(encodeInit({ version: MEMIF_VERSION, id: this.id, mode: MODE_ETHERNET, secret: this.cfg.secret, name: 'dpkit' }));
    ch.enqueue(encodeAddRegion({ index: 0, size }), this.heapFd);
    for (let i = 0; i < nC2s; i++) ch.enqueue(encodeAddRing({ flags: ADD_RING_FLAG_C2S, index: i, region: 0, offset: this.c2s[i]!.offset, log2RingSize: log2, privateHdrSize: 0 }), this.c2s[i]!.fd);
    for (let i = 0; i < nS2c; i++) ch.enqueue(encodeAddRing({ flags: 0, index: i, region: 0, offset: this.s2c[i]!.offset, log2RingSize: log2, privateHdrSize: 0 }), this.s2c[i]!.fd);
    ch.enqueue(encodeConnect(MsgType.CONNECT, this.name));
  }

  // ---- server: INIT, regions and rings from the client, CONNECT ----------

  /** Takes a channel whose INIT named this interface (MemifSocket calls it). */
  accept(ch: Channel, msg: Extract<Msg, { type: typeof MsgType.INIT }>): void {
    const i = msg.init;
    if (i.version !== MEMIF_VERSION) throw new MemifError(this.name, 'Incompatible memif version', `INIT version ${i.version.toString(16)}`);
    if (!this.started) throw new MemifError(this.name, 'ID not found', `id=${i.id}: the port is not started`);
    if (this.ch) throw new MemifError(this.name, 'Already connected', `id=${i.id}`);
    if (i.mode !== MODE_ETHERNET) throw new MemifError(this.name, 'Only ethernet mode supported', `mode ${i.mode}`);
    if (this.cfg.secret !== '') {
      if (i.secret === '') throw new MemifError(this.name, 'Secret required');
      if (i.secret !== this.cfg.secret) throw new MemifError(this.name, 'Incorrect secret');
    }
    this.ch = ch;
    ch.name = this.name;
    ch.handler = (m, fds) => this.serverMsg(m, fds);
    ch.onClose = (reason) => this.channelClosed(reason);
    this.remote = i.name;
    ch.enqueue(encodeAck());
  }

  private serverMsg(msg: Msg, fds: number[]): void {
    if (this.up) throw new MemifError(this.name, 'Unexpected message', `${msg.type === 'unknown' ? '' : typeName(msg.type)} after CONNECT`);
    switch (msg.type) {
      case MsgType.ACK:
        return;
      case MsgType.ADD_REGION:
        this.addRegion(msg.region.index, msg.region.size, fds);
        break;
      case MsgType.ADD_RING:
        this.addRing(msg.ring, fds);
        break;
      case MsgType.CONNECT:
        this.remote = msg.ifName || this.remote;
        this.connected();
        this.ch!.enqueue(encodeConnect(MsgType.CONNECTED, this.name));
        return;
      default:
        throw new MemifError(this.name, 'Unexpected message', msg.type === 'unknown' ? '' : typeName(msg.type));
    }
    this.ch!.enqueue(encodeAck());
  }

  private addRegion(index: number, size: number, fds: number[]): void {
    const fd = fds.shift();
    if (fd === undefined) throw new MemifError(this.name, 'Missing region fd');
    if (index !== this.regions.length || index >= MEMIF_MAX_REGIONS) {
      closeFd(fd);
      throw new MemifError(this.name, 'Invalid region index', `region ${index}, expected ${this.regions.length} (at most ${MEMIF_MAX_REGIONS})`);
    }
    const used = this.regions.reduce((a, r) => a + r.length, 0);
    const length = Math.ceil(size / this.page) * this.page;
    if (size === 0 || used + length > this.budget) {
      closeFd(fd);
      throw new MemifError(this.name, size === 0 ? 'Invalid region size' : 'Region too large', `region ${index}: ${size} bytes; the port's window budget has ${this.budget - used} left`);
    }
    // DPDK and libmemif seal their regions against shrinking; a file that can still shrink would
    // let the peer truncate it under our mapping and fault (SIGBUS) the next burst.
    const unsealed = shrinkable(fd);
    if (unsealed) {
      closeFd(fd);
      throw new MemifError(this.name, 'Region not sealed', `region ${index}: ${unsealed}`);
    }
    const r: Region = { fd, size, base: this.arena + used, length };
    try {
      mapWindow(this.heap.memory!, { offset: r.base, length, fd });
    } catch (e) {
      closeFd(fd);
      throw new MemifError(this.name, 'Region cannot be mapped', `region ${index} of ${size} bytes: ${(e as Error).message}`);
    }
    this.regions.push(r);
  }

  private addRing(a: Extract<Msg, { type: typeof MsgType.ADD_RING }>['ring'], fds: number[]): void {
    const fd = fds.shift();
    if (fd === undefined) throw new MemifError(this.name, 'Missing interrupt fd');
    const c2s = (a.flags & ADD_RING_FLAG_C2S) !== 0;
    const list = c2s ? this.c2s : this.s2c;
    const limit = c2s ? this.rxq.length : this.txq.length;
    const what = `${c2s ? 'C2S' : 'S2C'} ring ${a.index}`;
    const fail = (reason: string, detail: string): never => {
      closeFd(fd);
      throw new MemifError(this.name, reason, `${what}: ${detail}`);
    };
    if (a.index >= limit || list[a.index]) fail('Invalid ring index', `the port has ${limit} ${c2s ? 'rx' : 'tx'} queues${list[a.index] ? ', and the ring was added already' : ''}`);
    if (a.region >= this.regions.length) fail('Invalid region index', `region ${a.region}, ${this.regions.length} added`);
    if (a.log2RingSize < 1 || a.log2RingSize > MAX_LOG2_RING_SIZE) fail('Invalid ring size', `log2 size ${a.log2RingSize}`);
    const end = a.offset + MEMIF_RING_HDR_SIZE + (MEMIF_DESC_SIZE << a.log2RingSize);
    if (a.offset % 8 !== 0 || end > this.regions[a.region]!.size) fail('Ring outside its region', `offset ${a.offset}..${end} in region ${a.region} of ${this.regions[a.region]!.size} bytes`);
    list[a.index] = { region: a.region, offset: a.offset, log2: a.log2RingSize, fd };
  }

  // ---- both: link up, link down -----------------------------------------

  /** memif_connect: checks every ring, resets its indices, masks our rx interrupts, opens the queues. */
  private connected(): void {
    const u32 = this.heap.u32;
    const u16 = this.heap.u16;
    writeRegionTable(this.heap, this.regionTable, this.regions);
    const server = this.role === 'server';
    const open = (q: number, ring: RingInfo | undefined, rx: boolean): void => {
      if (!q || !ring) return;
      const at = this.regions[ring.region]!.base + ring.offset;
      if (u32[(at + MRING_COOKIE) >>> 2] !== MEMIF_COOKIE) throw new MemifError(this.name, 'Wrong ring', `no memif cookie at offset ${ring.offset} of region ${ring.region}`);
      Atomics.store(u16, (at + MRING_HEAD) >>> 1, 0);
      Atomics.store(u16, (at + MRING_TAIL) >>> 1, 0);
      if (rx) u16[(at + MRING_FLAGS) >>> 1] = MEMIF_RING_FLAG_MASK_INT; // we poll
      // A client posts its whole S2C ring at once (its descriptors hold bsize already), so the
      // server can send before the client's first rx burst.
      if (rx && !server && !this.cfg.zeroCopy) Atomics.store(u16, (at + MRING_HEAD) >>> 1, 1 << ring.log2);
      attachQueueRing(this.heap, q, at, ring.log2, this.cfg.bsize, ring.fd, rx ? 0 : (ring.bufs ?? 0));
    };
    this.rxq.forEach((q, i) => open(q, server ? this.c2s[i] : this.s2c[i], true));
    this.txq.forEach((q, i) => open(q, server ? this.s2c[i] : this.c2s[i], false));
    // Zero-copy: the whole S2C ring posted with fresh mbufs, so the server can send at once.
    if (this.cfg.zeroCopy) this.rxq.forEach((q, i) => q && u32[(q >>> 2) + MQ_W_RING] && memifOps(this.heap, this.mb, this.rxPools[i]!).refillZc(q, this.heap.lcore));
    this.up = true;
    this.connects++;
    memifLog(`${this.name}: connected (${this.role} id=${this.id} on ${this.socket.shown}, peer ${this.remote || 'unnamed'})`);
    this.timer = setInterval(() => this.checkFaults(), FAULT_CHECK_MS).unref();
  }

  private checkFaults(): void {
    for (const q of [...this.rxq, ...this.txq]) {
      if (q && this.heap.u32[(q >>> 2) + MQ_W_FAULT] !== 0) {
        memifLog(`${this.name}: a burst met a descriptor or ring index outside its region`);
        this.ch?.disconnect('Bad descriptor');
        return;
      }
    }
  }

  private channelClosed(_reason: string): void {
    this.ch = null;
    this.teardown();
    if (this.role === 'client' && this.started && !this.closed) this.timer = setTimeout(() => this.dial(), RECONNECT_MS).unref();
  }

  /** Zero-copy, once queue `q` is parked: every mbuf its slots hold (posted or sent, not yet consumed) goes back to its pool. */
  private returnMbufs(q: number): void {
    const u32 = this.heap.u32;
    const w = q >>> 2;
    const slots = this.heap.burstAt(u32[w + MQ_W_SLOTS]!, 1 << this.cfg.log2);
    this.mb.freeBulk(slots, slots.length); // empty slots hold 0, which freeBulk skips
    slots.fill(0);
    u32[w + MQ_W_HEAD] = 0;
    u32[w + MQ_W_LAST] = 0;
  }

  /**
   * memif_disconnect: link down; every queue parked (ring 0) and waited for,
   * then the windows unmapped and every region fd and eventfd closed. Copy
   * mode holds no mbufs in the rings; zero-copy gives back every mbuf its
   * slots hold, so the pools are full once the link is down.
   */
  private teardown(): void {
    clearInterval(this.timer);
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.up) this.disconnects++;
    this.up = false;
    const i32 = this.heap.i32;
    const blocks = [...this.rxq, ...this.txq].filter((q) => q !== 0);
    for (const q of blocks) Atomics.store(i32, (q >>> 2) + MQ_W_RING, 0);
    const deadline = Date.now() + BUSY_WAIT_MS;
    for (const q of blocks) {
      while (Atomics.load(i32, (q >>> 2) + MQ_W_BUSY) !== 0 && Date.now() < deadline);
      this.heap.u32[(q >>> 2) + MQ_W_INT_FD] = MQ_NO_FD;
    }
    writeRegionTable(this.heap, this.regionTable, []);
    if (this.cfg.zeroCopy) for (const q of blocks) this.returnMbufs(q);
    for (const ring of [...this.c2s, ...this.s2c]) if (ring) closeFd(ring.fd);
    this.c2s = [];
    this.s2c = [];
    for (const r of this.regions) {
      if (r.heap) continue; // the heap's own memfd: nothing mapped, the fd lives with the heap
      try {
        unmapWindow(this.heap.memory!, { offset: r.base, length: r.length });
      } catch {
        // Never mapped (the map failed after the region was recorded): nothing to undo.
      }
      closeFd(r.fd);
    }
    this.regions = [];
  }
}

export const netMemif: DriverSpec = {
  name: 'net_memif',
  keys: ['role', 'id', 'secret', 'socket', 'socket-abstract', 'rsize', 'bsize', 'mac', 'zero-copy'],
  create: (ctx) => new MemifDriver(ctx),
  memoryNeeded: (all) => {
    const args = new Map(all);
    const rsize = Number(args.get('rsize') ?? 10);
    const bsize = Number(args.get('bsize') ?? 2048);
    return windowBudget(Number.isInteger(rsize) && rsize >= 1 && rsize <= MAX_LOG2_RING_SIZE ? rsize : 10, Number.isInteger(bsize) && bsize >= 1 && bsize <= 0xffff ? bsize : 2048) + 65536;
  },
  openRxQueue: (heap, d) => new MemifRxQueue(heap, (d as MemifQueueDesc).q),
  openTxQueue: (heap, d) => new MemifTxQueue(heap, (d as MemifQueueDesc).q),
};
