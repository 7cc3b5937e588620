/**
 * The generator on several lcores: every stream is dealt over the lcores by
 * bursts (split.ts), each lcore sending its share on its own tx queue (queue
 * i for the i-th lcore) from one common t0, so their sum is the schedule one
 * lcore would keep, at up to the lcores' combined rate. The main thread
 * reserves every account block, starts the lcores together, prints live
 * reports from the blocks, and merges them into one report per stream.
 */
import { setTimeout as sleepMs } from 'node:timers/promises';
import type { Eal } from './eal.js';
import { nowNs } from '../eal/clock.js';
import { ArgError } from '../errors.js';
import { checkRunOptions, newGenTxStats, planStreams, rateLink, runReport, streamReport, type GenerateOptions, type GenReport, type PlannedStream } from '../gen/generate.js';
import { GEN_TX_STATS_SIZE, GENT_D_LAST_DEPART_NS, GENT_D_MAX_LATE_NS, GENT_D_T0 } from '../gen/gen-layout.js';
import { GO_BYTES, GO_READY, GO_START, type GenLcoreArgs, type GenLcorePart } from './gen-lcore.js';
import { ProbeRx, ProbeTx, probeStreamStats } from '../gen/probe.js';

/** What `generateOnLcores` takes: `generate`'s options (but the thread-bound clock and onBurst hook), and the lcores. */
export interface GenerateOnLcoresOptions extends Omit<GenerateOptions, 'clock' | 'onBurst' | 'queue'> {
  /** The lcores that send: the i-th sends on tx queue i of `port` (and with latency receives on rx queue i of `rxPort`). Default every worker lcore. */
  lcores?: readonly number[];
}

/** The t0 lcores start from is this far past the moment all are ready: a start in the past would count as late. */
const START_LEAD_NS = 2e6;
/** How often the main thread looks at a run with no live reports (a stop signal, the lcores' end). */
const WATCH_MS = 50;

/**
 * Sends `opts.streams` from several lcores, each stream's schedule dealt over
 * them by bursts, and accounts for every packet as `generate` does. The port
 * must be started with a tx queue per lcore (and with latency, `rxPort` an rx
 * queue per lcore).
 * @returns the merged report.
 * @throws ArgError on a bad spec or option, or a port without a queue per
 *   lcore; LaunchError when an lcore fails.
 */
export async function generateOnLcores(eal: Eal, opts: GenerateOnLcoresOptions): Promise<GenReport> {
  const { heap, ethdev } = eal;
  checkRunOptions(opts);
  if (opts.duration === undefined && opts.count === undefined) throw new ArgError('gen: give a duration, a count or both');
  if (!Array.isArray(opts.streams) || opts.streams.length === 0) throw new ArgError('gen: no stream');
  if (opts.pool !== undefined) throw new ArgError('gen: on lcores the packets come from the default pool (each lcore with its cache): drop pool');
  const lcores = [...(opts.lcores ?? eal.workerLcores())];
  if (lcores.length === 0) throw new ArgError('gen: no worker lcore to send from (give init two lcores or more)');
  const port = opts.port ?? 0;
  const rxPort = opts.rxPort ?? port;
  const burst = opts.burst ?? 32;
  const tolerance = opts.tolerance ?? 0.001;
  const lateNs = opts.lateNs ?? 100_000;
  const durationNs = opts.duration === undefined ? Infinity : opts.duration * 1e9;
  const queues = lcores.map((_, i) => i);
  const n = lcores.length;
  if (ethdev.nbTxQueues(port) < n) throw new ArgError(`gen: port ${port} has ${ethdev.nbTxQueues(port)} tx queues: ${n} lcores send on tx queues 0..${n - 1}`);
  if (opts.latency && ethdev.nbRxQueues(rxPort) < n) throw new ArgError(`gen: port ${rxPort} has ${ethdev.nbRxQueues(rxPort)} rx queues: with latency, ${n} lcores receive on rx queues 0..${n - 1}`);
  const pool = eal.pool;
  const link = rateLink(ethdev, port);
  // Checked and planned here (each lcore plans its share the same way): the report needs each stream's whole schedule.
  const planned: PlannedStream[] = planStreams(opts.streams, opts.rate, ethdev.macAddr(port), pool.bufLen - pool.headroom, opts.count, durationNs, 0, link);
  const parts: GenLcorePart[] = queues.map((queue) => ({
    queue,
    stats: planned.map(() => newGenTxStats(heap)),
    ...(opts.latency ? { stampers: planned.map((_, k) => ProbeTx.create(heap, k).block), checker: ProbeRx.create(heap, { streams: planned.length }).block } : {}),
  }));
  const merged = planned.map(() => newGenTxStats(heap));
  const go = new SharedArrayBuffer(GO_BYTES);
  const args: GenLcoreArgs = {
    streams: [...opts.streams],
    ...(opts.rate !== undefined ? { rate: opts.rate } : {}),
    ...(opts.count !== undefined ? { count: opts.count } : {}),
    durationNs,
    port,
    rxPort,
    mac: ethdev.macAddr(port),
    linkMbps: link.mbps,
    burst,
    lateNs,
    parts,
    go,
  };

  const run = await eal.launch<void, GenLcoreArgs>(new URL('./gen-lcore.js', import.meta.url), { lcores, args });
  let done = false;
  const finished = run.wait().finally(() => (done = true));
  finished.catch(() => {});
  const stop = (): void => void run.stop().catch(() => {});
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    const sync = new Int32Array(go, 0, 2);
    while (!done && Atomics.load(sync, GO_READY) < lcores.length) await sleepMs(1);
    const t0 = nowNs() + START_LEAD_NS;
    new Float64Array(go, 8, 1)[0] = t0;
    Atomics.store(sync, GO_START, 1);

    /** Each stream's parts summed into its merged block. @returns the blocks */
    const merge = (): number[] => {
      const f64 = heap.f64;
      planned.forEach((_, k) => {
        const m = merged[k]!;
        f64.fill(0, m, m + GEN_TX_STATS_SIZE / 8);
        f64[m + GENT_D_T0] = t0;
        for (const p of parts) {
          const c = p.stats[k]!;
          for (let i = GENT_D_T0 + 1; i < GEN_TX_STATS_SIZE / 8; i++) {
            f64[m + i] = i === GENT_D_MAX_LATE_NS || i === GENT_D_LAST_DEPART_NS ? Math.max(f64[m + i]!, f64[c + i]!) : f64[m + i]! + f64[c + i]!;
          }
        }
      });
      return merged;
    };
    const periodNs = opts.onPeriod && opts.period !== undefined ? opts.period * 1e9 : Infinity;
    let nextPeriod = periodNs;
    let periods = 0;
    while (!done) {
      const wait = periodNs === Infinity ? WATCH_MS : Math.max(0, Math.min(WATCH_MS, (nextPeriod - (nowNs() - t0)) / 1e6));
      await Promise.race([finished.catch(() => {}), sleepMs(wait)]);
      const t = nowNs() - t0;
      if (!done && t >= nextPeriod) {
        const blocks = merge();
        opts.onPeriod!({ period: ++periods, elapsedNs: t, streams: planned.map((p, k) => streamReport(heap.f64, blocks[k]!, { name: p.b.name, pacer: p.pacer, planned: p.planned }, t, tolerance)) });
        nextPeriod = (Math.floor(t / periodNs) + 1) * periodNs;
      }
    }
    await finished;
    const endNs = nowNs() - t0;
    const interrupted = opts.signal?.aborted === true;
    const blocks = merge();
    const stopNs = interrupted ? Math.min(endNs, durationNs) : durationNs;
    const reports = planned.map((p, k) => streamReport(heap.f64, blocks[k]!, { name: p.b.name, pacer: p.pacer, planned: p.planned }, stopNs, tolerance));
    if (opts.latency) {
      const checkers = parts.map((p) => ProbeRx.attach(heap, p.checker!));
      reports.forEach((r, k) => {
        const stamped = parts.reduce((a, p) => a + ProbeTx.attach(heap, p.stampers![k]!).stamped, 0);
        r.latency = probeStreamStats(checkers, k, stamped);
      });
    }
    return runReport(reports, endNs, interrupted, lateNs);
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    if (!done) await run.stop().catch(() => {});
  }
}
