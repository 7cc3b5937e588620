/**
 * testpmd's model: the pool, the ports, the forwarding configuration
 * (streams over lcores) and forwarding start/stop, with the statistics the
 * shell and the non-interactive run print. The data path runs in lcore
 * workers (lcore-worker.ts); everything here is control plane.
 */
import { drivers, vdevsMemory } from '../../drivers/index.js';
import { ArgError, LeakError } from '../../errors.js';
import { Ethdev } from '../../ethdev/ethdev.js';
import type { EthStats } from '../../ethdev/stats.js';
import { placeLcores, type Placement } from '../../eal/affinity.js';
import { Lcores } from '../../eal/launcher.js';
import { Heap } from '../../eal/heap.js';
import { MBUF_SIZE } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { defaultPeerMac, formatMac } from '../../net/ether.js';
import { accumulatedBlock, fwdStatsBlock, nicStatsBlock, type FwdPortStats, type Throughput } from './display.js';
import { FS_FWD_DROPPED, FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_SLOTS, FS_TX_PACKETS, defaultFwdConfig, type FwdConfig } from '../../fwd/engine.js';
import { engineChecks, engines } from '../../fwd/index.js';
import type { LcoreJob, StreamJob } from './lcore-worker.js';
import type { PortTopology, TestpmdOptions } from './options.js';

export interface StreamConf {
  rxPort: number;
  rxQueue: number;
  txPort: number;
  txQueue: number;
  /** First Float64 slot of the stream's counters in the heap. */
  stats: number;
}

/** testpmd's fwd_topology_tx_port_get: where port index `rxp` of `n` sends. */
export function txPortOf(rxp: number, n: number, topology: PortTopology): number {
  switch (topology) {
    case 'chained':
      return (rxp + 1) % n;
    case 'loop':
      return rxp;
    default:
      if ((rxp & 1) === 0) return rxp + 1 < n ? rxp + 1 : rxp;
      return rxp - 1;
  }
}

/**
 * testpmd's rss_fwd_config_setup and setup_fwd_config_of_each_lcore: one
 * stream per (port, queue), ports first; streams split over `nbCores`
 * lcores, the last lcores taking one extra when they do not divide evenly.
 * @returns the streams of each forwarding lcore, in order.
 */
export function fwdStreams(ports: number[], nbQueues: number, topology: PortTopology, nbCores: number): Omit<StreamConf, 'stats'>[][] {
  const streams: Omit<StreamConf, 'stats'>[] = [];
  for (let q = 0; q < nbQueues; q++) {
    for (let i = 0; i < ports.length; i++) {
      streams.push({ rxPort: ports[i]!, rxQueue: q, txPort: ports[txPortOf(i, ports.length, topology)]!, txQueue: q });
    }
  }
  const nbFc = Math.min(nbCores, streams.length);
  const per = Math.floor(streams.length / nbFc);
  const extra = streams.length % nbFc;
  const out: Omit<StreamConf, 'stats'>[][] = [];
  let at = 0;
  for (let lc = 0; lc < nbFc; lc++) {
    const n = lc < nbFc - extra ? per : per + 1;
    out.push(streams.slice(at, at + n));
    at += n;
  }
  return out;
}

interface PortBase {
  stats: EthStats;
  time: number;
}

export class Testpmd {
  readonly heap: Heap;
  readonly pool: Mempool;
  readonly ethdev: Ethdev;
  readonly ports: number[];
  readonly config: FwdConfig;
  forwardMode: string;
  txFirst = 0;
  private lcores: Lcores | undefined;
  /** Which CPUs each lcore is pinned to (EAL's lcore placement). */
  readonly placement: Placement;
  /** Fwd lcore -> the CPU it reported running on, from the last start (absent: floating). */
  cpuOfLcore = new Map<number, number>();
  private streams: StreamConf[][] = [];
  /** Port counters when forwarding last started (fwd stats are deltas from here). */
  private fwdBase = new Map<number, EthStats>();
  /** Port counters at the last `show port stats` (for "since last show" throughput). */
  private showBase = new Map<number, PortBase>();
  private streamSlots: number[] = [];
  private closed = false;

  constructor(
    readonly opts: TestpmdOptions,
    readonly log: (line: string) => void,
  ) {
    if (!engines.has(opts.forwardMode)) {
      throw new ArgError(`--forward-mode=${opts.forwardMode}: unknown (available: ${[...engines.keys()].join(' ')})`);
    }
    this.forwardMode = opts.forwardMode;
    this.placement = placeLcores(opts.lcores, opts.lcoreCpus);
    for (const note of this.placement.notes) this.log(`EAL: ${note}`);
    const n = opts.totalNumMbufs;
    const stride = Math.ceil(opts.mbufSize / 64) * 64;
    // Pool records and buffers, lcore caches and the ring, plus room for ports, rings and stats.
    const vdevs = opts.vdevs.length ? opts.vdevs : ['net_null0', 'net_null1'];
    const size = n * (MBUF_SIZE + stride + 8) + 128 * 4160 + (64 << 20) + vdevsMemory(vdevs);
    this.heap = Heap.create({ size, lcoreId: opts.mainLcore, datapath: opts.datapath });
    this.pool = Mempool.create(this.heap, { name: 'mb_pool_0', n, cacheSize: Math.min(opts.mbcache, Math.floor(n / 1.5)), dataRoomSize: opts.mbufSize });
    this.config = {
      ...defaultFwdConfig(),
      burst: opts.burst,
      txPkts: opts.txPkts,
      txOnlyMultiFlow: opts.txOnlyMultiFlow,
      flowgenFlows: opts.flowgenFlows,
      macswapKernel: opts.macswapKernel,
      txOffloads: opts.txOffloads,
    };
    if (opts.txIp) [this.config.txIpSrc, this.config.txIpDst] = opts.txIp;
    if (opts.txUdp) [this.config.txUdpSrc, this.config.txUdpDst] = opts.txUdp;
    // Before anything is printed or any port probed: a bad --txpkts is one line, not a failing lcore.
    this.checkEngine(opts.txFirst ? opts.txFirstBursts : 0);
    this.log(`testpmd: create a new mbuf pool <mb_pool_0>: n=${n}, size=${opts.mbufSize}, socket=0`);
    this.ethdev = new Ethdev(this.heap, drivers);
    this.ports = vdevs.map((v) => this.ethdev.create(v));
    this.log(`Set ${this.forwardMode} packet forwarding mode`);
    if (this.ports.length % 2 === 1 && opts.portTopology === 'paired') {
      this.log('\nWarning! port-topology=paired and odd forward ports number, the last port will pair with itself.\n');
    }
    for (const p of this.ports) this.setupPort(p);
    this.log('Checking link statuses...');
    this.log('Done');
  }

  private setupPort(p: number): void {
    const o = this.opts;
    this.log(`Configuring Port ${p} (socket 0)`);
    this.ethdev.configure(p, o.rxq, o.txq);
    for (let q = 0; q < o.rxq; q++) this.ethdev.rxQueueSetup(p, q, o.rxd, this.pool, { rxFreeThresh: o.rxFreeThresh });
    for (let q = 0; q < o.txq; q++) this.ethdev.txQueueSetup(p, q, o.txd, { txFreeThresh: o.txFreeThresh, txRsThresh: o.txRsThresh, offloads: o.txOffloads });
    this.ethdev.start(p);
    this.log(`Port ${p}: ${formatMac(this.ethdev.macAddr(p))}`);
  }

  get forwarding(): boolean {
    return this.lcores !== undefined;
  }

  /** Fwd lcore ids in use: the first --nb-cores of the non-main lcores. */
  fwdLcoreIds(): number[] {
    return this.opts.lcores.filter((l) => l !== this.opts.mainLcore).slice(0, this.opts.nbCores);
  }

  peerMac(port: number): Uint8Array {
    return this.opts.ethPeers.get(port) ?? defaultPeerMac(port);
  }

  private buildStreams(): void {
    const nbq = Math.min(this.opts.rxq, this.opts.txq);
    const perLcore = fwdStreams(this.ports, nbq, this.opts.portTopology, this.opts.nbCores);
    let k = 0;
    this.streams = perLcore.map((list) =>
      list.map((s) => {
        if (k >= this.streamSlots.length) this.streamSlots.push(this.heap.reserve(FS_SLOTS * 8, 64, 'stream stats') >>> 3);
        const stats = this.streamSlots[k++]!;
        this.heap.f64.fill(0, stats, stats + FS_SLOTS);
        return { ...s, stats };
      }),
    );
  }

  /** `show config fwd`: the streams of each lcore, as testpmd prints them. */
  fwdConfigText(): string {
    if (this.streams.length === 0) this.buildStreams();
    const nbStreams = this.streams.reduce((a, s) => a + s.length, 0);
    const ids = this.fwdLcoreIds();
    const lines = [`${this.forwardMode} packet forwarding - ports=${this.ports.length} - cores=${this.streams.length} - streams=${nbStreams} - NUMA support enabled, MP allocation mode: native`];
    this.streams.forEach((list, i) => {
      lines.push(`Logical Core ${ids[i]} (socket 0) forwards packets on ${list.length} streams:`);
      for (const s of list) {
        lines.push(`  RX P=${s.rxPort}/Q=${s.rxQueue} (socket 0) -> TX P=${s.txPort}/Q=${s.txQueue} (socket 0) peer=${formatMac(this.peerMac(s.txPort))}`);
      }
    });
    return lines.join('\n');
  }

  /** The per-start summary testpmd prints under the stream list. */
  fwdParamsText(): string {
    const o = this.opts;
    const lines = ['', `  ${this.forwardMode} packet forwarding packets/burst=${this.config.burst}`];
    if (this.forwardMode === 'txonly' || this.forwardMode === 'flowgen') {
      lines.push(`  packet len=${this.config.txPkts.reduce((a, b) => a + b, 0)} - nb packet segments=${this.config.txPkts.length}`);
    }
    lines.push(`  nb forwarding cores=${this.streams.length} - nb forwarding ports=${this.ports.length}`);
    for (const p of this.ports) {
      lines.push(`  port ${p}: RX queue number: ${o.rxq} Tx queue number: ${o.txq}`);
      lines.push(`    Rx offloads=0x0 Tx offloads=0x${o.txOffloads.toString(16)}`);
      for (let q = 0; q < o.rxq; q++) {
        lines.push(`    RX queue: ${q}`, `      RX desc=${this.ethdev.rxDesc(p, q)} - RX free threshold=${o.rxFreeThresh}`);
      }
      for (let q = 0; q < o.txq; q++) {
        lines.push(`    TX queue: ${q}`, `      TX desc=${this.ethdev.txDesc(p, q)} - TX free threshold=${o.txFreeThresh}`, `      TX offloads=0x${o.txOffloads.toString(16)} - TX RS bit threshold=${o.txRsThresh}`);
      }
    }
    return lines.join('\n');
  }

  /** Checks the configuration against the engine (and txonly, which sends the tx_first bursts). @throws ArgError */
  private checkEngine(txFirst: number): void {
    engineChecks.get(this.forwardMode)?.(this.config, this.pool);
    if (txFirst > 0) engineChecks.get('txonly')!(this.config, this.pool);
  }

  /**
   * start / start tx_first [n]: launches the forwarding lcores.
   * @returns once every lcore has set up and been released into its loop
   *   (the `tx_first` bursts go out after that).
   * @throws ArgError when forwarding already runs or the configuration does
   *   not suit the engine (nothing is launched); LcoreError when an lcore
   *   fails its set-up (the others are stopped and forwarding is off again).
   */
  async start(txFirst = 0): Promise<void> {
    if (this.lcores) throw new ArgError('Packet forwarding already started');
    this.checkEngine(txFirst);
    this.buildStreams();
    for (const p of this.ports) this.fwdBase.set(p, this.ethdev.stats(p));
    this.log(this.fwdConfigText());
    this.log(this.fwdParamsText());
    const ids = this.fwdLcoreIds();
    const launches = this.streams.map((list, i) => {
      const job: LcoreJob = {
        heap: this.heap.descriptor(),
        datapath: this.heap.datapath,
        pool: this.pool.offset,
        engine: this.forwardMode,
        config: this.config,
        txFirst,
        streams: list.map(
          (s): StreamJob => ({
            ...s,
            rxq: this.ethdev.rxQueue(s.rxPort, s.rxQueue).descriptor(),
            txq: this.ethdev.txQueue(s.txPort, s.txQueue).descriptor(),
            txMac: this.ethdev.macAddr(s.txPort),
            peerMac: this.peerMac(s.txPort),
          }),
        ),
      };
      return { lcoreId: ids[i]!, job, cpus: this.placement.cpus.get(ids[i]!) };
    });
    const lc = new Lcores('lcore-worker', import.meta.url, launches);
    this.lcores = lc;
    try {
      await lc.launched();
    } catch (e) {
      await lc.wait().catch(() => {});
      this.cpuOfLcore = new Map(lc.cpuOf);
      this.lcores = undefined;
      throw e;
    }
  }

  /** Seconds since the lcores were launched into their loops (0 when not forwarding). */
  forwardingSeconds(): number {
    const t = this.lcores?.startedAt;
    return t === undefined ? 0 : (performance.now() - t) / 1000;
  }

  /** Rejects as soon as a forwarding lcore fails; never resolves otherwise. */
  failed(): Promise<never> {
    return this.lcores ? this.lcores.failed() : new Promise<never>(() => {});
  }

  /** stop: tells the lcores to stop, waits for them, and returns the forward statistics text. */
  async stop(): Promise<string> {
    const lc = this.lcores;
    if (!lc) throw new ArgError('Packet forwarding not started');
    this.log('Telling cores to stop...');
    lc.requestStop();
    this.log('Waiting for lcores to finish...');
    try {
      await lc.wait();
    } finally {
      this.cpuOfLcore = new Map(lc.cpuOf);
      this.lcores = undefined;
    }
    return this.fwdStatsText() + '\nDone.';
  }

  /**
   * Whether every forwarding port's input has ended (capture files read to
   * their end): forwarding can stop, nothing more will arrive. False while
   * any port receives forever, and for engines that generate their packets.
   */
  inputEnded(): boolean {
    if (this.forwardMode === 'txonly' || this.forwardMode === 'flowgen') return false;
    return this.ports.every((p) => this.ethdev.rxEnded(p) === true);
  }

  /** Forward statistics per port since forwarding started: testpmd's fwd_stats_display. */
  fwdStats(): { ports: Map<number, FwdPortStats>; total: FwdPortStats } {
    const ports = new Map<number, FwdPortStats>();
    const total: FwdPortStats = { rxPackets: 0, rxDropped: 0, txPackets: 0, txDropped: 0, rxBadIpCsum: 0, rxBadL4Csum: 0 };
    const f64 = this.heap.f64;
    for (const p of this.ports) {
      const now = this.ethdev.stats(p);
      const base = this.fwdBase.get(p) ?? now;
      const s: FwdPortStats = {
        rxPackets: now.ipackets - base.ipackets,
        rxDropped: now.imissed - base.imissed,
        txPackets: now.opackets - base.opackets,
        txDropped: 0,
        rxBadIpCsum: 0,
        rxBadL4Csum: 0,
      };
      for (const s2 of this.streams.flat()) {
        if (s2.txPort === p) s.txDropped += f64[s2.stats + FS_FWD_DROPPED]!;
        if (s2.rxPort === p) {
          s.rxBadIpCsum += f64[s2.stats + FS_RX_BAD_IP_CSUM]!;
          s.rxBadL4Csum += f64[s2.stats + FS_RX_BAD_L4_CSUM]!;
        }
      }
      ports.set(p, s);
      for (const k of Object.keys(total) as (keyof FwdPortStats)[]) total[k] += s[k];
    }
    return { ports, total };
  }

  /** Each stream's counters since forwarding started (testpmd's fwd_stream rx/tx/dropped). */
  streamStats(): (StreamConf & { lcore: number; rxPackets: number; txPackets: number; fwdDropped: number })[] {
    const f64 = this.heap.f64;
    const ids = this.fwdLcoreIds();
    return this.streams.flatMap((list, i) =>
      list.map((s) => ({
        ...s,
        lcore: ids[i]!,
        rxPackets: f64[s.stats + FS_RX_PACKETS]!,
        txPackets: f64[s.stats + FS_TX_PACKETS]!,
        fwdDropped: f64[s.stats + FS_FWD_DROPPED]!,
      })),
    );
  }

  fwdStatsText(): string {
    const { ports, total } = this.fwdStats();
    const csum = this.forwardMode === 'csum';
    return [...ports].map(([p, s]) => fwdStatsBlock(p, s, csum)).join('\n') + '\n' + accumulatedBlock(total);
  }

  /** `show port stats all`: NIC statistics with throughput since the last show. */
  portStatsText(ports: number[] = this.ports): string {
    return ports.map((p) => nicStatsBlock(p, this.ethdev.stats(p), this.throughput(p))).join('\n');
  }

  private throughput(p: number): Throughput {
    const now = this.ethdev.stats(p);
    const t = performance.now();
    const prev = this.showBase.get(p);
    this.showBase.set(p, { stats: now, time: t });
    if (!prev) return { rxPps: 0, rxBps: 0, txPps: 0, txBps: 0 };
    const dt = (t - prev.time) / 1000;
    if (dt <= 0) return { rxPps: 0, rxBps: 0, txPps: 0, txBps: 0 };
    return {
      rxPps: (now.ipackets - prev.stats.ipackets) / dt,
      rxBps: ((now.ibytes - prev.stats.ibytes) * 8) / dt,
      txPps: (now.opackets - prev.stats.opackets) / dt,
      txBps: ((now.obytes - prev.stats.obytes) * 8) / dt,
    };
  }

  /** `clear port stats all`. */
  clearPortStats(): void {
    for (const p of this.ports) {
      this.ethdev.statsReset(p);
      this.showBase.delete(p);
      this.fwdBase.set(p, this.ethdev.stats(p));
    }
  }

  /** `port stop all` / `port start all`. */
  portStop(): void {
    if (this.lcores) throw new ArgError('Please stop forwarding first');
    for (const p of this.ports) {
      this.log(`Stopping ports...`);
      this.ethdev.stop(p);
    }
    this.log('Done');
  }

  portStart(): void {
    for (const p of this.ports) this.ethdev.start(p);
    this.log('Done');
  }

  setForwardMode(mode: string): void {
    if (!engines.has(mode)) throw new ArgError(`unknown forwarding mode '${mode}' (available: ${[...engines.keys()].join(' ')})`);
    if (this.lcores) throw new ArgError('Please stop forwarding first');
    this.forwardMode = mode;
    this.log(`Set ${mode} packet forwarding mode`);
  }

  /**
   * Closes every port (their drivers free the mbufs they hold) and checks
   * that the pool is full again: a leak throws LeakError.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.ports) {
      this.log(`\nStopping port ${p}...`);
      this.log('Stopping ports...');
      this.ethdev.stop(p);
      this.log('Done');
    }
    for (const p of this.ports) {
      this.log(`\nShutting down port ${p}...`);
      this.log('Closing ports...');
      this.ethdev.close(p);
      this.log(`Port ${p} is closed`);
      this.log('Done');
    }
    this.pool.flushCache();
    this.pool.checkLeaks();
  }

  /** Whether the pool is full now (ports closed, lcores stopped). */
  leakCheck(): LeakError | undefined {
    try {
      this.pool.checkLeaks();
      return undefined;
    } catch (e) {
      if (e instanceof LeakError) return e;
      throw e;
    }
  }
}
