/**
 * testpmd's command line: EAL options (eal/options.ts), `--`, then
 * testpmd's own options, as DPDK's.
 */
import { parseArgs } from 'node:util';
import { ArgError } from '../../errors.js';
import { detectedCpus, type CpuMap } from '../../eal/affinity.js';
import { parseEalArgs, type EalAppHint } from '../../eal/options.js';
import { parseMac } from '../../net/ether.js';
import { MAX_PKT_BURST, type GenFwdConfig } from '../../fwd/engine.js';
import { readStreams, sizeOf } from '../../gen/spec-file.js';
import { macswapStudy, parseVariant, studiesUsage, type EngineVariants } from '../../fwd/variants.js';

export type PortTopology = 'paired' | 'chained' | 'loop';

export interface TestpmdOptions {
  /** Lcore ids from -l / --lcores, main lcore first. */
  lcores: number[];
  /** CPU sets given by --lcores (lcore@cpus); absent lcores follow EAL's lcore N on CPU N. */
  lcoreCpus: CpuMap | undefined;
  mainLcore: number;
  vdevs: string[];
  interactive: boolean;
  autoStart: boolean;
  forwardMode: string;
  nbCores: number;
  rxq: number;
  txq: number;
  rxd: number;
  txd: number;
  burst: number;
  mbcache: number;
  mbufSize: number;
  totalNumMbufs: number;
  txPkts: number[];
  txFreeThresh: number;
  txRsThresh: number;
  /** rx_free_thresh of every rx queue (0: the driver's default). */
  rxFreeThresh: number;
  /** RTE_ETH_TX_OFFLOAD_* bits of every port (--tx-offloads), e.g. MBUF_FAST_FREE 0x10000. */
  txOffloads: number;
  statsPeriod: number;
  ethPeers: Map<number, Uint8Array>;
  portTopology: PortTopology;
  txFirst: boolean;
  /** dpkit: bursts --tx-first sends on each stream (interactive `start tx_first N`), default 1. */
  txFirstBursts: number;
  txOnlyMultiFlow: boolean;
  flowgenFlows: number;
  txIp: [number, number] | undefined;
  txUdp: [number, number] | undefined;
  /** dpkit: forward for this many seconds, then print the final statistics and exit. */
  duration: number;
  /** dpkit: final statistics as JSON on stdout. */
  json: boolean;
  /** dpkit: 'wasm' (default) or 'ts' for the TypeScript twins of the kernels. */
  datapath: 'wasm' | 'ts';
  /** dpkit: the arm of each study the engines run (src/fwd/variants.ts), e.g. macswap's from --macswap-kernel. */
  variants: EngineVariants;
  /** dpkit: the gen forward mode's streams and settings (--gen-*). */
  gen: Pick<GenFwdConfig, 'streams' | 'rate' | 'count' | 'latency'>;
  /** One line each: options accepted for compatibility that change nothing here. */
  notes: string[];
  /** Observability (src/apps/testpmd/observe.ts): telemetry socket, metrics, dashboard, cycles. */
  observe: ObserveOptions;
}

export interface ObserveOptions {
  /** EAL's --file-prefix (default `rte`): the telemetry socket's directory. */
  filePrefix: string;
  /** EAL's --telemetry (default) / --no-telemetry. */
  telemetry: boolean;
  /** The argv before and after `--`, for /eal/params and /eal/app_params. */
  ealArgs: string[];
  appArgs: string[];
  /** --metrics=[HOST:]PORT: Prometheus /metrics. */
  metrics: { host: string; port: number } | undefined;
  /** --web=[HOST:]PORT: the live dashboard. */
  web: { host: string; port: number } | undefined;
  /** --record-core-cycles: per-lcore busy and total time. */
  recordCoreCycles: boolean;
  /** --record-burst-stats: rx and tx burst size spreads. */
  recordBurstStats: boolean;
}

export const TESTPMD_USAGE = `Usage: dpkit testpmd [EAL options] -- [testpmd options]

EAL options:
  -l CORELIST            lcores to use, e.g. 0-1 (first is the main lcore; CPUs of this machine)
  -c COREMASK            the same as a hex mask, e.g. 0x3
  --lcores MAP           lcore map, e.g. 0@0,1@1,2@0 (lcore@CPUs: more lcores than CPUs)
  --main-lcore ID        main lcore (default: the first)
  --vdev DEVARGS         add a virtual device (repeatable): net_null0,size=64  net_ring0
  --no-huge --no-pci -m MB -n N -a/--allow -b/--block --file-prefix P --log-level L
  --in-memory and DPDK 22.11's other EAL options
                         accepted for compatibility; they change nothing here

testpmd options:
  -i, --interactive      interactive prompt
  -a, --auto-start       start forwarding at once (with -i)
  --forward-mode=MODE    io mac macswap 5tswap rxonly txonly flowgen icmpecho csum rxprobe gen
                         or a user engine module: ./engine.js, ./engine.ts
  --nb-cores=N           forwarding lcores (default 1)
  --rxq=N --txq=N        queues per port (default 1)
  --rxd=N --txd=N        descriptors per queue (default: the driver's)
  --burst=N              packets per burst (default 32, max 512)
  --mbcache=N            mempool cache per lcore (default 250)
  --mbuf-size=N          mbuf data room incl. headroom (default 2176)
  --total-num-mbufs=N    mbufs in the pool (default: testpmd's formula)
  --txpkts=A[,B...]      segment lengths of generated packets (default 64)
  --txfreet=N --txrst=N  tx free / RS-bit thresholds
  --rxfreet=N            rx free threshold (descriptors refilled at once)
  --tx-offloads=0xN      tx offload bits of every port, e.g. 0x10000 (MBUF_FAST_FREE)
  --stats-period=S       print port statistics every S seconds
  --eth-peer=P,MAC       peer address of port P (repeatable)
  --port-topology=T      paired (default), chained or loop
  --tx-first             send a burst of txonly packets before forwarding
  --txonly-multi-flow    vary the source address of generated packets
  --flowgen-flows=N      flows for flowgen (default 1024)
  --tx-ip=SRC,DST        addresses of generated packets
  --tx-udp=SRC[,DST]     UDP ports of generated packets
dpkit options:
  --duration=S           forward S seconds, print the final statistics, exit
  --json                 final statistics as JSON on stdout (messages go to stderr); with
                         --stats-period also one JSON line per period (JSON lines)
  --datapath=wasm|ts     WebAssembly kernels (default) or their TypeScript twins
  --record-core-cycles   per-lcore busy time (ns: JavaScript has no TSC) in the forward statistics
  --record-burst-stats   rx/tx burst size spread in the forward statistics
  --metrics=[HOST:]PORT  Prometheus /metrics (HOST default 127.0.0.1)
  --web=[HOST:]PORT      live dashboard page (HOST default 127.0.0.1)
  --file-prefix P / --no-telemetry (EAL): DPDK telemetry v2 socket at
                         /var/run/dpdk/P/dpdk_telemetry.v2 (dpdk-telemetry.py -f P)
  --gen-rate=R           gen: rate of streams that name none (default 1Mpps; pps, kpps, Mpps;
                         Mbps, Gbps without FCS, Gbps-l2 with it, Gbps-l1 on the wire; N% of the link)
  --gen-size=N|A-B|imix  gen: packet bytes of the default stream (default 64)
  --gen-stream=FILE      gen: streams from a JSON file (repeatable; docs/gen.md), split over
                         the forwarding streams, so over --nb-cores lcores
  --gen-count=N          gen: packets per stream, then it stops sending
  --gen-latency          gen: a probe in every packet, checked on the streams' rx queues
  --tx-first-bursts=N    with --tx-first, N bursts per stream (start tx_first N), e.g. to fill
                         a loop of cabled net_nicsim ports
Study arms (docs/glossary.md, "The studies"; the default is the measured winner):
${studiesUsage()}`;

export { formatCoreList, parseCoreList, parseCoreMask, parseLcoreMap } from '../../eal/options.js';

const TESTPMD_IGNORED = ['no-flush-rx', 'no-lsc-interrupt', 'no-rmv-interrupt', 'disable-device-start'] as const;

/** testpmd's own options (after `--`), for node's parseArgs. */
const TESTPMD_OPTIONS = {
  interactive: { type: 'boolean', short: 'i' },
  'auto-start': { type: 'boolean', short: 'a' },
  'forward-mode': { type: 'string' },
  'nb-cores': { type: 'string' },
  rxq: { type: 'string' },
  txq: { type: 'string' },
  rxd: { type: 'string' },
  txd: { type: 'string' },
  burst: { type: 'string' },
  mbcache: { type: 'string' },
  'mbuf-size': { type: 'string' },
  'total-num-mbufs': { type: 'string' },
  txpkts: { type: 'string' },
  txfreet: { type: 'string' },
  txrst: { type: 'string' },
  rxfreet: { type: 'string' },
  'tx-offloads': { type: 'string' },
  'stats-period': { type: 'string' },
  'eth-peer': { type: 'string', multiple: true },
  'port-topology': { type: 'string' },
  'tx-first': { type: 'boolean' },
  'tx-first-bursts': { type: 'string' },
  'txonly-multi-flow': { type: 'boolean' },
  'flowgen-flows': { type: 'string' },
  'tx-ip': { type: 'string' },
  'tx-udp': { type: 'string' },
  duration: { type: 'string' },
  json: { type: 'boolean' },
  datapath: { type: 'string' },
  [macswapStudy.select.option]: { type: 'string' },
  metrics: { type: 'string' },
  web: { type: 'string' },
  'record-core-cycles': { type: 'boolean' },
  'record-burst-stats': { type: 'boolean' },
  'gen-rate': { type: 'string' },
  'gen-size': { type: 'string' },
  'gen-stream': { type: 'string', multiple: true },
  'gen-count': { type: 'string' },
  'gen-latency': { type: 'boolean' },
  ...Object.fromEntries(TESTPMD_IGNORED.map((k) => [k, { type: 'boolean' as const }])),
} as const;

const TESTPMD_HINT: EalAppHint = { name: 'testpmd', options: new Set(Object.keys(TESTPMD_OPTIONS)), help: 'dpkit testpmd --help' };

/**
 * Parses testpmd's command line. `cpus` are the CPUs this machine has (EAL's
 * detected cores), which -l and -c must name.
 * @throws ArgError naming the option, for anything DPDK would refuse.
 */
export function parseTestpmdArgs(argv: string[], cpus: number[] = detectedCpus()): TestpmdOptions {
  const sep = argv.indexOf('--');
  const eal = sep >= 0 ? argv.slice(0, sep) : argv;
  const app = sep >= 0 ? argv.slice(sep + 1) : [];
  const { lcores, lcoreCpus, mainLcore, vdevs, notes, filePrefix, telemetry } = parseEalArgs(eal, TESTPMD_HINT, cpus);

  const a = parseArgs({ args: app, allowPositionals: false, strict: true, options: TESTPMD_OPTIONS }).values as Record<string, string | boolean | string[] | undefined>;

  for (const k of TESTPMD_IGNORED) if (a[k]) notes.push(`--${k} accepted and ignored`);

  const str = (k: string) => (typeof a[k] === 'string' ? (a[k] as string) : undefined);
  const optInt = (k: string, dflt: number, min: number, max: number) => (str(k) === undefined ? dflt : int(`--${k}`, str(k)!, min, max));

  const fwdLcores = lcores.filter((l) => l !== mainLcore);
  const nbCores = optInt('nb-cores', 1, 1, 128);
  if (nbCores > fwdLcores.length) {
    throw new ArgError(`--nb-cores=${nbCores}: only ${fwdLcores.length} forwarding lcore${fwdLcores.length === 1 ? '' : 's'} in the lcore list (${lcores.join(',')}, main ${mainLcore})`);
  }
  const mbcache = optInt('mbcache', 250, 0, 512);

  const ethPeers = new Map<number, Uint8Array>();
  for (const p of (a['eth-peer'] as string[] | undefined) ?? []) {
    const comma = p.indexOf(',');
    if (comma < 0) throw new ArgError(`--eth-peer=${p}: expected PORT,XX:XX:XX:XX:XX:XX`);
    ethPeers.set(int('--eth-peer port', p.slice(0, comma), 0, 31), parseMac(p.slice(comma + 1)));
  }

  const topology = str('port-topology') ?? 'paired';
  if (topology !== 'paired' && topology !== 'chained' && topology !== 'loop') {
    throw new ArgError(`--port-topology=${topology}: expected paired, chained or loop`);
  }
  const datapath = str('datapath') ?? 'wasm';
  if (datapath !== 'wasm' && datapath !== 'ts') throw new ArgError(`--datapath=${datapath}: expected wasm or ts`);

  const variants: EngineVariants = { macswap: parseVariant(macswapStudy, str(macswapStudy.select.option)) };
  const txPkts = str('txpkts') === undefined ? [64] : str('txpkts')!.split(',').map((s) => int('--txpkts', s, 1, 0xffff));
  const mbufSize = str('mbuf-size') === undefined ? 2176 : int('--mbuf-size', str('mbuf-size')!.split(',')[0]!, 64, 0xffff);
  const duration = str('duration') === undefined ? 0 : num('--duration', str('duration')!, 0.001, 86400 * 365);

  return {
    lcores,
    lcoreCpus,
    mainLcore,
    vdevs,
    interactive: a['interactive'] === true,
    autoStart: a['auto-start'] === true,
    forwardMode: str('forward-mode') ?? 'io',
    nbCores,
    rxq: optInt('rxq', 1, 1, 1024),
    txq: optInt('txq', 1, 1, 1024),
    rxd: optInt('rxd', 0, 0, 0xffff),
    txd: optInt('txd', 0, 0, 0xffff),
    burst: optInt('burst', 32, 1, MAX_PKT_BURST),
    mbcache,
    mbufSize,
    totalNumMbufs: optInt('total-num-mbufs', (2048 + nbCores * mbcache + 2048 + MAX_PKT_BURST) * 32, 1, 0x3fffffff),
    txPkts,
    txFreeThresh: optInt('txfreet', 0, 0, 0xffff),
    txRsThresh: optInt('txrst', 0, 0, 0xffff),
    rxFreeThresh: optInt('rxfreet', 0, 0, 0xffff),
    txOffloads: str('tx-offloads') === undefined ? 0 : hexOrInt('--tx-offloads', str('tx-offloads')!),
    statsPeriod: optInt('stats-period', 0, 0, 86400),
    ethPeers,
    portTopology: topology,
    txFirst: a['tx-first'] === true || str('tx-first-bursts') !== undefined,
    txFirstBursts: optInt('tx-first-bursts', 1, 1, 1 << 20),
    txOnlyMultiFlow: a['txonly-multi-flow'] === true,
    flowgenFlows: optInt('flowgen-flows', 1024, 1, 1 << 24),
    txIp: str('tx-ip') === undefined ? undefined : pair('--tx-ip', str('tx-ip')!, ipv4),
    txUdp: str('tx-udp') === undefined ? undefined : udpPorts(str('tx-udp')!),
    duration,
    json: a['json'] === true,
    datapath,
    variants,
    gen: {
      streams: a['gen-stream'] ? (a['gen-stream'] as string[]).flatMap((f) => readStreams(f, 'testpmd: --gen-stream')) : [str('gen-size') === undefined ? {} : { size: sizeOf(str('gen-size'), 'testpmd: --gen-size')! }],
      rate: str('gen-rate') ?? '1Mpps',
      ...(str('gen-count') === undefined ? {} : { count: int('--gen-count', str('gen-count')!, 1, Number.MAX_SAFE_INTEGER) }),
      latency: a['gen-latency'] === true,
    },
    notes,
    observe: {
      filePrefix,
      telemetry,
      ealArgs: eal,
      appArgs: app,
      metrics: str('metrics') === undefined ? undefined : hostPort('--metrics', str('metrics')!),
      web: str('web') === undefined ? undefined : hostPort('--web', str('web')!),
      recordCoreCycles: a['record-core-cycles'] === true,
      recordBurstStats: a['record-burst-stats'] === true,
    },
  };
}

/** `[HOST:]PORT` of a listening option; HOST defaults to localhost (nothing is exposed unless asked). */
function hostPort(what: string, v: string): { host: string; port: number } {
  const colon = v.lastIndexOf(':');
  const host = colon < 0 ? '127.0.0.1' : v.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new ArgError(`${what}=${v}: expected [HOST:]PORT`);
  return { host, port: int(what, colon < 0 ? v : v.slice(colon + 1), 0, 65535) };
}

function int(what: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isInteger(n) || n < min || n > max) throw new ArgError(`${what}=${v}: expected an integer in [${min}, ${max}]`);
  return n;
}

/** An offload mask as testpmd takes it: 0x hex or decimal, 32 bits here (dpkit's offload bits are all below 2^32). */
function hexOrInt(what: string, v: string): number {
  const n = /^0x[0-9a-f]+$/i.test(v) ? parseInt(v.slice(2), 16) : /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n > 0xffffffff) throw new ArgError(`${what}=${v}: expected a mask such as 0x10000`);
  return n;
}

function num(what: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new ArgError(`${what}=${v}: expected a number in [${min}, ${max}]`);
  return n;
}

function ipv4(what: string, v: string): number {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(v);
  if (!m || m.slice(1).some((x) => Number(x) > 255)) throw new ArgError(`${what}: '${v}' is not an IPv4 address`);
  return ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
}

function pair(what: string, v: string, conv: (what: string, s: string) => number): [number, number] {
  const parts = v.split(',');
  if (parts.length !== 2) throw new ArgError(`${what}=${v}: expected SRC,DST`);
  return [conv(what, parts[0]!), conv(what, parts[1]!)];
}

function udpPorts(v: string): [number, number] {
  const parts = v.split(',');
  if (parts.length > 2) throw new ArgError(`--tx-udp=${v}: expected SRC[,DST]`);
  const src = int('--tx-udp', parts[0]!, 0, 0xffff);
  return [src, parts[1] === undefined ? src : int('--tx-udp', parts[1], 0, 0xffff)];
}
