/**
 * testpmd's model: the pool, the ports, the forwarding configuration
 * (streams over lcores) and forwarding start/stop, with the statistics the
 * shell and the non-interactive run print. The data path runs in lcore
 * workers (lcore-worker.ts); everything here is control plane.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { drivers, vdevsMemory } from '../../drivers/index.js';
import { ArgError, LeakError } from '../../errors.js';
import { Ethdev } from '../../ethdev/ethdev.js';
import type { EthStats } from '../../ethdev/stats.js';
import { placeLcores, type Placement } from '../../eal/affinity.js';
import { Lcores } from '../../eal/launcher.js';
import { Heap, MAX_HEAP } from '../../eal/heap.js';
import { MBUF_SIZE } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { defaultPeerMac, formatMac, parseMac } from '../../net/ether.js';
import type { DevInfo } from '../../ethdev/driver.js';
import { ProbeRx, probeStreamStats } from '../../gen/probe.js';
import { fmtPps, newGenTxStats, planStreams, rateLink, runReport, streamReport, type GenReport, type PlannedStream } from '../../gen/generate.js';
import { GEN_TX_STATS_SIZE, GENT_D_LAST_DEPART_NS, GENT_D_T0 } from '../../gen/gen-layout.js';
import { nowNs } from '../../eal/clock.js';
import { FS_PROBE } from '../../fwd/fwd-layout.js';
import { accumulatedBlock, fwdStatsBlock, nicStatsBlock, streamStatsBlock, type FwdPortStats, type StreamStatsView, type Throughput } from './display.js';
import { FS_FWD_DROPPED, FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_SLOTS, FS_TX_PACKETS, defaultFwdConfig, type FwdConfig } from '../../fwd/engine.js';
import { engineChecks, engines } from '../../fwd/index.js';
import { genLink } from '../../fwd/gen.js';
import { engineModuleUrl, isEnginePath } from '../../api/user-engine.js';
import type { LcoreDone, LcoreJob, StreamJob } from './lcore-worker.js';
import { clearLcoreGc, LcoreGcAsk, newLcoreGc, type GcSpan } from './gc.js';
import { BURST_SPREAD_SIZE, burstStatsLine, clearSlots, cyclesLines, LCC_BUSY_NS, LCC_BUSY_POLLS, LCC_IDLE_POLLS, LCC_TOTAL_NS, LCORE_CYCLES_SIZE, newBurstSpread, newLcoreCycles } from './cycles.js';
import type { PortTopology, TestpmdOptions } from './options.js';

export interface StreamConf {
  rxPort: number;
  rxQueue: number;
  txPort: number;
  txQueue: number;
  /** First Float64 slot of the stream's counters in the heap. */
  stats: number;
  /** The stream's number among all forwarding streams (testpmd's stream id). */
  index: number;
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
export function fwdStreams(ports: number[], nbQueues: number, topology: PortTopology, nbCores: number): Omit<StreamConf, 'stats' | 'index'>[][] {
  const streams: Omit<StreamConf, 'stats' | 'index'>[] = [];
  for (let q = 0; q < nbQueues; q++) {
    for (let i = 0; i < ports.length; i++) {
      streams.push({ rxPort: ports[i]!, rxQueue: q, txPort: ports[txPortOf(i, ports.length, topology)]!, txQueue: q });
    }
  }
  const nbFc = Math.min(nbCores, streams.length);
  const per = Math.floor(streams.length / nbFc);
  const extra = streams.length % nbFc;
  const out: Omit<StreamConf, 'stats' | 'index'>[][] = [];
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

/** testpmd's burst_tx_delay_time and burst_tx_retry_num defaults (BURST_TX_WAIT_US, BURST_TX_RETRIES). */
const BURST_TX_WAIT_US = 1;
const BURST_TX_RETRIES = 64;

export class Testpmd {
  readonly heap: Heap;
  readonly pool: Mempool;
  readonly ethdev: Ethdev;
  /** Ports not closed, in id order. */
  ports: number[];
  /** The forwarding ports: the first nbFwdPorts of this list (`set portlist`, `set nbport`). */
  fwdPortList: number[];
  nbFwdPorts: number;
  readonly config: FwdConfig;
  forwardMode: string;
  /** The module of a user engine (a file URL) when forwardMode names one (user-engine.ts). */
  engineModule: string | undefined;
  txFirst = 0;
  /** `set verbose N`: 1 and more print every received packet, as testpmd's rx dump callbacks. */
  verbose = 0;
  /** `set fwd MODE retry` and `set burst tx delay D retry R`: what a tx queue refuses is retried R times, D µs apart. */
  retry = false;
  txDelayUs = BURST_TX_WAIT_US;
  txRetries = BURST_TX_RETRIES;
  /** Ports whose queues must be configured and set up again at their next start (testpmd's need_reconfig). */
  private needReconfig = new Set<number>();
  private lcores: Lcores | undefined;
  /** Which CPUs each lcore is pinned to (EAL's lcore placement). */
  readonly placement: Placement;
  /** Fwd lcore -> the CPU it reported running on, from the last start (absent: floating). */
  cpuOfLcore = new Map<number, number>();
  /** Fwd lcore -> garbage collections its worker saw while forwarding, from the last clean stop. */
  gcOfLcore = new Map<number, number>();
  /**
   * Told when a forwarding lcore fails while forwarding, once every lcore
   * has exited and forwarding is off (the shell prints it and goes on).
   */
  onLcoreFailure: ((e: Error) => void) | undefined;
  private streams: StreamConf[][] = [];
  /** Port counters when forwarding last started (fwd stats are deltas from here). */
  private fwdBase = new Map<number, EthStats>();
  /** Port counters at the last `show port stats` (for "since last show" throughput). */
  private showBase = new Map<number, PortBase>();
  private streamSlots: number[] = [];
  /** gen: each gen stream's genTxStats block (reused across starts). */
  private genSlots: number[] = [];
  /** gen: the last start's streams, planned on this thread to read their accounts, and the port each leaves by. */
  private genPlan: { txPort: number; p: PlannedStream }[] = [];
  /** gen: when the last forwarding stopped (nowNs()); undefined while it runs. */
  private genStoppedAt: number | undefined;
  /** Stream counters at the last `clear fwd stats all`, by first slot. */
  private slotBase = new Map<number, Float64Array>();
  private closed = false;
  /** Lcores whose worker died (threw, exited, was killed) in any start: close() reclaims what they held. */
  private readonly deadLcores = new Set<number>();
  /** Fwd lcore -> its lcoreCycles block (first Float64 slot), when cycles are recorded. */
  private cycleSlots = new Map<number, number>();
  /** Fwd lcore -> its lcoreGc block (byte offset), reused across starts. */
  private gcBlocks = new Map<number, number>();
  /** The main thread's side of each forwarding lcore's lcoreGc block, for the last start. */
  private gcAsks = new Map<number, LcoreGcAsk>();
  /** Stream stats slot -> its rx and tx burstSpread blocks, with --record-burst-stats. */
  private spreadSlots = new Map<number, [number, number]>();
  /**
   * testpmd's record_core_cycles and record_burst_stats: from the command
   * line, changed by `set record-core-cycles|record-burst-stats on|off`.
   * Lcores read them when they are launched, so a change acts at the next start.
   */
  recordCoreCycles: boolean;
  recordBurstStats: boolean;
  /** What the lcores of the last start record: the statistics printed follow these, not a setting changed since. */
  private recording = { coreCycles: false, burstStats: false, cycles: false };

  constructor(
    readonly opts: TestpmdOptions,
    readonly log: (line: string) => void,
  ) {
    if (!engines.has(opts.forwardMode) && !isEnginePath(opts.forwardMode)) {
      throw new ArgError(`--forward-mode=${opts.forwardMode}: unknown (available: ${[...engines.keys()].join(' ')}, or an engine module ./file.js|.ts)`);
    }
    this.forwardMode = opts.forwardMode;
    this.engineModule = isEnginePath(opts.forwardMode) ? engineModuleUrl(opts.forwardMode, `--forward-mode=${opts.forwardMode}`) : undefined;
    this.placement = placeLcores(opts.lcores, opts.lcoreCpus);
    this.recordCoreCycles = opts.observe.recordCoreCycles;
    this.recordBurstStats = opts.observe.recordBurstStats;
    for (const note of this.placement.notes) this.log(`EAL: ${note}`);
    const n = opts.totalNumMbufs;
    const stride = Math.ceil(opts.mbufSize / 64) * 64;
    // Pool records and buffers, lcore caches and the ring, plus room for ports, rings and stats.
    const vdevs = opts.vdevs.length ? opts.vdevs : ['net_null0', 'net_null1'];
    const size = n * (MBUF_SIZE + stride + 8) + 128 * 4160 + (64 << 20) + vdevsMemory(vdevs);
    if (size > MAX_HEAP) {
      const most = Math.floor((MAX_HEAP - (size - n * (MBUF_SIZE + stride + 8))) / (MBUF_SIZE + stride + 8));
      throw new ArgError(
        `--total-num-mbufs=${n} of ${opts.mbufSize}-byte buffers (--mbuf-size) need ${(size / 2 ** 30).toFixed(1)} GiB of heap with the ports; ` +
          `the heap (one wasm32 memory) holds at most 4 GiB: at most ${Math.max(0, most)} mbufs of this size`,
      );
    }
    this.heap = Heap.create({ size, lcoreId: opts.mainLcore, datapath: opts.datapath });
    this.pool = Mempool.create(this.heap, { name: 'mb_pool_0', n, cacheSize: Math.min(opts.mbcache, Math.floor(n / 1.5)), dataRoomSize: opts.mbufSize });
    this.config = {
      ...defaultFwdConfig(),
      burst: opts.burst,
      txPkts: opts.txPkts,
      txOnlyMultiFlow: opts.txOnlyMultiFlow,
      flowgenFlows: opts.flowgenFlows,
      variants: opts.variants,
      txOffloads: opts.txOffloads,
      gen: { ...defaultFwdConfig().gen, ...opts.gen },
    };
    if (opts.txIp) [this.config.txIpSrc, this.config.txIpDst] = opts.txIp;
    if (opts.txUdp) [this.config.txUdpSrc, this.config.txUdpDst] = opts.txUdp;
    // Before anything is printed or any port probed: a bad --txpkts is one line, not a failing lcore.
    this.checkEngine(opts.txFirst ? opts.txFirstBursts : 0);
    this.log(`testpmd: create a new mbuf pool <mb_pool_0>: n=${n}, size=${opts.mbufSize}, socket=0`);
    this.ethdev = new Ethdev(this.heap, drivers);
    this.ports = vdevs.map((v) => this.ethdev.create(v));
    this.fwdPortList = [...this.ports];
    this.nbFwdPorts = this.ports.length;
    this.log(`Set ${this.forwardMode} packet forwarding mode`);
    if (this.ports.length % 2 === 1 && opts.portTopology === 'paired') {
      this.log('\nWarning! port-topology=paired and odd forward ports number, the last port will pair with itself.\n');
    }
    for (const p of this.ports) this.setupPort(p);
    this.log('Checking link statuses...');
    this.log('Done');
  }

  private setupPort(p: number): void {
    this.configurePort(p);
    this.ethdev.start(p);
    this.log(`Port ${p}: ${formatMac(this.ethdev.macAddr(p))}`);
  }

  /** Configures the port and sets up its queues from the current --rxq/--txq/--rxd/--txd. */
  private configurePort(p: number): void {
    const o = this.opts;
    this.log(`Configuring Port ${p} (socket 0)`);
    this.ethdev.configure(p, o.rxq, o.txq);
    for (let q = 0; q < o.rxq; q++) this.ethdev.rxQueueSetup(p, q, o.rxd, this.pool, { rxFreeThresh: o.rxFreeThresh });
    for (let q = 0; q < o.txq; q++) this.ethdev.txQueueSetup(p, q, o.txd, { txFreeThresh: o.txFreeThresh, txRsThresh: o.txRsThresh, offloads: o.txOffloads });
  }

  get forwarding(): boolean {
    return this.lcores !== undefined;
  }

  /** Fwd lcore ids in use: the first --nb-cores of the non-main lcores. */
  fwdLcoreIds(): number[] {
    return this.cfgLcoreIds().slice(0, this.opts.nbCores);
  }

  /** Every lcore forwarding may use (testpmd's fwd_lcores_cpuids): the non-main lcores. */
  cfgLcoreIds(): number[] {
    return this.opts.lcores.filter((l) => l !== this.opts.mainLcore);
  }

  /** The ports forwarding runs on. */
  fwdPorts(): number[] {
    return this.fwdPortList.slice(0, this.nbFwdPorts);
  }

  peerMac(port: number): Uint8Array {
    return this.opts.ethPeers.get(port) ?? defaultPeerMac(port);
  }

  private buildStreams(): void {
    const nbq = Math.min(this.opts.rxq, this.opts.txq);
    const perLcore = fwdStreams(this.fwdPorts(), nbq, this.opts.portTopology, this.opts.nbCores);
    let k = 0;
    this.streams = perLcore.map((list) =>
      list.map((s) => {
        if (k >= this.streamSlots.length) this.streamSlots.push(this.heap.reserve(FS_SLOTS * 8, 64, 'stream stats') >>> 3);
        const index = k++;
        const stats = this.streamSlots[index]!;
        this.heap.f64.fill(0, stats, stats + FS_SLOTS);
        this.slotBase.delete(stats);
        return { ...s, stats, index };
      }),
    );
  }

  /** `show config fwd`: the streams of each lcore, as testpmd prints them. */
  fwdConfigText(): string {
    // While forwarding, the running streams; otherwise those the next start will make.
    const streams = this.lcores ? this.streams : fwdStreams(this.fwdPorts(), Math.min(this.opts.rxq, this.opts.txq), this.opts.portTopology, this.opts.nbCores);
    const nbStreams = streams.reduce((a, s) => a + s.length, 0);
    const ids = this.fwdLcoreIds();
    const lines = [`${this.forwardMode} packet forwarding - ports=${this.fwdPorts().length} - cores=${streams.length} - streams=${nbStreams} - NUMA support enabled, MP allocation mode: native`];
    streams.forEach((list, i) => {
      lines.push(`Logical Core ${ids[i]} (socket 0) forwards packets on ${list.length} streams:`);
      for (const s of list) {
        lines.push(`  RX P=${s.rxPort}/Q=${s.rxQueue} (socket 0) -> TX P=${s.txPort}/Q=${s.txQueue} (socket 0) peer=${formatMac(this.peerMac(s.txPort))}`);
      }
    });
    return lines.join('\n');
  }

  /**
   * `show config rxtx`, also printed under the stream list at start
   * (testpmd's rxtx_config_display): every port, its first rx and tx queue.
   */
  fwdParamsText(): string {
    const o = this.opts;
    const lines = [`  ${this.forwardMode} packet forwarding${this.retry ? ' with retry' : ''} packets/burst=${this.config.burst}`];
    if (this.forwardMode === 'txonly' || this.forwardMode === 'flowgen') {
      lines.push(`  packet len=${this.config.txPkts.reduce((a, b) => a + b, 0)} - nb packet segments=${this.config.txPkts.length}`);
    }
    lines.push(`  nb forwarding cores=${this.opts.nbCores} - nb forwarding ports=${this.nbFwdPorts}`);
    for (const p of this.ports) {
      // Queue 0 only, "to be less verbose", as testpmd; a port to be reconfigured shows what it will get.
      const fresh = this.needReconfig.has(p);
      lines.push(`  port ${p}: RX queue number: ${o.rxq} Tx queue number: ${o.txq}`);
      lines.push(`    Rx offloads=0x0 Tx offloads=0x${o.txOffloads.toString(16)}`);
      lines.push(`    RX queue: 0`, `      RX desc=${fresh ? o.rxd : this.ethdev.rxDesc(p, 0)} - RX free threshold=${o.rxFreeThresh}`);
      lines.push(`      RX threshold registers: pthresh=0 hthresh=0  wthresh=0`, `      RX Offloads=0x0`);
      lines.push(`    TX queue: 0`, `      TX desc=${fresh ? o.txd : this.ethdev.txDesc(p, 0)} - TX free threshold=${o.txFreeThresh}`);
      lines.push(`      TX threshold registers: pthresh=0 hthresh=0  wthresh=0`, `      TX offloads=0x${o.txOffloads.toString(16)} - TX RS bit threshold=${o.txRsThresh}`);
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
   * @returns once every lcore has set up, been released into its loop and
   *   polled each of its streams once (after its `tx_first` bursts), so
   *   statistics read next show traffic.
   * @throws ArgError when forwarding already runs or the configuration does
   *   not suit the engine (nothing is launched); LcoreError when an lcore
   *   fails its set-up (the others are stopped and forwarding is off again).
   */
  async start(txFirst = 0): Promise<void> {
    if (this.ports.some((p) => !this.ethdev.isStarted(p))) throw new ArgError('Not all ports were started');
    if (this.lcores) throw new ArgError('Packet forwarding already started');
    this.checkEngine(txFirst);
    this.buildStreams();
    if (this.forwardMode === 'gen') this.prepareGen();
    else this.genPlan = [];
    for (const p of this.ports) this.fwdBase.set(p, this.ethdev.stats(p));
    this.log(this.fwdConfigText());
    this.log('\n' + this.fwdParamsText());
    const ids = this.fwdLcoreIds();
    const o = this.opts.observe;
    this.recording = { coreCycles: this.recordCoreCycles, burstStats: this.recordBurstStats, cycles: this.recordCoreCycles || o.metrics !== undefined || o.web !== undefined };
    const polled = new Int32Array(new SharedArrayBuffer(4));
    this.gcAsks = new Map();
    const launches = this.streams.map((list, i) => {
      const job: LcoreJob = {
        heap: this.heap.descriptor(),
        datapath: this.heap.datapath,
        pool: this.pool.offset,
        engine: this.forwardMode,
        ...(this.engineModule ? { engineModule: this.engineModule } : {}),
        config: this.config,
        txFirst,
        verbose: this.verbose,
        txRetry: this.retry ? { delayUs: this.txDelayUs, retries: this.txRetries } : undefined,
        dumpTo: this.opts.json ? 'stderr' : 'stdout',
        polled,
        ...(this.recordsCycles ? { cycles: this.cyclesSlot(ids[i]!) } : {}),
        gc: this.gcBlock(ids[i]!),
        streams: list.map(
          (s): StreamJob => ({
            ...s,
            ...this.spreadsOf(s.stats),
            rxq: this.ethdev.rxQueue(s.rxPort, s.rxQueue).descriptor(),
            txq: this.ethdev.txQueue(s.txPort, s.txQueue).descriptor(),
            txMac: this.ethdev.macAddr(s.txPort),
            peerMac: this.peerMac(s.txPort),
          }),
        ),
      };
      return { lcoreId: ids[i]!, job, cpus: this.placement.cpus.get(ids[i]!) };
    });
    // A TypeScript engine module needs tsx in the workers, even when testpmd runs built.
    const lc = new Lcores('lcore-worker', import.meta.url, launches, import.meta.url.endsWith('.ts') || (this.engineModule?.endsWith('.ts') ?? false));
    this.lcores = lc;
    try {
      await lc.launched();
      await Promise.race([allPolled(polled, launches.length), lc.failed()]);
    } catch (e) {
      await lc.wait().catch(() => {});
      this.ended(lc);
      throw e;
    }
    lc.failed().catch((e: Error) => this.reap(lc, e));
  }

  /** An lcore failed while forwarding: once all have exited, forwarding is off and onLcoreFailure hears of it, unless stop() took it. */
  private async reap(lc: Lcores, e: Error): Promise<void> {
    await lc.wait().catch(() => {});
    if (this.lcores !== lc) return;
    this.ended(lc);
    this.onLcoreFailure?.(e);
  }

  /** Every lcore of `lc` has exited: forwarding is off, and the dead ones are remembered for close(). */
  private ended(lc: Lcores): void {
    this.cpuOfLcore = new Map(lc.cpuOf);
    for (const id of lc.dead) this.deadLcores.add(id);
    this.lcores = undefined;
  }

  /**
   * Kills forwarding lcore `lcore`'s worker where it stands (worker.terminate()),
   * as a crash would: forwarding stops as for any failed lcore (the others
   * leave their loops, the failure names the lcore), and what the dead worker
   * held (its cache, the burst in its hands) returns to the pool at close().
   * @throws ArgError when forwarding is not running or `lcore` does not forward.
   */
  async killLcore(lcore: number): Promise<void> {
    const lc = this.lcores;
    if (!lc) throw new ArgError('Packet forwarding not started');
    await lc.kill(lcore);
  }

  /** Whether the last start's lcores time their polls: record-core-cycles, or a metrics page or dashboard that shows busy time. */
  get recordsCycles(): boolean {
    return this.recording.cycles;
  }

  /** The lcore's lcoreCycles block, zeroed for a new start (testpmd clears its cycle counts at start). */
  private cyclesSlot(lcore: number): number {
    let slot = this.cycleSlots.get(lcore);
    if (slot === undefined) this.cycleSlots.set(lcore, (slot = newLcoreCycles(this.heap)));
    clearSlots(this.heap, slot, LCORE_CYCLES_SIZE);
    return slot;
  }

  /** The lcore's lcoreGc block, zeroed for a new start, and a fresh asker for it. */
  private gcBlock(lcore: number): number {
    let block = this.gcBlocks.get(lcore);
    if (block === undefined) this.gcBlocks.set(lcore, (block = newLcoreGc(this.heap)));
    clearLcoreGc(this.heap, block);
    this.gcAsks.set(lcore, new LcoreGcAsk(this.heap, block));
    return block;
  }

  /**
   * The garbage collections on the forwarding lcores since the last call
   * (since forwarding started, the first time), by lcore: each lcore is
   * asked and answers at its next look at the stop flag, which takes
   * microseconds unless it is descheduled. An lcore that has not answered
   * within `waitMs` is left out; its collections come with a later call.
   * Resolves with nothing while forwarding is stopped.
   */
  async lcoreGc(waitMs = 500): Promise<{ lcore: number; gc: GcSpan }[]> {
    if (!this.lcores) return [];
    const asks = [...this.gcAsks];
    for (const [, a] of asks) a.ask();
    for (const end = performance.now() + waitMs; performance.now() < end && !asks.every(([, a]) => a.answered()); ) await sleep(1);
    return asks.flatMap(([lcore, a]) => {
      const gc = a.take();
      return gc ? [{ lcore, gc }] : [];
    });
  }

  /** With --record-burst-stats, the stream's zeroed rx and tx spreads for the lcore job. */
  private spreadsOf(stats: number): { rxSpread?: number; txSpread?: number } {
    if (!this.recording.burstStats) return {};
    let slots = this.spreadSlots.get(stats);
    if (!slots) this.spreadSlots.set(stats, (slots = [newBurstSpread(this.heap), newBurstSpread(this.heap)]));
    for (const slot of slots) clearSlots(this.heap, slot, BURST_SPREAD_SIZE);
    return { rxSpread: slots[0], txSpread: slots[1] };
  }

  /**
   * Each forwarding lcore's recorded time since forwarding started (the
   * last start's lcores while stopped): busy and total ns, busy and idle
   * polls, and the packets its streams moved (tx for txonly and flowgen, rx
   * otherwise). Empty when cycles are not recorded.
   */
  lcoreCycles(): { lcore: number; busyNs: number; totalNs: number; busyPolls: number; idlePolls: number; packets: number }[] {
    if (!this.recordsCycles) return [];
    const f64 = this.heap.f64;
    const streams = this.streamStats();
    const tx = this.forwardMode === 'txonly' || this.forwardMode === 'flowgen';
    return this.fwdLcoreIds().flatMap((lcore) => {
      const c = this.cycleSlots.get(lcore);
      if (c === undefined) return [];
      const packets = streams.filter((s) => s.lcore === lcore).reduce((a, s) => a + (tx ? s.txPackets : s.rxPackets), 0);
      return [{ lcore, busyNs: f64[c + LCC_BUSY_NS]!, totalNs: f64[c + LCC_TOTAL_NS]!, busyPolls: f64[c + LCC_BUSY_POLLS]!, idlePolls: f64[c + LCC_IDLE_POLLS]!, packets }];
    });
  }

  /** The burst spread lines of port `p` (its streams' rx and tx, summed), with --record-burst-stats. */
  private burstLines(p: number): string[] {
    if (!this.recording.burstStats) return [];
    const sum = (dir: 0 | 1, port: (s: StreamConf) => number) => {
      const out = new Float64Array(BURST_SPREAD_SIZE / 8);
      for (const s of this.streams.flat()) {
        const slot = this.spreadSlots.get(s.stats)?.[dir];
        if (slot !== undefined && port(s) === p) for (let i = 0; i < out.length; i++) out[i]! += this.heap.f64[slot + i]!;
      }
      return out;
    };
    return [burstStatsLine('RX', sum(0, (s) => s.rxPort)), burstStatsLine('TX', sum(1, (s) => s.txPort))].filter((l) => l !== '');
  }

  /**
   * gen: splits the gen streams over this start's forwarding streams and
   * hands each its genTxStats block, zeroed (reused across starts).
   */
  private prepareGen(): void {
    const g = this.config.gen;
    const all = this.streams.flat();
    g.fwdStreams = all.length;
    while (this.genSlots.length < g.streams.length) this.genSlots.push(newGenTxStats(this.heap));
    g.stats = this.genSlots.slice(0, g.streams.length);
    for (const c of g.stats) this.heap.f64.fill(0, c, c + GEN_TX_STATS_SIZE / 8);
    const room = this.pool.bufLen - this.pool.headroom;
    // N% rates are of each tx port's link as it is now; the lcores plan with the same speeds.
    g.linkMbps = [];
    for (const p of this.ports) g.linkMbps[p] = rateLink(this.ethdev, p).mbps;
    this.genPlan = g.streams.map((spec, k) => {
      const txPort = all[k % all.length]!.txPort;
      return { txPort, p: planStreams([spec], g.rate, this.ethdev.macAddr(txPort), room, g.count, Infinity, k, genLink(g, txPort))[0]! };
    });
    this.genStoppedAt = undefined;
  }

  /**
   * gen: each gen stream's account read live from its genTxStats block:
   * asked (the schedule up to now, or up to `stop`) against achieved, as
   * `dpkit gen` reports it. Empty unless the last start was in gen mode.
   */
  genReport(): GenReport | undefined {
    if (this.genPlan.length === 0) return undefined;
    const g = this.config.gen;
    const end = this.genStoppedAt ?? nowNs();
    const f64 = this.heap.f64;
    const reports = this.genPlan.map(({ p }, k) => {
      const c = g.stats[k]!;
      const t0 = f64[c + GENT_D_T0]!;
      // Lcores send until they see the stop flag, a little after stop asked: the schedule runs to the last departure then.
      const upTo = t0 > 0 ? Math.max(end - t0, f64[c + GENT_D_LAST_DEPART_NS]!) : 0;
      return streamReport(f64, c, { name: p.b.name, pacer: p.pacer, planned: p.planned }, upTo, 0.001);
    });
    const elapsed = Math.max(0, ...g.stats.map((c) => (f64[c + GENT_D_T0]! > 0 ? end - f64[c + GENT_D_T0]! : 0)));
    return runReport(reports, elapsed, false, g.lateNs);
  }

  /** gen: a line per gen stream sent from port `p`, and the verdict under the last port's. */
  private genLines(p: number): string[] {
    const r = this.genReport();
    if (!r) return [];
    const lines = r.streams
      .filter((_, k) => this.genPlan[k]!.txPort === p)
      .map(
        (s) =>
          `  Gen stream ${s.name}: asked ${fmtPps(s.askedPps)} achieved ${fmtPps(s.achievedPps)} sent ${s.sent} tx-dropped ${s.txDropped} no-mbuf ${s.noMbuf} late ${s.late} (max ${(s.maxLateNs / 1e3).toFixed(1)} us)`,
      );
    if (p === Math.max(...this.genPlan.map((x) => x.txPort))) lines.push(`  Gen: ${r.verdict}`);
    return lines;
  }

  /** rxprobe: per probe stream received on port `p`, its loss, order and latency (the lcores' checkers merged). */
  private probeLines(p: number): string[] {
    const blocks = new Set<number>();
    for (const s of this.streams.flat()) {
      const b = this.heap.f64[s.stats + FS_PROBE]!;
      if (s.rxPort === p && b > 0) blocks.add(b);
    }
    if (blocks.size === 0) return [];
    const all = [...blocks].map((b) => ProbeRx.attach(this.heap, b));
    const lines: string[] = [];
    // rxprobe's checkers track 16 ids (RXPROBE_STREAMS); gen's as many as it has streams, when more.
    const ids = Math.max(...all.map((rx) => rx.nbStreams));
    for (let id = 0; id < ids; id++) {
      const rxs = all.filter((rx) => id < rx.nbStreams);
      if (!rxs.some((rx) => rx.seen(id))) continue;
      const st = probeStreamStats(rxs, id);
      const l = st.latency;
      lines.push(`  Probe stream ${id}: received ${st.received} lost ${st.lost} duplicates ${st.duplicates} reordered ${st.reordered}`);
      lines.push(`    latency ns: min ${l.min} p50 ${l.p50} p99 ${l.p99} p99.9 ${l.p999} max ${l.max}`);
    }
    return lines;
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
    this.genStoppedAt = nowNs();
    this.log('Waiting for lcores to finish...');
    try {
      const done = (await lc.wait()) as LcoreDone[];
      this.gcOfLcore = new Map(done.map((d) => [d.lcoreId, d.gc]));
    } finally {
      this.ended(lc);
    }
    return this.fwdStatsText() + '\nDone.';
  }

  /**
   * Whether every forwarding port's input has ended (capture files read to
   * their end): forwarding can stop, nothing more will arrive. False while
   * any port receives forever, and for engines that generate their packets.
   */
  inputEnded(): boolean {
    return this.inputCanEnd() && this.ports.every((p) => this.ethdev.rxEnded(p) === true);
  }

  /** Whether inputEnded() can ever hold: an engine that receives, and every port's driver one with an end (capture files). */
  inputCanEnd(): boolean {
    if (this.forwardMode === 'txonly' || this.forwardMode === 'flowgen' || this.forwardMode === 'gen') return false;
    return this.ports.every((p) => this.ethdev.rxEnded(p) !== undefined);
  }

  /** Forward statistics per port since forwarding started: testpmd's fwd_stats_display. */
  fwdStats(): { ports: Map<number, FwdPortStats>; total: FwdPortStats } {
    const ports = new Map<number, FwdPortStats>();
    const total: FwdPortStats = { rxPackets: 0, rxDropped: 0, txPackets: 0, txDropped: 0, rxBadIpCsum: 0, rxBadL4Csum: 0 };
    for (const p of this.fwdPorts()) {
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
        if (s2.txPort === p) s.txDropped += this.slot(s2.stats, FS_FWD_DROPPED);
        if (s2.rxPort === p) {
          s.rxBadIpCsum += this.slot(s2.stats, FS_RX_BAD_IP_CSUM);
          s.rxBadL4Csum += this.slot(s2.stats, FS_RX_BAD_L4_CSUM);
        }
      }
      ports.set(p, s);
      for (const k of Object.keys(total) as (keyof FwdPortStats)[]) total[k] += s[k];
    }
    return { ports, total };
  }

  /** Each stream's counters since forwarding started (testpmd's fwd_stream rx/tx/dropped and checksum counts). */
  streamStats(): (StreamConf & StreamStatsView & { lcore: number })[] {
    const ids = this.fwdLcoreIds();
    return this.streams.flatMap((list, i) =>
      list.map((s) => ({
        ...s,
        lcore: ids[i]!,
        rxPackets: this.slot(s.stats, FS_RX_PACKETS),
        txPackets: this.slot(s.stats, FS_TX_PACKETS),
        fwdDropped: this.slot(s.stats, FS_FWD_DROPPED),
        rxBadIpCsum: this.slot(s.stats, FS_RX_BAD_IP_CSUM),
        rxBadL4Csum: this.slot(s.stats, FS_RX_BAD_L4_CSUM),
      })),
    );
  }

  fwdStatsText(): string {
    const { ports, total } = this.fwdStats();
    const csum = this.forwardMode === 'csum';
    // As testpmd: each stream apart when there are more streams than ports (queues > 1), the idle ones left out.
    const streams = this.streams.flat().length > ports.size ? this.streamStats().filter((s) => s.rxPackets + s.txPackets + s.fwdDropped > 0) : [];
    const text = streams.map((s) => streamStatsBlock(s, csum) + '\n').join('') + [...ports].map(([p, s]) => fwdStatsBlock(p, s, csum, [...this.burstLines(p), ...this.genLines(p), ...this.probeLines(p)])).join('\n') + '\n' + accumulatedBlock(total);
    if (!this.recording.coreCycles) return text;
    const tx = this.forwardMode === 'txonly' || this.forwardMode === 'flowgen';
    const busy = this.lcoreCycles().reduce((a, c) => a + c.busyNs, 0);
    return text + cyclesLines(this.forwardMode, busy, tx ? total.txPackets : total.rxPackets);
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

  /** `clear port stats all|N` (and xstats): the ports' counters restart from zero, forward statistics too. */
  clearPortStats(ports: number[] = this.ports): void {
    for (const p of ports) {
      this.ethdev.statsReset(p);
      this.showBase.delete(p);
      this.fwdBase.set(p, this.ethdev.stats(p));
    }
  }

  /**
   * `clear fwd stats all`: forward statistics restart from zero; the ports'
   * own counters run on. The lcores own the stream counters, so their
   * current values become the base rather than being zeroed under them.
   */
  clearFwdStats(): void {
    for (const p of this.fwdPorts()) this.fwdBase.set(p, this.ethdev.stats(p));
    for (const s of this.streams.flat()) this.slotBase.set(s.stats, this.heap.f64.slice(s.stats, s.stats + FS_SLOTS));
  }

  /** A stream counter since forwarding started or its statistics were last cleared. */
  private slot(stats: number, k: number): number {
    return this.heap.f64[stats + k]! - (this.slotBase.get(stats)?.[k] ?? 0);
  }

  /** Whether `which` ('all' or a port id) names a port testpmd has; logs testpmd's message when not. */
  private validPort(which: number | 'all'): boolean {
    if (which === 'all' || this.ports.includes(which)) return true;
    this.log(`Invalid port ${which}`);
    return false;
  }

  private selected(which: number | 'all'): number[] {
    return this.ports.filter((p) => which === 'all' || p === which);
  }

  /**
   * `port start all|N` (testpmd's start_port): reconfigures ports marked by
   * `port config` or `port reset`, starts every stopped one, and says which
   * were not stopped.
   */
  portStart(which: number | 'all' = 'all'): void {
    if (!this.validPort(which)) return;
    let started = 0;
    let stoppedOnes = 0;
    for (const p of this.selected(which)) {
      if (this.ethdev.isStarted(p)) {
        this.log(`Port ${p} is now not stopped`);
        continue;
      }
      stoppedOnes++;
      if (this.needReconfig.delete(p)) this.configurePort(p);
      this.ethdev.start(p);
      this.log(`Port ${p}: ${formatMac(this.ethdev.macAddr(p))}`);
      started++;
    }
    if (started > 0) this.log('Checking link statuses...');
    else if (stoppedOnes === 0) this.log('Please stop the ports first');
    this.log('Done');
  }

  /** `port stop all|N` (testpmd's stop_port). Forwarding ports cannot stop while forwarding runs. */
  portStop(which: number | 'all' = 'all'): void {
    if (!this.validPort(which)) return;
    this.log('Stopping ports...');
    let stopped = 0;
    for (const p of this.selected(which)) {
      if (this.lcores && this.fwdPorts().includes(p)) {
        this.log(`Please remove port ${p} from forwarding configuration.`);
        continue;
      }
      if (!this.ethdev.isStarted(p)) continue;
      this.ethdev.stop(p);
      stopped++;
    }
    if (stopped > 0) this.log('Checking link statuses...');
    this.log('Done');
  }

  /** `port close all|N` (testpmd's close_port): only stopped ports close; closed ports leave every list. */
  portClose(which: number | 'all' = 'all'): void {
    if (!this.validPort(which)) return;
    this.log('Closing ports...');
    for (const p of this.selected(which)) {
      if (this.lcores && this.fwdPorts().includes(p)) {
        this.log(`Please remove port ${p} from forwarding configuration.`);
        continue;
      }
      if (this.ethdev.isStarted(p)) {
        this.log(`Cannot close started device (port ${p})`);
        continue;
      }
      this.closePort(p);
    }
    this.log('Done');
  }

  private closePort(p: number): void {
    this.ethdev.close(p);
    this.log(`Port ${p} is closed`);
    this.ports = this.ports.filter((q) => q !== p);
    this.fwdPortList = this.fwdPortList.filter((q) => q !== p);
    this.nbFwdPorts = Math.min(this.nbFwdPorts, this.fwdPortList.length);
    this.needReconfig.delete(p);
  }

  /**
   * `port reset all|N` (testpmd's reset_port): the ports must be stopped;
   * each is configured and set up again at its next start.
   */
  portReset(which: number | 'all' = 'all'): void {
    if (!this.validPort(which)) return;
    if (this.selected(which).some((p) => this.ethdev.isStarted(p))) {
      this.log('Can not reset port(s), please stop port(s) first.');
      return;
    }
    this.log('Resetting ports...');
    for (const p of this.selected(which)) this.needReconfig.add(p);
    this.log('Done');
  }

  /**
   * `port config all rxq|txq|rxd|txd N`: every port must be stopped; the
   * value is checked against each port's limits and applies at the next
   * `port start`. Refusals are logged in testpmd's words.
   */
  portConfigAll(what: 'rxq' | 'txq' | 'rxd' | 'txd', n: number): void {
    if (this.ports.some((p) => this.ethdev.isStarted(p))) return this.log('Please stop all ports first');
    for (const p of this.ports) {
      const i = this.ethdev.info(p);
      const bad = portConfigRefusal(what, n, p, i);
      if (bad) return this.log(bad);
    }
    this.opts[what] = n;
    for (const p of this.ports) this.needReconfig.add(p);
  }

  /** `set nbcore N` (set_fwd_lcores_number). */
  setNbCores(n: number): void {
    if (this.lcores) return this.log('Please stop forwarding first');
    const max = this.cfgLcoreIds().length;
    if (n > max) return this.log(`nb fwd cores ${n} > ${max} (max. number of configured lcores) - ignored`);
    if (n < 1) return this.log(`nb fwd cores ${n} < 1 (forwarding needs an lcore) - ignored`);
    this.opts.nbCores = n;
    this.log(`Number of forwarding cores set to ${n}`);
  }

  /** `set nbport N` (set_fwd_ports_number). */
  setNbPorts(n: number): void {
    if (this.lcores) return this.log('Please stop forwarding first');
    if (n > this.fwdPortList.length) return this.log(`nb fwd ports ${n} > ${this.fwdPortList.length} (number of configured ports) - ignored`);
    if (n < 1) return this.log(`nb fwd ports ${n} < 1 (forwarding needs a port) - ignored`);
    this.nbFwdPorts = n;
    this.log(`Number of forwarding ports set to ${n}`);
    this.warnOddPaired();
  }

  /** `set portlist 0,2-3` (set_fwd_ports_list). */
  setPortList(list: number[]): void {
    if (this.lcores) return this.log('Please stop forwarding first');
    for (const p of list) if (!this.validPort(p)) return;
    this.fwdPortList = list;
    if (this.nbFwdPorts !== list.length) {
      this.log(`previous number of forwarding ports ${this.nbFwdPorts} - changed to number of configured ports ${list.length}`);
      this.nbFwdPorts = list.length;
    }
    this.warnOddPaired();
  }

  private warnOddPaired(): void {
    if (this.nbFwdPorts % 2 === 1 && this.opts.portTopology === 'paired') {
      this.log('\nWarning! port-topology=paired and odd forward ports number, the last port will pair with itself.\n');
    }
  }

  /** `set eth-peer N MAC` (set_fwd_eth_peer): the destination address mac forwarding writes for port N. */
  setEthPeer(port: number, mac: string): void {
    if (!this.ports.includes(port)) return this.log(`Error: Invalid port number ${port}`);
    let addr: Uint8Array;
    try {
      addr = parseMac(mac);
    } catch {
      return this.log(`Error: Invalid ethernet address: ${mac}`);
    }
    this.opts.ethPeers.set(port, addr);
  }

  /** `set verbose N`: takes effect at the next start, whose lcores dump what they receive. */
  setVerbose(n: number): void {
    this.log(`Change verbose level from ${this.verbose} to ${n}`);
    this.verbose = n;
  }

  /** `set fwd MODE [retry]`: a built-in engine or an engine module (a path, relative to the cwd). */
  setForwardMode(mode: string, retry = false): void {
    const user = isEnginePath(mode);
    if (!engines.has(mode) && !user) throw new ArgError(`Invalid ${mode} packet forwarding mode`);
    if (this.lcores) throw new ArgError('Please stop forwarding first');
    this.engineModule = user ? engineModuleUrl(mode, `set fwd ${mode}`) : undefined;
    this.retry = retry;
    this.forwardMode = mode;
    this.log(`Set ${mode} packet forwarding mode${retry ? ' with retry' : ''}`);
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
    if (this.deadLcores.size > 0) {
      // Ports closed, lcores gone: every mbuf not in the pool is one a dead lcore held.
      const dead = [...this.deadLcores];
      const n = this.pool.reclaim(dead);
      this.log(`testpmd: ${n} mbufs held by failed lcore${dead.length > 1 ? 's' : ''} ${dead.join(',')} returned to ${this.pool.name}`);
    }
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

/** testpmd's check_nb_rxq / check_nb_txq / check_nb_rxd / check_nb_txd message for a value port `p` cannot take, or '' when it can. */
function portConfigRefusal(what: 'rxq' | 'txq' | 'rxd' | 'txd', n: number, p: number, i: DevInfo): string {
  switch (what) {
    case 'rxq':
      return n > i.maxRxQueues ? `Fail: input rxq (${n}) can't be greater than max_rx_queues (${i.maxRxQueues}) of port ${p}` : n < 1 ? `Fail: input rxq (${n}) must be at least 1 (port ${p})` : '';
    case 'txq':
      return n > i.maxTxQueues ? `Fail: input txq (${n}) can't be greater than max_tx_queues (${i.maxTxQueues}) of port ${p}` : n < 1 ? `Fail: input txq (${n}) must be at least 1 (port ${p})` : '';
    case 'rxd':
      if (n === 0) return ''; // the driver's default, as --rxd=0
      if (n > i.rxDescLim.max) return `Fail: input rxd (${n}) can't be greater than max_rxds (${i.rxDescLim.max}) of port ${p}`;
      if (n < i.rxDescLim.min) return `Fail: input rxd (${n}) can't be less than min_rxds (${i.rxDescLim.min}) of port ${p}`;
      return n % i.rxDescLim.align ? `Fail: input rxd (${n}) must be a multiple of ${i.rxDescLim.align} (port ${p})` : '';
    case 'txd':
      if (n === 0) return '';
      if (n > i.txDescLim.max) return `Fail: input txd (${n}) can't be greater than max_txds (${i.txDescLim.max}) of port ${p}`;
      if (n < i.txDescLim.min) return `Fail: input txd (${n}) can't be less than min_txds (${i.txDescLim.min}) of port ${p}`;
      return n % i.txDescLim.align ? `Fail: input txd (${n}) must be a multiple of ${i.txDescLim.align} (port ${p})` : '';
  }
}

/** Atomics.waitAsync (Node 16 and later), which TypeScript's ES2022 lib does not declare. */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { value: Promise<string> | string } }).waitAsync;

/** Resolves once `n` lcores have counted themselves in `polled[0]`, without blocking the event loop. */
async function allPolled(polled: Int32Array, n: number): Promise<void> {
  for (let seen = Atomics.load(polled, 0); seen < n; seen = Atomics.load(polled, 0)) {
    await waitAsync(polled, 0, seen).value;
  }
}
