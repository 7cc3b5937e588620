/**
 * `dpkit gen [EAL options] -- [gen options]`: the traffic generator's
 * command line. Streams come from options (one stream) or JSON files;
 * `--replay` plays a capture instead. Prints a per-stream account and one
 * verdict line; exits 3 when the asked rate was not kept.
 */
import { parseArgs } from 'node:util';
import { init } from '../../api/eal.js';
import { ArgError } from '../../errors.js';
import { fmtPps, generate, type GenReport } from '../../gen/generate.js';
import { replay } from '../../gen/replay.js';
import { readStreams, sizeOf } from '../../gen/spec-file.js';

export const GEN_USAGE = `Usage: dpkit gen [EAL options --] [options]

A traffic generator that tells the truth: streams paced to absolute
deadlines, and an account of every packet (sent, refused by a full tx ring,
not made, late). Exits 3, saying so in one line, when the asked rate was not
kept. Without EAL options it sends on one net_null port.

EAL options (before --): -l LIST, --lcores MAP, --vdev DEVARGS (the first
port sends; default net_null0), and DPDK's others (accepted, noted).

Options:
  --rate R             packets or bits a second: 1000, 2.5Mpps, 100Mbps, 10Gbps
                       (frame bits without FCS); default 1Mpps
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
  --rx-port P          with --latency: where packets come back (default the tx
                       port: a loopback such as net_ring0)
  --datapath wasm|ts   kernels or their TypeScript twins (default wasm)
  --json               print the report as JSON
  -h, --help           this text
`;

interface GenCli {
  json: boolean;
  report: GenReport;
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
  if (v['rx-port'] !== undefined && !v.latency) throw new ArgError('gen: --rx-port goes with --latency');

  const hasVdev = ealArgs.some((a) => a === '--vdev' || a.startsWith('--vdev='));
  const eal = init([...ealArgs, ...(hasVdev ? [] : ['--vdev', 'net_null0'])], { mbufs: 8191, datapath: v.datapath as 'wasm' | 'ts' | undefined });
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (!eal.ethdev.portIds().includes(port)) throw new ArgError(`gen: --port ${port}: no such port (${eal.ethdev.portIds().length} given)`);
    eal.ethdev.configure(port, 1, 1);
    eal.ethdev.rxQueueSetup(port, 0, 0, eal.pool);
    eal.ethdev.txQueueSetup(port, 0, 0);
    eal.ethdev.start(port);
    if (v.latency && rxPort !== port) {
      if (!eal.ethdev.portIds().includes(rxPort)) throw new ArgError(`gen: --rx-port ${rxPort}: no such port`);
      eal.ethdev.configure(rxPort, 1, 1);
      eal.ethdev.rxQueueSetup(rxPort, 0, 0, eal.pool);
      eal.ethdev.txQueueSetup(rxPort, 0, 0);
      eal.ethdev.start(rxPort);
    }
    const common = {
      port,
      ...(duration !== undefined ? { duration } : {}),
      ...(v.burst !== undefined ? { burst: num(v.burst, 'burst', true)! } : {}),
      ...(tolerance !== undefined ? { tolerance } : {}),
      ...(lateUs !== undefined ? { lateNs: lateUs * 1000 } : {}),
      signal: stop.signal,
      ...(v.latency ? { latency: true, rxPort } : {}),
    };
    const report =
      v.replay !== undefined
        ? await replay(eal, { ...common, file: v.replay, speed: num(v.speed, 'speed') ?? 1, loops: num(v.loops, 'loops', true) ?? 1 })
        : await generate(eal, { ...common, streams, ...(v.rate !== undefined ? { rate: v.rate } : {}), ...(count !== undefined ? { count } : {}) });
    for (const p of new Set([port, rxPort])) if (eal.ethdev.isStarted(p)) eal.ethdev.stop(p);
    return { json: v.json === true, report };
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
  const { json, report } = await runGen(argv);
  process.stdout.write(json ? JSON.stringify(report, null, 2) + '\n' : reportText(report));
  if (!report.kept && !report.interrupted) {
    process.stderr.write(`dpkit gen: ${report.verdict}\n`);
    return 3;
  }
  return 0;
}
