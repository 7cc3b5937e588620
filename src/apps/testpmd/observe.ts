/**
 * testpmd seen from outside while it runs: DPDK's telemetry socket (on by
 * default, as EAL's; --no-telemetry turns it off), Prometheus /metrics with
 * --metrics, the live dashboard with --web. Everything here runs on the main thread and only reads the
 * shared counters the lcores write.
 */
import { Mempool } from '../../mem/mempool.js';
import { renderMetrics } from '../../metrics/exposition.js';
import { MetricsServer } from '../../metrics/server.js';
import { testpmdMetrics } from './metrics.js';
import { RateSampler } from './sampler.js';
import { Dashboard, type DashboardPoint } from '../../web/dashboard.js';
import { Ring } from '../../ring/ring.js';
import { registerEal, registerEthdev, registerMempools, registerRings } from '../../telemetry/commands.js';
import { TelemetryInUseError, TelemetryServer } from '../../telemetry/server.js';
import { TelemetryRegistry } from '../../telemetry/telemetry.js';
import type { TestpmdOptions } from './options.js';
import type { Testpmd } from './testpmd.js';

/** The program name /eal/params shows first, as DPDK shows argv[0]. */
const PROGRAM = 'dpkit-testpmd';

/** What `startObservers` started; `close` stops it all and removes the socket file. */
export interface Observers {
  readonly telemetry: TelemetryServer | undefined;
  readonly metrics: MetricsServer | undefined;
  readonly web: Dashboard | undefined;
  close(): void;
}

/** Every pool in the heap, as this thread sees them (rte_mempool_walk). */
export function heapPools(pmd: Testpmd): Mempool[] {
  const out: Mempool[] = [];
  for (let id = 0; id < pmd.heap.nbPools; id++) {
    const mp = Mempool.byId(pmd.heap, id);
    if (mp) out.push(mp);
  }
  return out;
}

/** The telemetry commands of a testpmd: DPDK's, then dpkit's own under /dpkit. */
export function testpmdTelemetry(pmd: Testpmd, opts: TestpmdOptions): TelemetryRegistry {
  const reg = new TelemetryRegistry();
  registerEal(reg, PROGRAM, opts.observe.ealArgs, opts.observe.appArgs);
  registerEthdev(reg, pmd.ethdev, pmd.pool.bufLen);
  registerMempools(reg, () => heapPools(pmd));
  registerRings(reg, () => Ring.list(pmd.heap));
  reg.register('/dpkit/streams', "Returns each forwarding stream's ports, queues, lcore and counters. Takes no parameters", () =>
    pmd.streamStats().map(({ stats: _slot, ...s }) => ({ rx_port: s.rxPort, rx_queue: s.rxQueue, tx_port: s.txPort, tx_queue: s.txQueue, lcore: s.lcore, rx_packets: s.rxPackets, tx_packets: s.txPackets, fwd_dropped: s.fwdDropped })),
  );
  reg.register('/dpkit/lcores', 'Returns each forwarding lcore\'s busy and total time in ns (recorded with --record-core-cycles, --metrics or --web; null otherwise). Takes no parameters', () => {
    const cycles = new Map(pmd.lcoreCycles().map((c) => [c.lcore, c]));
    return pmd.fwdLcoreIds().map((lcore) => {
      const c = cycles.get(lcore);
      return {
        lcore,
        cpu: pmd.cpuOfLcore.get(lcore) ?? null,
        busy_ns: c ? Math.round(c.busyNs) : null,
        total_ns: c ? Math.round(c.totalNs) : null,
        busy_polls: c?.busyPolls ?? null,
        idle_polls: c?.idlePolls ?? null,
        packets: c?.packets ?? null,
      };
    });
  });
  return reg;
}

/**
 * Starts what the options ask for. A telemetry socket in use by another
 * process, or a directory that cannot be made, is one line on `warn` and no
 * telemetry, as EAL goes on without it.
 * @throws Error naming --metrics when its address cannot be listened on (what was started is closed).
 */
export async function startObservers(pmd: Testpmd, opts: TestpmdOptions, warn: (line: string) => void): Promise<Observers> {
  let telemetry: TelemetryServer | undefined;
  if (opts.observe.telemetry) {
    try {
      telemetry = new TelemetryServer(testpmdTelemetry(pmd, opts), opts.observe.filePrefix);
    } catch (e) {
      if (!(e instanceof TelemetryInUseError) && !(e instanceof Error && 'code' in e)) throw e;
      warn(`TELEMETRY: ${(e as Error).message}; no telemetry`);
    }
  }
  let metrics: MetricsServer | undefined;
  let web: Dashboard | undefined;
  const m = opts.observe.metrics;
  const w = opts.observe.web;
  try {
    if (m) metrics = await MetricsServer.listen(m.host, m.port, () => renderMetrics(testpmdMetrics(pmd)));
    if (w) web = await Dashboard.listen(w.host, w.port, 'dpkit testpmd', dashboardSampler(pmd));
  } catch (e) {
    telemetry?.close();
    metrics?.close();
    throw e;
  }
  const url = (a: { host: string }, port: number) => `http://${a.host.includes(':') ? `[${a.host}]` : a.host}:${port}`;
  if (metrics) warn(`Prometheus metrics on ${url(m!, metrics.port)}/metrics`);
  if (web) warn(`Dashboard on ${url(w!, web.port)}/`);
  return {
    telemetry,
    metrics,
    web,
    close: () => {
      telemetry?.close();
      metrics?.close();
      web?.close();
    },
  };
}

/**
 * The dashboard's points: per port rx/tx Mpps and Gbit/s and drops per
 * second (missed, errors, nombuf), per lcore busy % over the last period.
 */
function dashboardSampler(pmd: Testpmd): () => DashboardPoint {
  const rates = new RateSampler(pmd);
  let prevDrops = new Map<number, number>();
  let prevBusy = new Map<number, { busy: number; total: number }>();
  return () => {
    const s = rates.sample();
    const mpps: Record<string, number> = {};
    const gbps: Record<string, number> = {};
    const drops: Record<string, number> = {};
    const totals: Record<string, number> = {};
    const dropsNow = new Map<number, number>();
    for (const p of s.ports) {
      mpps[`rx ${p.port}`] = p.rxPps / 1e6;
      mpps[`tx ${p.port}`] = p.txPps / 1e6;
      gbps[`rx ${p.port}`] = p.rxBps / 1e9;
      gbps[`tx ${p.port}`] = p.txBps / 1e9;
      const d = p.imissed + p.ierrors + p.oerrors + p.rxNombuf;
      dropsNow.set(p.port, d);
      const before = prevDrops.get(p.port);
      drops[`port ${p.port}`] = before !== undefined && s.interval > 0 && d >= before ? (d - before) / s.interval : 0;
      totals[`rx ${p.port}`] = p.ipackets;
      totals[`tx ${p.port}`] = p.opackets;
    }
    prevDrops = dropsNow;
    const busy: Record<string, number> = {};
    const busyNow = new Map<number, { busy: number; total: number }>();
    for (const c of pmd.lcoreCycles()) {
      busyNow.set(c.lcore, { busy: c.busyNs, total: c.totalNs });
      const b = prevBusy.get(c.lcore);
      // A restart zeroes the block: compare with the previous read only while it grew.
      const dt = b && c.totalNs > b.total ? c.totalNs - b.total : c.totalNs;
      const db = b && c.totalNs > b.total ? c.busyNs - b.busy : c.busyNs;
      busy[`lcore ${c.lcore}`] = pmd.forwarding && dt > 0 ? Math.min(100, (100 * db) / dt) : 0;
    }
    prevBusy = busyNow;
    return { time: s.time, forwarding: s.forwarding, totals, charts: { 'Mpps': mpps, 'Gbit/s': gbps, 'Drops per second': drops, 'Lcore busy %': busy } };
  };
}
