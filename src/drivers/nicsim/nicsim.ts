/**
 * net_nicsim: a model NIC with Intel-style descriptor rings, so the
 * descriptor-ring half of a PMD (i40e's scalar path) runs here as it does on
 * hardware. Each queue has a ring of 16-byte descriptors in the shared heap
 * (nicsim.record.ts); the model's hardware, a thread of its own (hw.ts), sends what
 * a tx ring holds into the rx ring of the port at the cable's other end,
 * writes DD back only on descriptors with RS set, and drops (imissed) what
 * finds no rx descriptor ready.
 *
 * The driver side is i40e's scalar "simple" path, generalised to chains (one
 * descriptor per segment):
 * - tx: RS on every txRsThresh-th descriptor; when fewer than txFreeThresh
 *   descriptors are free, check DD at the next RS position and, if set, free
 *   that batch of txRsThresh segments (TxReclaim: tx_free_mode=single,
 *   bulk64 or bulkall, fast free with RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE).
 * - rx: every descriptor holds an mbuf; once the descriptor at the refill
 *   trigger is taken, rxFreeThresh new mbufs fill the block behind it in one
 *   allocBulk and the tail register moves (i40e's bulk-alloc receive).
 * Port stop takes the port from the hardware (waiting until the thread lets
 * go), then frees every mbuf left in its rings, as i40e_dev_clear_queues.
 *
 * Devargs: peer=NAME (the other end of the cable; default: the port that
 * names this one as its peer, else itself), hw_cpu=N (pin the hardware
 * thread), tx_free_mode=single|bulk64|bulkall (default bulk64, the i40e code
 * DPDK merged after the bulk-free study).
 */
import { allowedCpus } from '../../eal/affinity.js';
import { ArgError, NoMemError } from '../../errors.js';
import { intArg } from '../../ethdev/devargs.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, RxQueueConf, TxQueue, TxQueueConf } from '../../ethdev/driver.js';
import { TxOffload } from '../../ethdev/driver.js';
import { checkTxThresholds, txThresholds } from '../../ethdev/ethdev.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats.js';
import { parseTxFreeMode, TxReclaim, type TxFreeMode } from '../../ethdev/tx-reclaim.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { vdevMac } from '../mac.js';
import { HW_MAX_PORTS, HW_MAX_QUEUES, NicsimHw } from './hw.js';
import {
  NICRXQ_W_HEAD,
  NICRXQ_W_NB_DESC,
  NICRXQ_W_NEXT,
  NICRXQ_W_RING,
  NICRXQ_W_STATS,
  NICRXQ_W_TAIL,
  NICRXQ_W_TRIGGER,
  NICSIM_RX_DESC_SIZE,
  NICSIM_RX_QUEUE_SIZE,
  NICSIM_TX_DESC_SIZE,
  NICSIM_TX_QUEUE_SIZE,
  NICTXQ_S_LINK_DROPS,
  NICTXQ_S_RECLAIMS,
  NICTXQ_W_FREE_THRESH,
  NICTXQ_W_HEAD,
  NICTXQ_W_NB_DESC,
  NICTXQ_W_NB_FREE,
  NICTXQ_W_NEXT_DD,
  NICTXQ_W_NEXT_RS,
  NICTXQ_W_RING,
  NICTXQ_W_RS_THRESH,
  NICTXQ_W_SW_TAIL,
  NICTXQ_W_TAIL,
  RX_STATUS_DD,
  RXD_W_ADDR,
  RXD_W_BUF_LEN,
  RXD_W_LEN,
  RXD_W_STATUS,
  TX_CMD_EOP,
  TX_CMD_RS,
  TX_STATUS_DD,
  TXD_W_ADDR,
  TXD_W_ADDR_HI,
  TXD_W_LEN_CMD,
  TXD_W_STATUS,
} from './nicsim-layout.js';

/** i40e's ring limits: I40E_MIN_RING_DESC, I40E_MAX_RING_DESC, I40E_ALIGN_RING_DESC. */
export const NICSIM_MIN_DESC = 64;
export const NICSIM_MAX_DESC = 4096;
export const NICSIM_ALIGN_DESC = 32;
/** Descriptors per queue when the application asks for 0 (testpmd's default). */
export const NICSIM_DEFAULT_DESC = 1024;
/** i40e's I40E_DEFAULT_RX_FREE_THRESH and its bulk-alloc minimum, I40E_RX_MAX_BURST. */
export const NICSIM_DEFAULT_RX_FREE_THRESH = 32;
const RX_MAX_BURST = 32;
/** i40e's simple path sends at most this many packets between two looks at tx_free_thresh (CI_TX_MAX_BURST). */
const TX_MAX_BURST = 32;


interface NicsimRxDesc extends QueueDescriptor {
  driver: 'net_nicsim';
  port: number;
  /** Heap byte offsets of the queue block, the descriptor ring and the software ring (u32 handles). */
  block: number;
  ring: number;
  sw: number;
  nbDesc: number;
  rxFreeThresh: number;
  stats: number;
  pool: number;
}

interface NicsimTxDesc extends QueueDescriptor {
  driver: 'net_nicsim';
  block: number;
  ring: number;
  sw: number;
  nbDesc: number;
  txRsThresh: number;
  txFreeThresh: number;
  stats: number;
  mode: TxFreeMode;
  fastFree: boolean;
  /** Word index of the hardware's sleeping flag; the doorbell is the next word. */
  sleepWord: number;
}

class NicsimRxQueue implements RxQueue {
  private readonly mb: Mbufs;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly mp: Mempool;
  private readonly sw: Burst;
  /** Where a refill's new mbufs land before they go into the ring: in the heap, for the allocBulk kernel. */
  private readonly stage: Burst;
  private readonly b: number;
  private readonly ringW: number;

  constructor(
    heap: Heap,
    private readonly d: NicsimRxDesc,
  ) {
    this.mb = new Mbufs(heap);
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.mp = Mempool.attach(heap, { offset: d.pool });
    this.sw = heap.burstAt(d.sw, d.nbDesc);
    this.stage = heap.scratch('net_nicsim rx refill', d.rxFreeThresh);
    this.b = d.block >>> 2;
    this.ringW = d.ring >>> 2;
  }

  /** i40e's bulk-alloc receive: take descriptors with DD in order; refill a block at each trigger. */
  rxBurst(burst: Burst, n: number): number {
    const d = this.d;
    const mb = this.mb;
    const u32 = this.u32;
    const sw = this.sw;
    const nb = d.nbDesc;
    const thresh = d.rxFreeThresh;
    let next = u32[this.b + NICRXQ_W_NEXT]!;
    let trigger = u32[this.b + NICRXQ_W_TRIGGER]!;
    let got = 0;
    let bytes = 0;
    while (got < n) {
      const desc = this.ringW + (next << 2);
      if ((Atomics.load(u32, desc + RXD_W_STATUS) & RX_STATUS_DD) === 0) break;
      // The block behind the trigger is free once this packet is taken: get its mbufs first, or leave the packet.
      if (next === trigger && this.mp.allocBulk(this.stage, thresh) === 0) {
        this.f64[d.stats + RXQ_NOMBUF] += thresh;
        break;
      }
      const h = sw[next]!;
      sw[next] = 0;
      const len = u32[desc + RXD_W_LEN]!;
      mb.setDataLen(h, len);
      mb.setPktLen(h, len);
      mb.setPort(h, d.port);
      burst[got++] = h;
      bytes += len;
      if (next === trigger) {
        this.refill(trigger - thresh + 1, thresh);
        // The tail register: the hardware owns up to (not including) the trigger descriptor.
        Atomics.store(u32, this.b + NICRXQ_W_TAIL, trigger);
        trigger += thresh;
        if (trigger >= nb) trigger = thresh - 1;
      }
      next = next + 1 === nb ? 0 : next + 1;
    }
    u32[this.b + NICRXQ_W_NEXT] = next;
    u32[this.b + NICRXQ_W_TRIGGER] = trigger;
    if (got > 0) {
      this.f64[d.stats + RXQ_PACKETS] += got;
      this.f64[d.stats + RXQ_BYTES] += bytes;
    }
    return got;
  }

  /** Puts the staged mbufs into descriptors [from, from + n), each empty and ready for the hardware. */
  private refill(from: number, n: number): void {
    for (let k = 0; k < n; k++) {
      const h = this.stage[k]!;
      const i = from + k;
      this.sw[i] = h;
      writeRxDesc(this.mb, this.u32, this.ringW + (i << 2), h);
    }
  }

  descriptor(): NicsimRxDesc {
    return this.d;
  }
}

/** An empty rx descriptor for mbuf `h`: its data room, and a status the hardware has not written yet. */
function writeRxDesc(mb: Mbufs, u32: Uint32Array, desc: number, h: number): void {
  u32[desc + RXD_W_ADDR] = mb.mtod(h);
  u32[desc + RXD_W_BUF_LEN] = mb.bufLen(h) - mb.dataOff(h);
  u32[desc + RXD_W_LEN] = 0;
  u32[desc + RXD_W_STATUS] = 0;
}

class NicsimTxQueue implements TxQueue {
  private readonly mb: Mbufs;
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly sw: Burst;
  private readonly reclaim: TxReclaim;
  private readonly b: number;
  private readonly ringW: number;

  constructor(
    heap: Heap,
    private readonly d: NicsimTxDesc,
  ) {
    this.mb = new Mbufs(heap);
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.f64 = heap.f64;
    this.sw = heap.burstAt(d.sw, d.nbDesc);
    this.reclaim = new TxReclaim(heap, d.mode, d.fastFree);
    this.b = d.block >>> 2;
    this.ringW = d.ring >>> 2;
  }

  /**
   * i40e's simple transmit, chains included: per chunk of 32 packets, first
   * reclaim one batch if fewer than txFreeThresh descriptors are free, then
   * post whole packets while their segments fit; the tail register moves
   * once per burst. @returns packets taken; the caller keeps the rest.
   */
  txBurst(burst: Burst, n: number): number {
    const d = this.d;
    const mb = this.mb;
    const u32 = this.u32;
    const b = this.b;
    const nb = d.nbDesc;
    const rs = d.txRsThresh;
    let tail = u32[b + NICTXQ_W_SW_TAIL]!;
    let nbFree = u32[b + NICTXQ_W_NB_FREE]!;
    let nextRs = u32[b + NICTXQ_W_NEXT_RS]!;
    let sent = 0;
    let bytes = 0;
    let full = false;
    while (sent < n && !full) {
      if (nbFree < d.txFreeThresh) nbFree += this.freeBufs();
      const end = n - sent > TX_MAX_BURST ? sent + TX_MAX_BURST : n;
      for (; sent < end; sent++) {
        const h = burst[sent]!;
        const segs = mb.nbSegs(h);
        if (segs > nbFree) {
          full = true;
          break;
        }
        for (let s = h; s !== 0; s = mb.next(s)) {
          const desc = this.ringW + (tail << 2);
          let cmd = mb.next(s) === 0 ? TX_CMD_EOP : 0;
          if (tail === nextRs) {
            cmd |= TX_CMD_RS;
            nextRs += rs;
            if (nextRs >= nb) nextRs = rs - 1;
          }
          u32[desc + TXD_W_ADDR] = mb.mtod(s);
          u32[desc + TXD_W_ADDR_HI] = 0;
          u32[desc + TXD_W_LEN_CMD] = mb.dataLen(s) | (cmd << 16);
          u32[desc + TXD_W_STATUS] = 0;
          this.sw[tail] = s;
          tail = tail + 1 === nb ? 0 : tail + 1;
        }
        nbFree -= segs;
        bytes += mb.pktLen(h);
      }
    }
    u32[b + NICTXQ_W_SW_TAIL] = tail;
    u32[b + NICTXQ_W_NB_FREE] = nbFree;
    u32[b + NICTXQ_W_NEXT_RS] = nextRs;
    if (sent === 0) return 0;
    // The doorbell: descriptors written above are visible to the hardware once it reads this tail.
    Atomics.store(u32, b + NICTXQ_W_TAIL, tail);
    if (Atomics.load(this.i32, d.sleepWord) !== 0) {
      Atomics.add(this.i32, d.sleepWord + 1, 1);
      Atomics.notify(this.i32, d.sleepWord + 1);
    }
    this.f64[d.stats + TXQ_PACKETS] += sent;
    this.f64[d.stats + TXQ_BYTES] += bytes;
    return sent;
  }

  /** i40e_tx_free_bufs: if the hardware wrote DD at the next RS position, free that batch. @returns descriptors freed (0 or txRsThresh). */
  private freeBufs(): number {
    const b = this.b;
    const rs = this.d.txRsThresh;
    const nextDd = this.u32[b + NICTXQ_W_NEXT_DD]!;
    if ((Atomics.load(this.u32, this.ringW + (nextDd << 2) + TXD_W_STATUS) & TX_STATUS_DD) === 0) return 0;
    this.reclaim.segments(this.sw, nextDd - (rs - 1), rs);
    this.u32[b + NICTXQ_W_NEXT_DD] = nextDd + rs >= this.d.nbDesc ? rs - 1 : nextDd + rs;
    this.f64[(b >>> 1) + NICTXQ_S_RECLAIMS]++;
    return rs;
  }

  descriptor(): NicsimTxDesc {
    return this.d;
  }
}

/** Nicsim ports by device name, per heap: where `peer=NAME` is looked up. */
const registry = new WeakMap<Heap, Map<string, NicsimDriver>>();
let warnedNoAffinity = false;

class NicsimDriver implements EthDriver {
  readonly peerName: string | undefined;
  private readonly mode: TxFreeMode;
  private readonly hw: NicsimHw;
  private readonly mac: Uint8Array;
  private rxq: (NicsimRxDesc | undefined)[] = [];
  private txq: (NicsimTxDesc | undefined)[] = [];
  private started = false;

  constructor(private readonly ctx: DriverContext) {
    const dev = ctx.name;
    if (ctx.portId >= HW_MAX_PORTS) throw new ArgError(`${dev}: port ${ctx.portId}: the model serves ports 0..${HW_MAX_PORTS - 1}`);
    this.peerName = ctx.args.get('peer');
    if (this.peerName === '') throw new ArgError(`${dev}: peer=: expected a device name, e.g. peer=net_nicsim1`);
    this.mode = parseTxFreeMode(dev, ctx.args.get('tx_free_mode'));
    this.hw = NicsimHw.of(ctx.heap);
    if (ctx.args.has('hw_cpu')) {
      const cpu = intArg(dev, ctx.args, 'hw_cpu', 0, 0, 1023);
      const allowed = allowedCpus();
      if (allowed && !allowed.includes(cpu)) throw new ArgError(`${dev}: hw_cpu=${cpu}: this process may only use CPUs ${allowed.join(',')}`);
      if (!allowed && !warnedNoAffinity) {
        warnedNoAffinity = true;
        process.emitWarning(`${dev}: hw_cpu=${cpu}: the model's hardware thread floats (no CPU affinity without the native shim)`, 'NicsimWarning');
      }
      this.hw.setCpu(dev, cpu);
    }
    let ports = registry.get(ctx.heap);
    if (!ports) registry.set(ctx.heap, (ports = new Map()));
    ports.set(dev, this);
    this.mac = vdevMac(dev);
  }

  info(): DevInfo {
    const lim = { min: NICSIM_MIN_DESC, max: NICSIM_MAX_DESC, align: NICSIM_ALIGN_DESC };
    return { driverName: 'net_nicsim', maxRxQueues: HW_MAX_QUEUES, maxTxQueues: HW_MAX_QUEUES, rxDescLim: lim, txDescLim: lim, defaultRxDesc: NICSIM_DEFAULT_DESC, defaultTxDesc: NICSIM_DEFAULT_DESC };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(nbRxq: number, nbTxq: number): void {
    this.rxq = new Array<NicsimRxDesc | undefined>(nbRxq).fill(undefined);
    this.txq = new Array<NicsimTxDesc | undefined>(nbTxq).fill(undefined);
  }

  rxQueueSetup(q: number, nbDesc: number, pool: Mempool, conf: RxQueueConf, stats: number): RxQueue {
    const where = `${this.ctx.name} (port ${this.ctx.portId}) rxq ${q}`;
    const free = conf.rxFreeThresh || NICSIM_DEFAULT_RX_FREE_THRESH;
    checkRxThresholds(where, nbDesc, free);
    const room = pool.bufLen - pool.headroom;
    if (room < 64) throw new ArgError(`${where}: the pool's ${room}-byte data room cannot hold a 64-byte frame`);
    const heap = this.ctx.heap;
    const d: NicsimRxDesc = {
      driver: 'net_nicsim',
      port: this.ctx.portId,
      block: heap.reserve(NICSIM_RX_QUEUE_SIZE, 64, `${where} block`),
      ring: heap.reserve(nbDesc * NICSIM_RX_DESC_SIZE, 128, `${where} ring of ${nbDesc} descriptors`),
      sw: heap.reserve(nbDesc * 4, 64, `${where} software ring`),
      nbDesc,
      rxFreeThresh: free,
      stats,
      pool: pool.offset,
    };
    const u32 = heap.u32;
    const b = d.block >>> 2;
    u32[b + NICRXQ_W_RING] = d.ring;
    u32[b + NICRXQ_W_NB_DESC] = nbDesc;
    u32[b + NICRXQ_W_STATS] = stats * 8;
    this.rxq[q] = d;
    return new NicsimRxQueue(heap, d);
  }

  txQueueSetup(q: number, nbDesc: number, conf: TxQueueConf, stats: number): TxQueue {
    const where = `${this.ctx.name} (port ${this.ctx.portId}) txq ${q}`;
    const { rs, free } = checkNicsimTxThresholds(where, nbDesc, conf);
    const heap = this.ctx.heap;
    const d: NicsimTxDesc = {
      driver: 'net_nicsim',
      block: heap.reserve(NICSIM_TX_QUEUE_SIZE, 64, `${where} block`),
      ring: heap.reserve(nbDesc * NICSIM_TX_DESC_SIZE, 128, `${where} ring of ${nbDesc} descriptors`),
      sw: heap.reserve(nbDesc * 4, 64, `${where} software ring`),
      nbDesc,
      txRsThresh: rs,
      txFreeThresh: free,
      stats,
      mode: this.mode,
      fastFree: ((conf.offloads ?? 0) & TxOffload.MBUF_FAST_FREE) !== 0,
      sleepWord: this.hw.sleepWord,
    };
    const u32 = heap.u32;
    const b = d.block >>> 2;
    u32[b + NICTXQ_W_RING] = d.ring;
    u32[b + NICTXQ_W_NB_DESC] = nbDesc;
    u32[b + NICTXQ_W_RS_THRESH] = rs;
    u32[b + NICTXQ_W_FREE_THRESH] = free;
    this.txq[q] = d;
    return new NicsimTxQueue(heap, d);
  }

  /** Fills every rx descriptor with an mbuf, resets the tx rings, and hands the port to the hardware. */
  start(): void {
    const peer = this.peerPort();
    const heap = this.ctx.heap;
    const mb = new Mbufs(heap);
    const u32 = heap.u32;
    try {
      for (const [q, d] of this.rxq.entries()) {
        if (!d) continue;
        const sw = heap.burstAt(d.sw, d.nbDesc);
        const mp = Mempool.attach(heap, { offset: d.pool });
        if (mp.allocBulk(sw, d.nbDesc) === 0) {
          throw new NoMemError(`${this.ctx.name} (port ${this.ctx.portId}) rxq ${q}: the pool has fewer than ${d.nbDesc} free mbufs to fill its descriptors`);
        }
        for (let i = 0; i < d.nbDesc; i++) writeRxDesc(mb, u32, (d.ring >>> 2) + (i << 2), sw[i]!);
        const b = d.block >>> 2;
        u32[b + NICRXQ_W_HEAD] = 0;
        u32[b + NICRXQ_W_NEXT] = 0;
        u32[b + NICRXQ_W_TRIGGER] = d.rxFreeThresh - 1;
        // One descriptor stays out of the hardware's reach, so a full ring is not an empty one.
        Atomics.store(u32, b + NICRXQ_W_TAIL, d.nbDesc - 1);
      }
      for (const d of this.txq) {
        if (!d) continue;
        u32.fill(0, d.ring >>> 2, (d.ring >>> 2) + d.nbDesc * 4);
        const b = d.block >>> 2;
        u32[b + NICTXQ_W_SW_TAIL] = 0;
        // As i40e: one descriptor never used, or a full ring (tail == head) would look empty to the hardware.
        u32[b + NICTXQ_W_NB_FREE] = d.nbDesc - 1;
        u32[b + NICTXQ_W_NEXT_DD] = d.txRsThresh - 1;
        u32[b + NICTXQ_W_NEXT_RS] = d.txRsThresh - 1;
        u32[b + NICTXQ_W_HEAD] = 0;
        Atomics.store(u32, b + NICTXQ_W_TAIL, 0);
      }
    } catch (e) {
      this.releaseRings();
      throw e;
    }
    this.hw.attach(this.ctx.portId, { peer, txq: this.txq.map((d) => d?.block ?? 0), rxq: this.rxq.map((d) => d?.block ?? 0) });
    this.started = true;
  }

  /** Takes the port from the hardware, then frees what its rings hold. */
  stop(): void {
    if (!this.started) return;
    this.started = false;
    try {
      this.hw.detach(this.ctx.portId);
    } finally {
      this.releaseRings();
    }
  }

  close(): void {
    this.stop();
    registry.get(this.ctx.heap)?.delete(this.ctx.name);
  }

  /** The mbufs the rings hold go back: rx buffers never filled, tx segments sent or not (i40e_*_queue_release_mbufs). */
  private releaseRings(): void {
    const heap = this.ctx.heap;
    const mb = new Mbufs(heap);
    for (const d of [...this.rxq, ...this.txq]) {
      if (!d) continue;
      const sw = heap.burstAt(d.sw, d.nbDesc);
      for (let i = 0; i < sw.length; i++) {
        if (sw[i] !== 0) mb.freeSeg(sw[i]!);
      }
      sw.fill(0);
    }
  }

  /** The ethdev port at the cable's other end. */
  private peerPort(): number {
    const ports = registry.get(this.ctx.heap)!;
    const dev = this.ctx.name;
    if (this.peerName !== undefined) {
      const p = ports.get(this.peerName);
      if (!p) throw new ArgError(`${dev}: peer=${this.peerName}: no net_nicsim port of that name (ports: ${[...ports.keys()].join(', ')})`);
      if (p.peerName !== undefined && p.peerName !== dev && p !== this) {
        throw new ArgError(`${dev}: peer=${this.peerName}, but ${this.peerName} names peer=${p.peerName}: a cable has two ends`);
      }
      return p.ctx.portId;
    }
    for (const p of ports.values()) if (p.peerName === dev) return p.ctx.portId;
    return this.ctx.portId;
  }

  linkUp(): boolean {
    return true;
  }

  linkSpeed(): number {
    return 40_000;
  }

  xstats(): Record<string, number> {
    const f64 = this.ctx.heap.f64;
    const x: Record<string, number> = {};
    this.txq.forEach((d, q) => {
      if (!d) return;
      x[`tx_q${q}_reclaims`] = f64[(d.block >>> 3) + NICTXQ_S_RECLAIMS]!;
      x[`tx_q${q}_link_down_drops`] = f64[(d.block >>> 3) + NICTXQ_S_LINK_DROPS]!;
    });
    return x;
  }
}

/**
 * i40e's rx setup rules and its bulk-alloc preconditions. Where DPDK would
 * quietly fall back to the one-by-one receive path, which the model does not
 * have, this is an error instead.
 */
export function checkRxThresholds(where: string, nbDesc: number, free: number): void {
  if (nbDesc <= 2 * free) throw new ArgError(`${where}: rx_free_thresh=${free}: nb_desc=${nbDesc} must be more than 2 × rx_free_thresh`);
  if (free < RX_MAX_BURST) throw new ArgError(`${where}: rx_free_thresh=${free} must be at least ${RX_MAX_BURST} (bulk refill)`);
  if (nbDesc % free !== 0) throw new ArgError(`${where}: rx_free_thresh=${free} must be a divisor of nb_desc=${nbDesc} (bulk refill)`);
}

/** DPDK's tx rules (ethdev's checkTxThresholds) plus i40e's: tx_rs_thresh a power of 2. @returns the thresholds in effect. */
export function checkNicsimTxThresholds(where: string, nbDesc: number, conf: TxQueueConf): { rs: number; free: number } {
  const t = txThresholds(nbDesc, conf);
  checkTxThresholds(where, nbDesc, { txRsThresh: t.rs, txFreeThresh: t.free });
  if ((t.rs & (t.rs - 1)) !== 0) throw new ArgError(`${where}: tx_rs_thresh=${t.rs} must be a power of 2`);
  return t;
}

export const netNicsim: DriverSpec = {
  name: 'net_nicsim',
  keys: ['peer', 'hw_cpu', 'tx_free_mode'],
  create: (ctx) => new NicsimDriver(ctx),
  memoryNeeded: () => HW_MAX_QUEUES * (NICSIM_MAX_DESC * (NICSIM_TX_DESC_SIZE + NICSIM_RX_DESC_SIZE + 8) + NICSIM_TX_QUEUE_SIZE + NICSIM_RX_QUEUE_SIZE + 512),
  openRxQueue: (heap, d) => new NicsimRxQueue(heap, d as NicsimRxDesc),
  openTxQueue: (heap, d) => new NicsimTxQueue(heap, d as NicsimTxDesc),
};
