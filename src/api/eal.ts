/**
 * The public start (rte_eal_init): `init()` makes the heap, the default mbuf
 * pool and the ports of the given vdevs, and returns the `Eal` through which
 * an application sets ports up, makes pools and rings, launches its module
 * on lcore workers and cleans up. Everything here is control plane, for the
 * thread that called `init` (the main lcore).
 */
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { drivers, vdevsMemory } from '../drivers/index.js';
import { ArgError, DpkitError, LeakError } from '../errors.js';
import { placeLcores, type CpuMap, type Placement } from '../eal/affinity.js';
import { Heap, MAX_LCORES, type Burst } from '../eal/heap.js';
import type { Datapath } from '../eal/kernels.js';
import { Lcores } from '../eal/launcher.js';
import { parseEalArgs } from '../eal/options.js';
import { Ethdev } from '../ethdev/ethdev.js';
import { Mbufs } from '../mem/mbuf.js';
import { Mempool, MBUF_DEFAULT_BUF_SIZE, type MempoolOptions } from '../mem/mempool.js';
import { Ring, type RingOptions } from '../ring/ring.js';
import { Launch, lcoreModuleUrl, type LaunchOptions } from './launch.js';
import type { ApiLcoreJob, PortJob } from './lcore.js';
import { RxQueueHandle, TxQueueHandle } from './queue.js';
import { ethdevMetrics } from '../metrics/ethdev.js';
import { renderMetrics } from '../metrics/exposition.js';
import { MetricsServer } from '../metrics/server.js';
import { registerEal, registerEthdev, registerMempools, registerRings } from '../telemetry/commands.js';
import { TelemetryServer } from '../telemetry/server.js';
import { TelemetryRegistry } from '../telemetry/telemetry.js';

/** What `init` takes (EAL's options and the default pool's). */
export interface EalOptions {
  /** Lcore ids (EAL's -l); the first is the main lcore unless `mainLcore` says otherwise. Default: one per CPU. */
  lcores?: readonly number[];
  /** CPUs of each lcore (EAL's --lcores lcore@cpus); an lcore not in it runs on the CPU of its number, or floats. */
  lcoreCpus?: ReadonlyMap<number, readonly number[]>;
  /** The main lcore (--main-lcore): the thread that called `init`. Default: the first of `lcores`. */
  mainLcore?: number;
  /** Virtual devices (--vdev), e.g. `net_ring0`, `net_null0,size=64`: ports 0, 1, … in this order. */
  vdevs?: readonly string[];
  /** Mbufs in the default pool `Eal.pool` (rte_pktmbuf_pool_create's n). Default 8191; 0 makes no default pool. */
  mbufs?: number;
  /** Per-lcore cache of the default pool. Default 250, at most mbufs / 1.5. */
  mbufCacheSize?: number;
  /** Data room (with headroom) of the default pool's mbufs. Default 2176 (RTE_MBUF_DEFAULT_BUF_SIZE). */
  mbufDataRoomSize?: number;
  /** Heap bytes beyond the default pool and the ports' needs, for more pools, rings and bursts. Default 64 MiB. */
  memory?: number;
  /** 'wasm' (default): per-burst work in WebAssembly kernels; 'ts': their TypeScript twins. */
  datapath?: Datapath;
  /**
   * Serve DPDK's telemetry socket (EAL's `--telemetry`), as testpmd does:
   * `dpdk_telemetry.v2` in the runtime directory (`/var/run/dpdk/<filePrefix>`
   * for root, else `$XDG_RUNTIME_DIR/dpdk/<filePrefix>` or `/tmp/dpdk/<filePrefix>`),
   * answering `/ethdev/*`, `/mempool/*`, `/ring/*`, `/eal/*`, `/info` and `/help`
   * from the shared counters, on this thread's event loop (it must not be
   * blocked for clients to get answers). Default false, unlike EAL: an
   * application built on dpkit is often one of several run at once (tests),
   * and each would claim the same socket. `Eal.close` removes it.
   */
  telemetry?: boolean;
  /** EAL's `--file-prefix`: names the runtime directory of the telemetry socket. Default `rte`. */
  filePrefix?: string;
}

/**
 * What `init(argv)` also takes: the EAL options in argv stand for lcores,
 * lcoreCpus, mainLcore, vdevs, filePrefix (`--file-prefix`) and telemetry
 * (`--telemetry`; off unless given, see `EalOptions.telemetry`).
 */
export type EalPoolOptions = Omit<EalOptions, 'lcores' | 'lcoreCpus' | 'mainLcore' | 'vdevs' | 'telemetry' | 'filePrefix'>;

/** A `/metrics` page `Eal.metricsListen` serves. */
export interface MetricsEndpoint {
  /** The TCP port bound (the kernel's pick when 0 was asked for). */
  readonly port: number;
  /** Stops listening and ends open connections. Idempotent. */
  close(): void;
}

const DEFAULT_MBUFS = 8191;
const DEFAULT_CACHE = 250;
const DEFAULT_MEMORY = 64 << 20;
const INIT_HINT = { name: 'the application', options: new Set<string>(), help: 'DPDK\'s EAL parameters guide' };

/**
 * Starts dpkit (rte_eal_init): the heap, the default pool `mb_pool_0` and one
 * port per vdev (created, not configured). With `argv`, takes DPDK's EAL
 * arguments (`-l 0-1 --vdev net_ring0 -- app args`): what follows `--` is
 * left for the application in `Eal.args`; EAL options dpkit has no use for
 * (hugepages, PCI, …) are accepted and listed in `Eal.notes`.
 * @throws ArgError naming the bad option, lcore, vdev or size; NoMemError when the pool does not fit.
 */
export function init(options?: EalOptions): Eal;
export function init(argv: readonly string[], options?: EalPoolOptions): Eal;
export function init(a: EalOptions | readonly string[] = {}, more: EalPoolOptions = {}): Eal {
  if (!Array.isArray(a)) return new Eal(a as EalOptions, []);
  const argv = a as readonly string[];
  const sep = argv.indexOf('--');
  const ealArgv = sep >= 0 ? argv.slice(0, sep) : argv;
  const e = parseEalArgs([...ealArgv], INIT_HINT);
  const opts: EalOptions = {
    ...more,
    lcores: e.lcores,
    mainLcore: e.mainLcore,
    vdevs: e.vdevs,
    filePrefix: e.filePrefix,
    // On only when asked for (EalOptions.telemetry says why); the last of --telemetry / --no-telemetry wins.
    telemetry: e.telemetry && ealArgv.includes('--telemetry'),
    ...(e.lcoreCpus ? { lcoreCpus: e.lcoreCpus } : {}),
  };
  return new Eal(opts, sep >= 0 ? argv.slice(sep + 1) : [], e.notes, ealArgv);
}

/**
 * A started dpkit: the heap, the default pool, the ports (`ethdev`) and the
 * lcores. Control plane: call it from the thread that called `init`.
 */
export class Eal {
  /** The shared heap every lcore and kernel works in. */
  readonly heap: Heap;
  /** The mbuf accessors (rte_pktmbuf_*) over the heap, for this thread. */
  readonly mbufs: Mbufs;
  /** The ports (rte_eth_*): configure, queue setup, start/stop, bursts, stats, MAC, link, promiscuous. */
  readonly ethdev: Ethdev;
  /** Every lcore id, main first. */
  readonly lcores: readonly number[];
  /** The main lcore: this thread. */
  readonly mainLcore: number;
  /** Application arguments: what followed `--` in `init(argv)`. */
  readonly args: readonly string[];
  /** EAL options accepted for compatibility that change nothing here, one line each. */
  readonly notes: readonly string[];
  private readonly defaultPool: Mempool | undefined;
  private readonly placement: Placement;
  private readonly rings: Ring[] = [];
  private running: Launch | undefined;
  /** Lcores whose worker died in a launch (threw, exited, was killed): close() reclaims what they held. */
  private readonly dead = new Set<number>();
  private closed = false;
  private telemetryServer: TelemetryServer | undefined;
  private metricsServers: MetricsServer[] = [];

  /** @internal Made by `init`. */
  constructor(o: EalOptions, args: readonly string[], notes: readonly string[] = [], ealArgv?: readonly string[]) {
    const lcores = [...(o.lcores ?? range(availableParallelism()))];
    for (const id of lcores) {
      if (!Number.isInteger(id) || id < 0 || id >= MAX_LCORES) throw new ArgError(`init: lcore ${id}: must be an integer in [0, ${MAX_LCORES - 1}]`);
    }
    if (lcores.length === 0) throw new ArgError('init: no lcore');
    if (new Set(lcores).size !== lcores.length) throw new ArgError(`init: lcores ${lcores.join(',')}: an lcore given twice`);
    const main = o.mainLcore ?? lcores[0]!;
    if (!lcores.includes(main)) throw new ArgError(`init: main lcore ${main} is not one of the lcores ${lcores.join(',')}`);
    this.mainLcore = main;
    this.lcores = [main, ...lcores.filter((l) => l !== main)];
    const cpus: CpuMap | undefined = o.lcoreCpus ? new Map([...o.lcoreCpus].map(([l, c]) => [l, [...c]])) : undefined;
    this.placement = placeLcores([...this.lcores], cpus);
    this.notes = [...notes, ...this.placement.notes];
    this.args = args;

    const vdevs = o.vdevs ?? [];
    const n = o.mbufs ?? DEFAULT_MBUFS;
    const pool = { n, dataRoomSize: o.mbufDataRoomSize ?? MBUF_DEFAULT_BUF_SIZE, cacheSize: Math.min(o.mbufCacheSize ?? DEFAULT_CACHE, Math.floor(n / 1.5)) };
    const size = (n > 0 ? Mempool.memSize(pool) : 0) + (o.memory ?? DEFAULT_MEMORY) + vdevsMemory(vdevs);
    this.heap = Heap.create({ size, lcoreId: main, datapath: o.datapath ?? 'wasm' });
    this.mbufs = new Mbufs(this.heap);
    this.defaultPool = n > 0 ? Mempool.create(this.heap, { name: 'mb_pool_0', ...pool }) : undefined;
    this.ethdev = new Ethdev(this.heap, drivers);
    for (const v of vdevs) this.ethdev.create(v);
    if (o.telemetry) this.telemetryServer = this.serveTelemetry(o, ealArgv ?? ealArgsOf(this.lcores, vdevs), args);
  }

  /** The telemetry socket's path, when `init` was asked to serve it (`EalOptions.telemetry`). */
  get telemetryPath(): string | undefined {
    return this.telemetryServer?.path;
  }

  /** Listens on the socket, or closes the ports just made and throws: init fails as rte_eal_init does when telemetry cannot start. */
  private serveTelemetry(o: EalOptions, ealArgv: readonly string[], appArgs: readonly string[]): TelemetryServer {
    const prefix = o.filePrefix ?? 'rte';
    if (prefix === '' || prefix.includes('/') || prefix === '.' || prefix === '..') {
      this.closePorts();
      throw new ArgError(`init: filePrefix '${prefix}': expected a name without '/'`);
    }
    const reg = new TelemetryRegistry();
    registerEal(reg, basename(process.argv[1] ?? 'node'), ealArgv, appArgs);
    registerEthdev(reg, this.ethdev, this.defaultPool?.bufLen ?? MBUF_DEFAULT_BUF_SIZE);
    registerMempools(reg, () => this.pools());
    registerRings(reg, () => Ring.list(this.heap));
    try {
      return new TelemetryServer(reg, prefix);
    } catch (e) {
      this.closePorts();
      throw new DpkitError('ETELEMETRY', `init: telemetry: ${(e as Error).message}`);
    }
  }

  /**
   * Serves Prometheus' `/metrics` on host:port (testpmd's `--metrics`): per
   * port and queue packets, bytes, errors, drops and rx_nombuf, link state and
   * speed, each pool's mbufs in use, read from the shared counters at each
   * scrape on this thread. `Eal.close` stops it.
   * @param port 0 lets the kernel pick one: the endpoint's `port` says which.
   * @param host default `127.0.0.1` (localhost only unless a host is given).
   * @returns the endpoint (its port and `close`).
   * @throws ArgError naming the address when it cannot be listened on.
   */
  async metricsListen(port: number, host = '127.0.0.1'): Promise<MetricsEndpoint> {
    if (this.closed) throw new DpkitError('EBUSY', 'metricsListen: eal is closed');
    const m = await MetricsServer.listen(host, port, () => renderMetrics(ethdevMetrics(this.ethdev, this.ethdev.portIds(), this.pools())), 'metricsListen');
    this.metricsServers.push(m);
    return m;
  }

  /** Every pool in the heap (rte_mempool_walk). */
  private pools(): Mempool[] {
    const out: Mempool[] = [];
    for (let id = 0; id < this.heap.nbPools; id++) {
      const mp = Mempool.byId(this.heap, id);
      if (mp) out.push(mp);
    }
    return out;
  }

  private closePorts(): void {
    for (const p of this.ethdev.portIds()) this.ethdev.close(p);
  }

  /**
   * The default mbuf pool, `mb_pool_0` (`EalOptions.mbufs` mbufs).
   * @throws ArgError when `init` was asked for none (`mbufs: 0`).
   */
  get pool(): Mempool {
    if (!this.defaultPool) throw new ArgError('init({ mbufs: 0 }) made no default pool: use eal.mempoolCreate');
    return this.defaultPool;
  }

  /** A burst array of `n` handles in the heap (what rx/tx bursts and kernels take). Make it once, not per burst. */
  burst(n: number): Burst {
    return this.heap.burst(n);
  }

  /**
   * Another mbuf pool (rte_pktmbuf_pool_create), in the heap `init` sized
   * (`EalOptions.memory`). Lcores find it with `ctx.mempool(name)`.
   * @throws ArgError on bad sizes; NoMemError when it does not fit the heap.
   */
  mempoolCreate(opts: MempoolOptions): Mempool {
    return Mempool.create(this.heap, opts);
  }

  /**
   * A ring of handles (rte_ring_create) that lcores launched after this find
   * with `ctx.ring(name)`. `sp`/`sc` promise one producer / one consumer thread.
   * @throws ArgError on a bad count or a name already used; NoMemError when it does not fit the heap.
   */
  ringCreate(opts: RingOptions & { name: string }): Ring {
    if (this.rings.some((r) => r.name === opts.name)) throw new ArgError(`ring ${opts.name}: a ring with this name exists`);
    const r = Ring.create(this.heap, opts);
    this.rings.push(r);
    return r;
  }

  /**
   * Rx queue `queue` of port `port` for this thread's own polling (the same
   * handle type lcores get from `ctx.rxQueue`).
   * @throws ArgError when the port does not exist or the queue is not set up.
   */
  rxQueue(port: number, queue: number): RxQueueHandle {
    return new RxQueueHandle(port, queue, this.ethdev.rxQueue(port, queue), this.heap.buffer);
  }

  /** Tx queue `queue` of port `port` for this thread. @throws ArgError when the port does not exist or the queue is not set up. */
  txQueue(port: number, queue: number): TxQueueHandle {
    return new TxQueueHandle(port, queue, this.ethdev.txQueue(port, queue), this.heap.buffer);
  }

  /** The lcores a launch may use: every lcore but the main one. */
  workerLcores(): number[] {
    return this.lcores.filter((l) => l !== this.mainLcore);
  }

  /**
   * Runs `module` on lcore workers (rte_eal_mp_remote_launch): each worker
   * opens the heap as its lcore, imports the module and calls its exported
   * `main(ctx: LcoreContext)` (or its default export); `ctx` reopens the
   * ports' queues, pools and rings in that thread. Every lcore is set up
   * before any `main` runs. Ports keep the queues they had at the launch.
   *
   * `module` is a file path or `file:` URL; a `.js` path with only a `.ts`
   * beside it loads the `.ts` (then tsx must be installed).
   *
   * @returns once every lcore is released into `main`.
   * @throws ArgError for a missing file, an lcore not given to `init`, the
   *   main lcore or an lcore twice; DpkitError `EBUSY` while another launch
   *   runs; LcoreError naming the lcore when one fails to set up (the module
   *   does not load or exports no `main`; every lcore is stopped then).
   */
  async launch<R = unknown, A = unknown>(module: string | URL, opts: LaunchOptions<A> = {}): Promise<Launch<R>> {
    if (this.closed) throw new DpkitError('EBUSY', 'launch: eal is closed');
    if (this.running) throw new DpkitError('EBUSY', `launch: lcores ${this.running.lcores.join(',')} still run a launch: stop() it first`);
    const url = lcoreModuleUrl(module);
    const ids = [...(opts.lcores ?? this.workerLcores())];
    if (ids.length === 0) throw new ArgError(`launch: no lcore to launch on (lcores ${this.lcores.join(',')}, main ${this.mainLcore}): init with at least two lcores`);
    for (const id of ids) {
      if (id === this.mainLcore) throw new ArgError(`launch: lcore ${id} is the main lcore (this thread); launch on ${this.workerLcores().join(',') || 'another lcore'}`);
      if (!this.lcores.includes(id)) throw new ArgError(`launch: lcore ${id} is not enabled (lcores ${this.lcores.join(',')}): give it to init`);
    }
    if (new Set(ids).size !== ids.length) throw new ArgError(`launch: lcores ${ids.join(',')}: an lcore given twice`);
    const job: ApiLcoreJob = {
      module: url.href,
      heap: this.heap.descriptor(),
      datapath: this.heap.datapath,
      pool: this.defaultPool?.id ?? -1,
      ports: this.ethdev.portIds().map((id) => this.portJob(id)),
      rings: this.rings.map((r) => r.descriptor()),
      lcores: ids,
      args: opts.args,
    };
    const launches = ids.map((lcoreId) => ({ lcoreId, job, cpus: this.placement.cpus.get(lcoreId) }));
    const lc = new Lcores('lcore-worker', import.meta.url, launches, import.meta.url.endsWith('.ts') || url.href.endsWith('.ts'));
    const run = new Launch<R>(lc, ids, () => {
      for (const id of lc.dead) this.dead.add(id);
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    try {
      await lc.launched();
    } catch (e) {
      await run.wait().catch(() => {});
      throw e;
    }
    return run;
  }

  /**
   * Cleans up (rte_eal_cleanup): stops a launch still running, stops and
   * closes every port (their drivers return the mbufs they hold), flushes
   * this thread's caches and checks every pool is full. Safe to call twice.
   * @throws LaunchError when the running launch failed (after cleaning up);
   *   LeakError naming each pool that is not full.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let failure: unknown;
    if (this.running) await this.running.stop().catch((e: unknown) => (failure = e));
    this.telemetryServer?.close();
    for (const m of this.metricsServers) m.close();
    this.closePorts();
    const leaks: string[] = [];
    let missing = 0;
    for (let id = 0; id < this.heap.nbPools; id++) {
      const mp = Mempool.byId(this.heap, id)!;
      mp.flushCache();
      // Ports closed and lcores stopped: what a dead lcore held is nobody's now.
      if (this.dead.size > 0) mp.reclaim([...this.dead]);
      if (!mp.full()) {
        leaks.push(`${mp.name}: ${mp.inUse()} of ${mp.size} mbufs not returned`);
        missing += mp.inUse();
      }
    }
    if (failure) throw failure;
    if (leaks.length) throw new LeakError(leaks.map((l) => l.split(':')[0]).join(','), missing, `close: ${leaks.join('; ')}`);
  }

  private portJob(id: number): PortJob {
    const e = this.ethdev;
    const queues = (n: number, open: (q: number) => { descriptor(): PortJob['rxq'][number] }) =>
      Array.from({ length: n }, (_, q) => {
        try {
          return open(q).descriptor();
        } catch {
          return null; // not set up: ctx.rxQueue says so if the lcore asks for it
        }
      });
    return {
      id,
      name: e.name(id),
      mac: e.macAddr(id),
      rxq: queues(e.nbRxQueues(id), (q) => e.rxQueue(id, q)),
      txq: queues(e.nbTxQueues(id), (q) => e.txQueue(id, q)),
    };
  }
}

/** The EAL arguments an `init(options)` stands for, as /eal/params lists them. */
function ealArgsOf(lcores: readonly number[], vdevs: readonly string[]): string[] {
  return ['-l', lcores.join(','), ...vdevs.flatMap((v) => ['--vdev', v])];
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
