/**
 * One AF_PACKET socket as a queue pair: its TPACKET_V2 rx and tx rings mapped
 * into a window of the heap, a queue block over each (af-packet.record.ts),
 * and the rx and tx queues that walk them with the af-packet kernels. The
 * unit both net_af_packet (qpairs of them on one interface) and net_pcap's
 * live interfaces (one per rx_iface / tx_iface) are made of.
 *
 * Queues reopen in a worker from `{ driver: 'net_af_packet', q }`: whichever
 * driver made the pair, net_af_packet's spec reopens its queues.
 */
import type { QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import type { Burst, Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import { mapWindow, pageSize, unmapWindow } from '../../native/memory.js';
import { packetKicker, packetOpen, type PacketRing } from '../../native/packet.js';
import { closeFd } from '../../native/watch.js';
import { ArgError } from '../../errors.js';
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

/** TPACKET_ALIGNMENT: frame sizes and the rx data offset are multiples of it. */
export const TPACKET_ALIGN = 16;
/**
 * Where the kernel puts a received frame's Ethernet header: tp_mac =
 * TPACKET_ALIGN(TPACKET2_HDRLEN + 16) - 14 (net/packet/af_packet.c), so the
 * network header lands aligned.
 */
export const RX_MAC_OFFSET = Math.ceil((TPACKET2_HDRLEN + 16) / TPACKET_ALIGN) * TPACKET_ALIGN - 14;

/** How a pair's rings are cut (the same for rx and tx), and the bytes they map. */
export interface RingGeometry {
  blockSize: number;
  blockCount: number;
  frameSize: number;
  frameCount: number;
  /** Both rings: what the socket maps. */
  mapLength: number;
}

/** A queue reopens in a worker from its block alone. */
export interface AfPacketQueueDesc extends QueueDescriptor {
  driver: 'net_af_packet';
  /** Heap offset of the queue's block (af-packet.record.ts). */
  q: number;
}

export class AfPacketRxQueue implements RxQueue {
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
    return this.ops.rx(this.q, this.lc, burst.heapOffset, n);
  }

  descriptor(): AfPacketQueueDesc {
    return { driver: 'net_af_packet', q: this.q };
  }
}

export class AfPacketTxQueue implements TxQueue {
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
    const taken = this.ops.tx(this.q, this.lc, burst.heapOffset, n);
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

/** One packet socket on an interface, its rings in the heap, and a queue block over each ring. */
export class PacketQueuePair {
  private constructor(
    private readonly heap: Heap,
    private readonly dev: string,
    private readonly g: RingGeometry,
    /** -1 once closed. */
    public fd: number,
    private readonly window: number,
    readonly rxBlock: number,
    readonly txBlock: number,
  ) {}

  /**
   * Opens a socket on `iface` with rings cut as `g`, maps them into the heap
   * and makes their queue blocks for port `portId`.
   * @throws CapabilityError without CAP_NET_RAW; NativeError naming the step; ArgError when the heap cannot hold a mapping.
   */
  static open(heap: Heap, dev: string, portId: number, iface: string, g: RingGeometry, opts: Omit<PacketRing, keyof RingGeometry>): PacketQueuePair {
    if (!heap.memory) throw new ArgError(`${dev}: the heap is not a WebAssembly.Memory, so no ring can be mapped into it`);
    const s = packetOpen(dev, iface, { ...g, ...opts });
    try {
      const window = heap.reserve(g.mapLength, pageSize(), `${dev} rings on ${iface}`);
      mapWindow(heap.memory, { offset: window, length: g.mapLength, fd: s.fd });
      const rx = ringBlock(heap, dev, portId, g, window, s.fd, 0);
      const tx = ringBlock(heap, dev, portId, g, window + g.mapLength / 2, s.fd, AFP_TX_DATA);
      return new PacketQueuePair(heap, dev, g, s.fd, window, rx, tx);
    } catch (e) {
      closeFd(s.fd);
      throw e;
    }
  }

  /** The rx queue over this pair's rx ring, filling mbufs from `pool` and counting into the stats block at `stats`. */
  rxQueue(pool: Mempool, stats: number): RxQueue {
    const room = pool.bufLen - pool.headroom;
    const largest = this.g.frameSize - RX_MAC_OFFSET;
    if (Math.ceil(largest / room) > AFPQ_MAX_SEGS) {
      throw new ArgError(`${this.dev}: framesz=${this.g.frameSize} needs up to ${Math.ceil(largest / room)} mbufs of the pool's ${room}-byte data room; at most ${AFPQ_MAX_SEGS}`);
    }
    const w = this.rxBlock >>> 2;
    this.heap.u32[w + AFPQ_W_POOL] = pool.offset;
    this.heap.u32[w + AFPQ_W_STATS] = stats * 8;
    return new AfPacketRxQueue(this.heap, this.rxBlock);
  }

  /** The tx queue over this pair's tx ring, counting into the stats block at `stats`. */
  txQueue(stats: number): TxQueue {
    this.heap.u32[(this.txBlock >>> 2) + AFPQ_W_STATS] = stats * 8;
    return new AfPacketTxQueue(this.heap, this.txBlock);
  }

  /** Unmaps the rings and closes the socket; a second call does nothing. */
  close(): void {
    if (this.fd < 0) return;
    if (this.heap.memory) unmapWindow(this.heap.memory, { offset: this.window, length: this.g.mapLength });
    closeFd(this.fd);
    this.fd = -1;
  }
}

/**
 * A queue block over the ring at heap offset `ring` and its frame table,
 * made once per ring so the walk's position survives a queue's setup again.
 */
function ringBlock(heap: Heap, dev: string, portId: number, g: RingGeometry, ring: number, fd: number, dataOff: number): number {
  const q = heap.reserve(AF_PACKET_QUEUE_SIZE, 64, `${dev} queue`);
  const table = heap.reserve(g.frameCount * 4, 64, `${dev} frame table`);
  const perBlock = Math.floor(g.blockSize / g.frameSize);
  for (let i = 0; i < g.frameCount; i++) {
    heap.u32[(table >>> 2) + i] = ring + Math.floor(i / perBlock) * g.blockSize + (i % perBlock) * g.frameSize;
  }
  const w = q >>> 2;
  heap.u32[w + AFPQ_W_FRAMES] = table;
  heap.u32[w + AFPQ_W_COUNT] = g.frameCount;
  heap.u32[w + AFPQ_W_FD] = fd;
  heap.u32[w + AFPQ_W_FRAME_CAP] = g.frameSize - dataOff;
  heap.u32[w + AFPQ_W_PORT] = portId;
  return q;
}

/** Heap bytes one pair with geometry `g` needs: the rings (page-aligned) and both queue blocks with their frame tables. */
export function pairMemory(g: RingGeometry, page: number): number {
  return g.mapLength + page + 2 * (64 + AF_PACKET_QUEUE_SIZE + g.frameCount * 4 + 64);
}
