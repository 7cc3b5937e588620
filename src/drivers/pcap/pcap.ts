/**
 * net_pcap: ports that receive from capture files and transmit into them,
 * with DPDK's devargs. Each `rx_pcap=FILE` is one rx queue, each
 * `tx_pcap=FILE` one tx queue (queues beyond the files receive nothing or
 * drop). `infinite_rx=1` loads each rx file into memory at setup and replays
 * it forever, as DPDK does; otherwise files stream through a window and the
 * end of every rx file is the end of the stream (`rxEnded()`).
 *
 * A received packet larger than one mbuf becomes a chain; a streamed packet
 * carries its capture timestamp (RX_TIMESTAMP), a replayed one none, as in
 * DPDK (its infinite_rx copies bytes, lengths and port only). Transmitted
 * packets are gathered from their segments into records stamped with their
 * rx timestamp when they have one (so a capture streamed through keeps its
 * timing), else with the time of sending.
 *
 * Everything a queue keeps between bursts — reader position, section state,
 * the replay cursor, the tx record buffer — lives in the shared heap, so a
 * queue re-opened by another lcore carries on, and the main thread flushes
 * the tx buffers when the port stops.
 *
 * A capture cut short in its last record is read as DPDK reads it: the
 * good records are received, the cut one counts as one rx error (ierrors)
 * and is named once on stderr, and the file ends there. A file that cannot
 * be opened, or is no capture, is a bad devarg at probe.
 *
 * Live interfaces (iface=, rx_iface=, rx_iface_in=, tx_iface=, phy_mac=) are
 * DPDK's devargs over net_af_packet's rings: live.ts.
 *
 * dpkit's own devargs: tx_format=pcap|pcapng, tx_tsresol=ns|us (pcap files
 * default to nanoseconds); skip_truncated=1 is accepted for older command
 * lines (it is what every capture gets now).
 *
 * The folder: pcap.ts (this: the driver, the queues), pcap.record.ts (a
 * replaying queue's block and its table), pcap.as.ts (the replay, one wasm
 * call per burst) and pcap.twin.ts (its twin, and the choice between them).
 */
import { closeSync, openSync } from 'node:fs';
import { ArgError } from '../../errors.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, QueueDescriptor, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg } from '../../ethdev/devargs.js';
import { RXQ_BYTES, RXQ_ERRORS, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_PACKETS } from '../../ethdev/stats.js';
import { nowNs } from '../../eal/clock.js';
import { alignUp, CACHE_LINE, type Burst, type Heap } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { OlFlags } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { MAX_CAPLEN, osReason, PcapError, type PcapFormat, type TsResolution } from '../../pcap/format.js';
import { PcapReader, READER_STATE_WORDS, READER_WINDOW, readerEnded, type ReaderOptions } from '../../pcap/reader.js';
import { storeNs, unitsToTs, type Timestamp } from '../../pcap/time.js';
import { PcapWriter, WRITER_BUFFER } from '../../pcap/writer.js';
import { vdevMac } from '../mac.js';
import {
  PCAP_REPLAY_ENTRY_SIZE,
  PCAP_REPLAY_SIZE,
  REPLAY_ENTRY_W_CAPLEN,
  REPLAY_ENTRY_W_DATA,
  REPLAY_W_COUNT,
  REPLAY_W_CURSOR,
  REPLAY_W_PORT,
  REPLAY_W_ROOM,
  REPLAY_W_STATS,
  REPLAY_W_TABLE,
} from './pcap-layout.js';
import { pcapOps, type PcapOps } from './pcap.twin.js';
import { LIVE_KEYS, LiveInterfaces, liveMemoryNeeded, liveSources } from './live.js';


interface PcapRxDesc extends QueueDescriptor {
  driver: 'net_pcap';
  /** The device's name, for the line that names a cut record. */
  dev: string;
  port: number;
  stats: number;
  pool: number;
  /** The capture this queue reads; null for a queue that receives nothing. */
  file: string | null;
  /** Streaming: the reader's window (bytes) and state (f64 index). */
  window: number;
  state: number;
  /** Replay (infinite_rx): heap offset of the queue's replay block (pcap.record.ts); 0 when streaming. */
  replay: number;
}

interface PcapTxDesc extends QueueDescriptor {
  driver: 'net_pcap';
  port: number;
  stats: number;
  file: string | null;
  fd: number;
  format: PcapFormat;
  resolution: TsResolution;
  buffer: number;
  /** f64 index of the writer's fill word. */
  state: number;
}

/** Fills mbufs from capture records: one packet per mbuf, chains for larger ones. */
class PcapRxQueue implements RxQueue {
  private readonly mp: Mempool;
  private readonly mb: Mbufs;
  private readonly u8: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly reader: PcapReader | null = null;
  private readonly seg: Burst;
  private readonly room: number;
  /** The replay kernel or its twin, chosen once. */
  private readonly ops: PcapOps;
  private readonly lc: number;
  /** A timestamp's two u32 words on their way into an mbuf. */
  private readonly tsWords = new Uint32Array(2);

  constructor(
    readonly heap: Heap,
    private readonly d: PcapRxDesc,
  ) {
    this.mp = Mempool.attach(heap, { offset: d.pool });
    this.mb = new Mbufs(heap);
    this.u8 = heap.u8;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.seg = heap.burst(1);
    this.room = this.mp.bufLen - this.mp.headroom;
    this.ops = pcapOps(heap, this.mb, this.mp);
    this.lc = heap.lcore;
    if (d.file !== null && d.replay === 0) {
      this.reader = new PcapReader(d.file, {
        window: heap.u8.subarray(d.window, d.window + READER_WINDOW),
        state: heap.f64.subarray(d.state, d.state + READER_STATE_WORDS),
        skipTruncated: true,
        onWarning: (m) => cutRecord(d.dev, m, this.f64, d.stats),
        onCutToSnaplen: (_, m) => process.stderr.write(`${d.dev}: rx_pcap=${m}\n`),
      });
    }
  }

  rxBurst(burst: Burst, n: number): number {
    const d = this.d;
    if (d.file === null || n === 0) return 0;
    const r = this.reader;
    if (r !== null && r.ended) return 0;
    if (this.mp.allocBulk(burst, n) === 0) {
      this.f64[d.stats + RXQ_NOMBUF] += n;
      return 0;
    }
    let got = 0;
    if (r !== null) {
      // Streaming: one record per mbuf until the file ends.
      let bytes = 0;
      const base = d.window;
      try {
        while (got < n && r.next()) {
          if (this.fill(burst[got]!, base + r.dataOff, r.caplen)) {
            this.stamp(burst[got]!, r.sec, r.nsec);
            bytes += r.caplen;
            got++;
          }
        }
      } catch (e) {
        // A malformed record: the burst goes back to the pool before the error goes up.
        this.mb.freeBulk(burst, n);
        throw e;
      }
      this.f64[d.stats + RXQ_PACKETS] += got;
      this.f64[d.stats + RXQ_BYTES] += bytes;
    } else {
      // Replay: the kernel (or twin) fills up to a packet that needs a chain; TypeScript builds that one, then the kernel goes on.
      for (let tries = 0; got < n && tries < n; tries++) {
        got += this.ops.replay(d.replay, this.lc, burst.heapOffset + got * 4, n - got);
        if (got < n) got += this.replayChain(burst, got);
      }
    }
    if (got < n) this.mb.freeBulk(burst, n - got, got);
    return got;
  }

  /**
   * Replays the packet at the cursor into `burst[at]`, as a chain (the
   * kernel stops before one), moves the cursor and counts it.
   * @returns 1, or 0 when the pool had no mbufs for the chain (the packet is skipped).
   */
  private replayChain(burst: Burst, at: number): number {
    const d = this.d;
    const u32 = this.u32;
    const w = d.replay >>> 2;
    const cursor = u32[w + REPLAY_W_CURSOR]!;
    const t = (u32[w + REPLAY_W_TABLE]! >>> 2) + cursor * (PCAP_REPLAY_ENTRY_SIZE >>> 2);
    const len = u32[t + REPLAY_ENTRY_W_CAPLEN]!;
    const got = this.fill(burst[at]!, u32[t + REPLAY_ENTRY_W_DATA]!, len) ? 1 : 0;
    u32[w + REPLAY_W_CURSOR] = cursor + 1 === u32[w + REPLAY_W_COUNT] ? 0 : cursor + 1;
    this.f64[d.stats + RXQ_PACKETS] += got;
    this.f64[d.stats + RXQ_BYTES] += got * len;
    return got;
  }

  /**
   * Copies `len` bytes at heap offset `src` into mbuf `h` (freshly allocated),
   * chaining more mbufs when they do not fit. @returns false when the pool ran
   * dry for a chain: the packet is dropped (counted as no-mbuf) and `h` stays free to reuse.
   */
  private fill(h: number, src: number, len: number): boolean {
    const mb = this.mb;
    const room = this.room;
    let first = len < room ? len : room;
    this.u8.copyWithin(mb.mtod(h), src, src + first);
    mb.setDataLen(h, first);
    mb.setPktLen(h, first);
    mb.setPort(h, this.d.port);
    for (let done = first; done < len; done += first) {
      if (this.mp.allocBulk(this.seg, 1) === 0) {
        // Drop the packet, as DPDK's pcap rx does (err_mbuf): free the segments added, reuse `h`.
        const tail = mb.next(h);
        if (tail !== 0) mb.free(tail);
        mb.reset(h);
        this.f64[this.d.stats + RXQ_NOMBUF]++;
        return false;
      }
      const s = this.seg[0]!;
      first = len - done < room ? len - done : room;
      this.u8.copyWithin(mb.mtod(s), src + done, src + done + first);
      mb.setDataLen(s, first);
      mb.setPktLen(s, first);
      mb.chain(h, s); // cannot pass 65535 segments: MAX_CAPLEN / 64-byte rooms is 4096
    }
    return true;
  }

  /** A streamed packet's capture timestamp into mbuf `h` (RX_TIMESTAMP). */
  private stamp(h: number, sec: number, nsec: number): void {
    const mb = this.mb;
    storeNs(this.tsWords, 0, sec, nsec);
    mb.setTimestamp(h, this.tsWords[0]!, this.tsWords[1]!);
    mb.setOlFlags(h, mb.olFlags(h) | OlFlags.RX_TIMESTAMP);
  }

  /** Closes this handle's file (each lcore that opens the queue has its own). */
  release(): void {
    this.reader?.close();
  }

  descriptor(): PcapRxDesc {
    return this.d;
  }
}

/** Writes each sent packet as one capture record, then frees it. */
class PcapTxQueue implements TxQueue {
  private readonly mb: Mbufs;
  private readonly u8: Uint8Array;
  private readonly f64: Float64Array;
  private readonly writer: PcapWriter | null;
  private readonly ts: Timestamp = { sec: 0, nsec: 0 };
  /** The wall clock when the queue opened (seconds, nanoseconds) and CLOCK_MONOTONIC then: a sending time is those plus nowNs() since, read without allocating. */
  private readonly wall0Sec: number;
  private readonly wall0Nsec: number;
  private readonly mono0: number;

  constructor(
    readonly heap: Heap,
    private readonly d: PcapTxDesc,
    writer?: PcapWriter,
  ) {
    const wall = performance.timeOrigin + performance.now();
    this.mono0 = nowNs();
    this.wall0Sec = Math.floor(wall / 1000);
    this.wall0Nsec = Math.floor((wall - this.wall0Sec * 1000) * 1e6);
    this.mb = new Mbufs(heap);
    this.u8 = heap.u8;
    this.f64 = heap.f64;
    this.writer =
      writer ??
      (d.file === null
        ? null
        : new PcapWriter(d.file, d.fd, { format: d.format, resolution: d.resolution, buffer: heap.u8.subarray(d.buffer, d.buffer + WRITER_BUFFER), state: heap.f64.subarray(d.state, d.state + 1) }));
  }

  txBurst(burst: Burst, n: number): number {
    const d = this.d;
    const w = this.writer;
    let bytes = 0;
    if (w !== null && n > 0) {
      const mb = this.mb;
      // The sending time, read once per burst and only when a packet has no rx timestamp
      // (a replayed one has none): nowNs() allocates nothing with the native shim, where
      // performance.now() makes a heap number a reading on Node 20.
      let nowSec = -1;
      let nowNsec = 0;
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const len = mb.pktLen(h);
        const caplen = len < MAX_CAPLEN ? len : MAX_CAPLEN;
        let sec: number;
        let nsec: number;
        if ((mb.olFlags(h) & OlFlags.RX_TIMESTAMP) !== 0) {
          unitsToTs(mb.timestampHi(h), mb.timestampLo(h), 1e9, this.ts);
          sec = this.ts.sec;
          nsec = this.ts.nsec;
        } else {
          if (nowSec < 0) {
            const t = this.wall0Nsec + (nowNs() - this.mono0);
            const s = Math.floor(t / 1e9);
            nowSec = this.wall0Sec + s;
            nowNsec = Math.floor(t - s * 1e9);
          }
          sec = nowSec;
          nsec = nowNsec;
        }
        let at = d.buffer + w.beginRecord(caplen, len, sec, nsec);
        let left = caplen;
        for (let s = h; s !== 0 && left > 0; s = mb.next(s)) {
          const dl = mb.dataLen(s);
          const take = dl < left ? dl : left;
          const from = mb.mtod(s);
          this.u8.copyWithin(at, from, from + take);
          at += take;
          left -= take;
        }
        w.endRecord();
        bytes += len;
      }
    } else {
      // Nothing to write (no tx_pcap): only the byte count, one kernel call a burst.
      bytes = this.mb.pktLenSum(burst, n);
    }
    this.mb.freeBulk(burst, n);
    this.f64[d.stats + TXQ_PACKETS] += n;
    this.f64[d.stats + TXQ_BYTES] += bytes;
    return n;
  }

  flush(): void {
    this.writer?.flush();
  }

  close(): void {
    this.writer?.close();
  }

  descriptor(): PcapTxDesc {
    return this.d;
  }
}

/** A capture's cut last record (reported once: the reader ends there): one rx error, one line on stderr. */
function cutRecord(dev: string, message: string, f64: Float64Array, stats: number): void {
  f64[stats + RXQ_ERRORS]!++;
  process.stderr.write(`${dev}: rx_pcap=${message}; counted as an rx error\n`);
}

/** A capture that is missing or not a capture is a bad devarg: exit 2 from the CLI, as DPDK refuses the probe. */
function badFile(dev: string, key: 'rx_pcap' | 'tx_pcap', e: unknown): unknown {
  return e instanceof PcapError ? new ArgError(`${dev}: ${key}=${e.message}`) : e;
}

function tsResolution(dev: string, v: string | undefined): TsResolution {
  if (v === undefined || v === 'ns' || v === 'us') return v ?? 'ns';
  throw new ArgError(`${dev}: tx_tsresol=${v}: expected ns or us`);
}

function txFormat(dev: string, v: string | undefined): PcapFormat {
  if (v === undefined || v === 'pcap' || v === 'pcapng') return v ?? 'pcap';
  throw new ArgError(`${dev}: tx_format=${v}: expected pcap or pcapng`);
}

class PcapDriver implements EthDriver {
  private readonly rxFiles: string[];
  private readonly txFiles: string[];
  private readonly infinite: boolean;
  private readonly format: PcapFormat;
  private readonly resolution: TsResolution;
  private readonly mac: Uint8Array;
  private readonly rxq: (PcapRxQueue | undefined)[] = [];
  private readonly txq: (PcapTxQueue | undefined)[] = [];
  /** The interfaces of iface= / rx_iface= / rx_iface_in= / tx_iface=, or null for a port of files only. */
  private live: LiveInterfaces | null = null;

  constructor(private readonly ctx: DriverContext) {
    const dev = ctx.name;
    this.rxFiles = ctx.all.filter(([k]) => k === 'rx_pcap').map(([, v]) => v);
    this.txFiles = ctx.all.filter(([k]) => k === 'tx_pcap').map(([, v]) => v);
    const live = LIVE_KEYS.some((k) => ctx.args.has(k)) ? liveSources(dev, ctx.all) : null;
    if (this.rxFiles.length + this.txFiles.length === 0 && !live) throw new ArgError(`${dev}: needs rx_pcap=FILE and/or tx_pcap=FILE, or an interface (iface=, rx_iface=, rx_iface_in=, tx_iface=)`);
    for (const f of [...this.rxFiles, ...this.txFiles]) if (f === '') throw new ArgError(`${dev}: empty file name`);
    this.infinite = boolArg(dev, ctx.args, 'infinite_rx');
    if (this.infinite && this.rxFiles.length === 0) throw new ArgError(`${dev}: infinite_rx=1 needs an rx_pcap file`);
    boolArg(dev, ctx.args, 'skip_truncated'); // checked, no longer needed
    this.format = txFormat(dev, ctx.args.get('tx_format'));
    this.resolution = tsResolution(dev, ctx.args.get('tx_tsresol'));
    // Fail at probe, as DPDK does (it opens every file there), rather than at the first burst.
    for (const f of this.rxFiles) {
      try {
        new PcapReader(f, { window: new Uint8Array(READER_WINDOW) }).close();
      } catch (e) {
        throw badFile(dev, 'rx_pcap', e);
      }
    }
    for (const f of this.txFiles) {
      try {
        closeSync(openSync(f, 'w'));
      } catch (e) {
        throw new ArgError(`${dev}: tx_pcap=${f}: cannot create: ${osReason(e)}`);
      }
    }
    // Last, so a bad file is named before any socket opens.
    this.live = live ? LiveInterfaces.open(ctx, live) : null;
    this.mac = this.live?.mac ?? vdevMac(dev);
  }

  info(): DevInfo {
    const lim = { min: 0, max: 0xffff, align: 1 };
    const q = Math.max(1, this.rxFiles.length, this.txFiles.length, this.live?.rxCount ?? 0, this.live?.txCount ?? 0);
    return { driverName: 'net_pcap', maxRxQueues: q, maxTxQueues: q, rxDescLim: lim, txDescLim: lim, defaultRxDesc: 0, defaultTxDesc: 0 };
  }

  macAddr(): Uint8Array {
    return this.mac;
  }

  configure(): void {}

  rxQueueSetup(q: number, _nbDesc: number, pool: Mempool, _conf: object, stats: number): RxQueue {
    const live = this.live?.rxQueue(q, pool, stats);
    if (live) return live;
    const heap = this.ctx.heap;
    const file = this.rxFiles[q] ?? null;
    const d: PcapRxDesc = { driver: 'net_pcap', dev: this.ctx.name, port: this.ctx.portId, stats, pool: pool.offset, file, window: 0, state: 0, replay: 0 };
    if (file !== null && this.infinite) d.replay = this.loadReplay(file, pool, stats);
    else if (file !== null) {
      d.window = heap.reserve(READER_WINDOW, 64, `${this.ctx.name} rx queue ${q} window`);
      d.state = heap.reserve(READER_STATE_WORDS * 8, 64, `${this.ctx.name} rx queue ${q} reader state`) >>> 3;
      heap.f64.fill(0, d.state, d.state + READER_STATE_WORDS);
    }
    this.rxq[q]?.release();
    const rxq = new PcapRxQueue(heap, d);
    this.rxq[q] = rxq;
    return rxq;
  }

  /**
   * Reads a whole capture into the heap: the table of its packets, then their
   * bytes, each packet from a cache line's start as in DPDK's mbufs (a
   * misaligned source splits the copy's loads across lines).
   * @returns the replay block's offset.
   */
  private loadReplay(file: string, pool: Mempool, stats: number): number {
    const heap = this.ctx.heap;
    const { count, bytes } = replaySize(file, {
      onWarning: (m) => cutRecord(this.ctx.name, m, heap.f64, stats),
      onCutToSnaplen: (_, m) => process.stderr.write(`${this.ctx.name}: rx_pcap=${m}\n`),
    });
    if (count === 0) throw new PcapError(file, -1, 'infinite_rx=1: the capture holds no packet to replay');
    const q = heap.reserve(PCAP_REPLAY_SIZE, 64, `${this.ctx.name} replay state`);
    const table = heap.reserve(count * PCAP_REPLAY_ENTRY_SIZE, 64, `${this.ctx.name} replay table of ${count} packets`);
    let data = heap.reserve(bytes, 64, `${this.ctx.name} replay of ${bytes} bytes`);
    const u32 = heap.u32;
    const w = q >>> 2;
    u32[w + REPLAY_W_CURSOR] = 0;
    u32[w + REPLAY_W_COUNT] = count;
    u32[w + REPLAY_W_TABLE] = table;
    u32[w + REPLAY_W_PORT] = this.ctx.portId;
    u32[w + REPLAY_W_ROOM] = pool.bufLen - pool.headroom;
    u32[w + REPLAY_W_STATS] = stats * 8;
    const r = new PcapReader(file, { skipTruncated: true });
    try {
      for (let i = 0; r.next(); i++) {
        heap.u8.set(r.window.subarray(r.dataOff, r.dataOff + r.caplen), data);
        const t = (table >>> 2) + i * (PCAP_REPLAY_ENTRY_SIZE >>> 2);
        u32[t + REPLAY_ENTRY_W_DATA] = data;
        u32[t + REPLAY_ENTRY_W_CAPLEN] = r.caplen;
        data += alignUp(r.caplen, CACHE_LINE);
      }
    } finally {
      r.close();
    }
    return q;
  }

  txQueueSetup(q: number, _nbDesc: number, _conf: object, stats: number): TxQueue {
    const live = this.live?.txQueue(q, stats);
    if (live) return live;
    const heap = this.ctx.heap;
    const file = this.txFiles[q] ?? null;
    const d: PcapTxDesc = { driver: 'net_pcap', port: this.ctx.portId, stats, file, fd: -1, format: this.format, resolution: this.resolution, buffer: 0, state: 0 };
    let writer: PcapWriter | undefined;
    if (file !== null) {
      d.buffer = heap.reserve(WRITER_BUFFER, 64, `${this.ctx.name} tx queue ${q} records`);
      d.state = heap.reserve(8, 8, `${this.ctx.name} tx queue ${q} fill`) >>> 3;
      this.txq[q]?.close();
      try {
        writer = PcapWriter.create(file, { format: this.format, resolution: this.resolution, buffer: heap.u8.subarray(d.buffer, d.buffer + WRITER_BUFFER), state: heap.f64.subarray(d.state, d.state + 1) });
      } catch (e) {
        throw badFile(this.ctx.name, 'tx_pcap', e);
      }
      d.fd = writer.fd;
    }
    const txq = new PcapTxQueue(heap, d, writer);
    this.txq[q] = txq;
    return txq;
  }

  start(): void {}

  /** What lcores left in the record buffers goes to the files. */
  stop(): void {
    for (const q of this.txq) q?.flush();
  }

  close(): void {
    for (const q of this.txq) q?.close();
    for (const q of this.rxq) q?.release();
    this.live?.close();
    this.live = null;
  }

  linkUp(): boolean {
    return true;
  }

  linkSpeed(): number {
    return 10_000;
  }

  rxEnded(): boolean {
    if ((this.live?.rxCount ?? 0) > 0) return false; // an interface never ends
    const f64 = this.ctx.heap.f64;
    return this.rxq.every((q) => {
      const d = q?.descriptor();
      return d === undefined || d.file === null || (d.replay === 0 && readerEnded(f64, d.state));
    });
  }
}

export const netPcap: DriverSpec = {
  name: 'net_pcap',
  keys: ['rx_pcap', 'tx_pcap', 'infinite_rx', 'tx_format', 'tx_tsresol', 'skip_truncated', ...LIVE_KEYS],
  create: (ctx) => new PcapDriver(ctx),
  memoryNeeded: (args) => {
    const rx = args.filter(([k]) => k === 'rx_pcap').map(([, v]) => v);
    const tx = args.filter(([k]) => k === 'tx_pcap').length;
    const infinite = args.some(([k, v]) => k === 'infinite_rx' && v === '1');
    // Replays hold each file's packets and table; streams a window each.
    const rxBytes = rx.reduce((sum, f) => sum + (infinite ? replayMemory(f) : READER_WINDOW + READER_STATE_WORDS * 8 + 128), 0);
    return rxBytes + tx * (WRITER_BUFFER + 128) + liveMemoryNeeded(args);
  },
  openRxQueue: (heap, d) => new PcapRxQueue(heap, d as PcapRxDesc),
  openTxQueue: (heap, d) => new PcapTxQueue(heap, d as PcapTxDesc),
};

/**
 * A replay's packets and their bytes, each packet rounded up to whole cache
 * lines as loadReplay lays them out. Reads the record headers only.
 */
function replaySize(file: string, opts: Pick<ReaderOptions, 'onWarning' | 'onCutToSnaplen'> = {}): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  const scan = new PcapReader(file, { skipTruncated: true, ...opts });
  try {
    while (scan.next()) {
      count++;
      bytes += alignUp(scan.caplen, CACHE_LINE);
    }
  } finally {
    scan.close();
  }
  return { count, bytes };
}

/** The heap a replay of `file` takes: its block, table and packets, with their alignment. */
function replayMemory(file: string): number {
  try {
    const { count, bytes } = replaySize(file);
    return PCAP_REPLAY_SIZE + count * PCAP_REPLAY_ENTRY_SIZE + bytes + 3 * CACHE_LINE;
  } catch {
    return 0; // the driver names the missing or malformed file when it opens it
  }
}
