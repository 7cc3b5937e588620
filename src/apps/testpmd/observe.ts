/**
 * testpmd seen from outside while it runs: DPDK's telemetry socket (on by
 * default, as EAL's; --no-telemetry turns it off), Prometheus /metrics with
 * --metrics. Everything here runs on the main thread and only reads the
 * shared counters the lcores write.
 */
import { Mempool } from '../../mem/mempool.js';
import { renderMetrics } from '../../metrics/exposition.js';
import { MetricsServer } from '../../metrics/server.js';
import { testpmdMetrics } from './metrics.js';
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
  const m = opts.observe.metrics;
  try {
    if (m) metrics = await MetricsServer.listen(m.host, m.port, () => renderMetrics(testpmdMetrics(pmd)));
  } catch (e) {
    telemetry?.close();
    throw e;
  }
  if (metrics) warn(`Prometheus metrics on http://${m!.host.includes(':') ? `[${m!.host}]` : m!.host}:${metrics.port}/metrics`);
  return {
    telemetry,
    metrics,
    close: () => {
      telemetry?.close();
      metrics?.close();
    },
  };
}
