/**
 * `dpkit gen [EAL options] -- [gen options]`: the traffic generator's
 * command line. Streams come from options (one stream) or JSON files;
 * `--replay` plays a capture instead. Prints a per-stream account and one
 * verdict line; exits 3 when the asked rate was not kept.
 */
import { parseArgs } from 'node:util';
import { init } from '../../api/eal.js';
import { ArgError } from '../../errors.js';
import { fmtPps, generate, type GenPeriodReport, type GenReport, type GenStreamSpec } from '../../gen/generate.js';
import { searchRate, type SearchReport, type SearchTrial } from '../../gen/search.js';
import { replay } from '../../gen/replay.js';
import { generateOnLcores } from '../../api/generate-lcores.js';
import { readStreams, sizeOf } from '../../gen/spec-file.js';

export const GEN_USAGE = `Usage: dpkit gen [EAL options --] [options]

A traffic generator that tells the truth: streams paced to absolute
deadlines, and an account of every packet (sent, refused by a full tx ring,
not made, late). Exits 3, saying so in one line, when the asked rate was not
kept. Without EAL options it sends on one net_null port.

EAL options (before --): -l LIST, --lcores MAP, --vdev DEVARGS (the first
port sends; default net_null0), and DPDK's others (accepted, noted). With
worker lcores (-l 0-2: the main lcore 0 and workers 1, 2) every stream is
dealt over the workers by bursts, each sending its share on its own tx
queue (and with --latency receiving on its rx queue), from one start: the
same schedule at up to the workers' combined rate. --replay and --search
send from the main lcore alone.

Options:
  --rate R             packets or bits a second, or a share of the port's link:
                       1000, 2.5Mpps; 100Mbps, 10Gbps (the packet's bits, no FCS,
                       as obytes); 10Gbps-l2 (with the FCS: +4 B a packet, TRex's
                       L2); 10Gbps-l1 (on the wire: +24 B a packet for preamble,
                       gap and FCS; TRex's bpsl1); 50% (of the link's L1 rate:
                       100% of 10 Gbps at --size 60 is 14.88 Mpps); default 1Mpps
  --size N|MIN-MAX|imix  packet bytes without FCS (default 64); a range is stepped
  --duration S         seconds to send (default 10 without --count)
  --count N            packets per stream (with --duration: whichever comes first)
  --burst N            packets sent together at one deadline (default 32)
  --stream FILE.json   streams from a file (an object or a list; repeatable);
                       see docs/gen.md for the fields
  --port P             tx port (default 0)
  --replay FILE.pcap   send a capture at its own timing instead of streams
  --speed X            replay timing factor (default 1: as captured)
  --loops N            replay the file N times (default 1)
  --tolerance X        shortfall of the achieved rate still kept (default 0.001)
  --late-us N          a burst later than this is late (default 100)
  --latency            a probe in every packet (last 16 bytes): latency, loss,
                       duplicates and reordering of what comes back on --rx-port
  --rx-port P          with --latency or --search: where packets come back
                       (default the tx port: a loopback such as net_ring0)
  --period S           a live report every S seconds (a line per stream; with
                       --json one JSON object a line, NDJSON, the final report last)
  --search ndr|pdr     RFC 2544 throughput search: binary search on the rate for
                       the highest with no loss (ndr) or loss up to --loss-ratio
                       (pdr), counted on --rx-port after each trial's traffic stopped
  --search-max R       the highest rate tried, first (required with --search)
  --search-min R       the lowest rate worth a trial (default: the resolution)
  --resolution R       stop when pass and fail are this close (default 1 % of max)
  --trial S            seconds a trial sends (default 1)
  --loss-ratio X       pdr: the loss a passing trial may have (default 0.005)
  --datapath wasm|ts   kernels or their TypeScript twins (default wasm)
  --json               print the report as JSON
  -h, --help           this text
`;

interface GenCli {
  json: boolean;
  /** A generator run's report, or a search's. */
  report: GenReport | SearchReport;
  /** Live lines were printed (--period, --search): the final report is a line too. */
  lines: boolean;
}

/** Writes one NDJSON line. */
function line(o: object): void {
  process.stdout.write(JSON.stringify(o) + '\n');
}

/** A live report as text: a line per stream. */
function periodText(p: GenPeriodReport): string {
  return p.streams.map((s) => `[${(p.elapsedNs / 1e9).toFixed(3)} s] ${s.name.padEnd(12)} asked ${fmtPps(s.askedPps)}  achieved ${fmtPps(s.achievedPps)}  sent ${s.sent}/${s.planned}  tx-dropped ${s.txDropped}  late ${s.late}\n`).join('');
}

/** A search trial as text. */
function trialText(t: SearchTrial): string {
  return `trial ${t.trial}: ${fmtPps(t.ratePps).padStart(14)}  offered ${t.offered}  received ${t.received}  lost ${t.lost} (${(t.lossRatio * 100).toFixed(4)} %)  ${t.pass ? 'pass' : t.generatorKept ? 'FAIL' : 'FAIL (the generator did not keep the rate)'}\n`;
}

function num(v: string | undefined, what: string, integer = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new ArgError(`gen: --${what} ${v}: must be a positive ${integer ? 'integer' : 'number'}`);
  return n;
}

/** Runs `dpkit gen`. @returns the report and whether to print JSON */
export async function runGen(argv: readonly string[]): Promise<GenCli> {
  const sep = argv.indexOf('--');
  const ealArgs = sep >= 0 ? argv.slice(0, sep) : [];
  const genArgs = sep >= 0 ? argv.slice(sep + 1) : argv;
  let v;
  try {
    v = parseArgs({
      args: [...genArgs],
      strict: true,
      allowPositionals: false,
      options: {
        rate: { type: 'string' },
        size: { type: 'string' },
        duration: { type: 'string' },
        count: { type: 'string' },
        burst: { type: 'string' },
        stream: { type: 'string', multiple: true },
        port: { type: 'string' },
        replay: { type: 'string' },
        speed: { type: 'string' },
        loops: { type: 'string' },
        tolerance: { type: 'string' },
        'late-us': { type: 'string' },
        datapath: { type: 'string' },
        latency: { type: 'boolean' },
        'rx-port': { type: 'string' },
        period: { type: 'string' },
        search: { type: 'string' },
        'search-max': { type: 'string' },
        'search-min': { type: 'string' },
        resolution: { type: 'string' },
        trial: { type: 'string' },
        'loss-ratio': { type: 'string' },
        json: { type: 'boolean' },
      },
    }).values;
  } catch (e) {
    throw new ArgError(`gen: ${(e as Error).message.split('. To specify')[0]!.replace(/^Unknown option/, 'unknown option')} (dpkit gen --help lists the options)`);
  }
  if (v.datapath !== undefined && v.datapath !== 'wasm' && v.datapath !== 'ts') throw new ArgError(`gen: --datapath ${v.datapath}: must be wasm or ts`);
  if (v.replay !== undefined && (v.stream || v.size || v.rate)) throw new ArgError('gen: --replay sends the capture as it is: drop --stream, --size and --rate');
  if (v.replay === undefined && (v.speed || v.loops)) throw new ArgError('gen: --speed and --loops go with --replay');
  const count = num(v.count, 'count', true);
  const duration = num(v.duration, 'duration') ?? (count === undefined ? 10 : undefined);
  const port = v.port === undefined ? 0 : Number(v.port);
  if (!Number.isInteger(port) || port < 0) throw new ArgError(`gen: --port ${v.port}: must be a port number`);
  const streams = v.stream ? v.stream.flatMap((f) => readStreams(f)) : [{ ...(v.size !== undefined ? { size: sizeOf(v.size)! } : {}) }];
  const tolerance = v.tolerance === undefined ? undefined : Number(v.tolerance);
  if (tolerance !== undefined && !(tolerance >= 0 && tolerance < 1)) throw new ArgError(`gen: --tolerance ${v.tolerance}: must be in [0, 1)`);
  const lateUs = num(v['late-us'], 'late-us');
  const rxPort = v['rx-port'] === undefined ? port : Number(v['rx-port']);
  if (!Number.isInteger(rxPort) || rxPort < 0) throw new ArgError(`gen: --rx-port ${v['rx-port']}: must be a port number`);
  const search = v.search;
  if (search !== undefined && search !== 'ndr' && search !== 'pdr') throw new ArgError(`gen: --search ${search}: must be ndr or pdr`);
  if (v['rx-port'] !== undefined && !v.latency && search === undefined) throw new ArgError('gen: --rx-port goes with --latency or --search');
  const searchOnly = ['search-max', 'search-min', 'resolution', 'trial', 'loss-ratio'] as const;
  if (search === undefined && searchOnly.some((k) => v[k] !== undefined)) throw new ArgError(`gen: --${searchOnly.find((k) => v[k] !== undefined)} goes with --search`);
  if (search !== undefined) {
    if (v['search-max'] === undefined) throw new ArgError('gen: --search needs --search-max (the highest rate to try)');
    if (v.rate !== undefined || v.count !== undefined || v.duration !== undefined || v.latency || v.replay !== undefined) throw new ArgError('gen: --search sets the rate and the trial length: drop --rate, --count, --duration, --latency and --replay');
  }
  if (search === 'ndr' && v['loss-ratio'] !== undefined) throw new ArgError('gen: --loss-ratio goes with --search pdr (ndr allows no loss)');
  const lossRatio = v['loss-ratio'] === undefined ? undefined : Number(v['loss-ratio']);
  if (lossRatio !== undefined && !(lossRatio >= 0 && lossRatio < 1)) throw new ArgError(`gen: --loss-ratio ${v['loss-ratio']}: must be in [0, 1)`);
  const period = num(v.period, 'period');
  const json = v.json === true;

  const hasVdev = ealArgs.some((a) => a === '--vdev' || a.startsWith('--vdev='));
  const eal = init([...ealArgs, ...(hasVdev ? [] : ['--vdev', 'net_null0'])], { mbufs: 8191, datapath: v.datapath as 'wasm' | 'ts' | undefined });
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (!eal.ethdev.portIds().includes(port)) throw new ArgError(`gen: --port ${port}: no such port (${eal.ethdev.portIds().length} given)`);
    // Streams go out on a queue per worker lcore; a replay and a search from the main lcore.
    const workers = search === undefined && v.replay === undefined ? eal.workerLcores() : [];
    const nq = Math.max(1, workers.length);
    const setup = (p: number): void => {
      eal.ethdev.configure(p, nq, nq);
      for (let q = 0; q < nq; q++) {
        eal.ethdev.rxQueueSetup(p, q, 0, eal.pool);
        eal.ethdev.txQueueSetup(p, q, 0);
      }
      eal.ethdev.start(p);
    };
    setup(port);
    if ((v.latency || search !== undefined) && rxPort !== port) {
      if (!eal.ethdev.portIds().includes(rxPort)) throw new ArgError(`gen: --rx-port ${rxPort}: no such port`);
      setup(rxPort);
    }
    const common = {
      port,
      ...(duration !== undefined ? { duration } : {}),
      ...(v.burst !== undefined ? { burst: num(v.burst, 'burst', true)! } : {}),
      ...(tolerance !== undefined ? { tolerance } : {}),
      ...(lateUs !== undefined ? { lateNs: lateUs * 1000 } : {}),
      signal: stop.signal,
      ...(v.latency ? { latency: true, rxPort } : {}),
      ...(period !== undefined ? { period, onPeriod: (p: GenPeriodReport) => (json ? line({ type: 'period', ...p }) : process.stdout.write(periodText(p))) } : {}),
    };
    const report: GenReport | SearchReport =
      search !== undefined
        ? await searchRate(eal, {
            ...common,
            rxPort,
            streams: streams as GenStreamSpec[],
            search,
            maxRate: v['search-max']!,
            ...(v['search-min'] !== undefined ? { minRate: v['search-min'] } : {}),
            ...(v.resolution !== undefined ? { resolution: v.resolution } : {}),
            ...(v.trial !== undefined ? { trial: num(v.trial, 'trial')! } : {}),
            ...(lossRatio !== undefined ? { lossRatio } : {}),
            onTrial: (t) => (json ? line({ type: 'trial', ...t }) : process.stdout.write(trialText(t))),
          })
        : v.replay !== undefined
        ? await replay(eal, { ...common, file: v.replay, speed: num(v.speed, 'speed') ?? 1, loops: num(v.loops, 'loops', true) ?? 1 })
        : workers.length > 0
        ? await generateOnLcores(eal, { ...common, streams, lcores: workers, ...(v.rate !== undefined ? { rate: v.rate } : {}), ...(count !== undefined ? { count } : {}) })
        : await generate(eal, { ...common, streams, ...(v.rate !== undefined ? { rate: v.rate } : {}), ...(count !== undefined ? { count } : {}) });
    for (const p of new Set([port, rxPort])) if (eal.ethdev.isStarted(p)) eal.ethdev.stop(p);
    return { json, report, lines: period !== undefined || search !== undefined };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await eal.close();
  }
}

/** The report as text: a line per stream, then the verdict. */
export function reportText(r: GenReport): string {
  const rows = r.streams.map(
    (s) =>
      `  ${s.name.padEnd(12)} asked ${fmtPps(s.askedPps).padStart(14)}  achieved ${fmtPps(s.achievedPps).padStart(14)} ${(s.achievedBps / 1e6).toFixed(2).padStart(10)} Mbps  sent ${s.sent}/${s.planned}  tx-dropped ${s.txDropped}  no-mbuf ${s.noMbuf}  late ${s.late} (max ${(s.maxLateNs / 1e3).toFixed(1)} us)`,
  );
  const lat = r.streams
    .filter((s) => s.latency)
    .map((s) => {
      const l = s.latency!;
      const us = (ns: number) => (ns / 1e3).toFixed(1);
      return `  ${s.name.padEnd(12)} received ${l.received}  lost ${l.lost}  dup ${l.duplicates}  reordered ${l.reordered}  latency us min ${us(l.latency.min)} p50 ${us(l.latency.p50)} p99 ${us(l.latency.p99)} p99.9 ${us(l.latency.p999)} max ${us(l.latency.max)}`;
    });
  return `${[...rows, ...lat].join('\n')}\n${r.verdict}\n`;
}

/** `dpkit gen`'s entry. @returns 0, or 3 when the rate was not kept */
export async function genMain(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(GEN_USAGE);
    return 0;
  }
  const { json, report, lines } = await runGen(argv);
  // With live lines (--period, --search) the final report is one line too, so the output stays NDJSON.
  if ('search' in report) {
    if (json) line({ type: 'search', ...report, trials: undefined });
    else process.stdout.write(report.verdict + '\n');
    if (report.found) return 0;
    process.stderr.write(`dpkit gen: ${report.verdict}\n`);
    return 3;
  }
  process.stdout.write(json ? (lines ? JSON.stringify({ type: 'report', ...report }) : JSON.stringify(report, null, 2)) + '\n' : reportText(report));
  if (!report.kept && !report.interrupted) {
    process.stderr.write(`dpkit gen: ${report.verdict}\n`);
    return 3;
  }
  return 0;
}
