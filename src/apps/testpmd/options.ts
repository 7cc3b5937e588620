/**
 * testpmd's command line: EAL options, `--`, then testpmd's own options, as
 * DPDK's. Every EAL option DPDK 22.11 documents is accepted: the lcore ones
 * (-l, -c, --lcores, --main-lcore) and --vdev act; the ones dpkit has no use
 * for (hugepages, PCI, memory, file prefix, tracing, …) are noted in one line
 * each so a pasted command runs.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { ArgError } from '../../errors.js';
import { detectedCpus, type CpuMap } from '../../eal/affinity.js';
import { parseMac } from '../../net/ether.js';
import { MAX_PKT_BURST } from '../../fwd/engine.js';
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
  /** One line each: options accepted for compatibility that change nothing here. */
  notes: string[];
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
  --forward-mode=MODE    io mac macswap 5tswap rxonly txonly flowgen icmpecho csum
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
  --json                 final statistics as JSON on stdout (messages go to stderr)
  --datapath=wasm|ts     WebAssembly kernels (default) or their TypeScript twins
  --tx-first-bursts=N    with --tx-first, N bursts per stream (start tx_first N), e.g. to fill
                         a loop of cabled net_nicsim ports
Study arms (docs/glossary.md, "The studies"; the default is the measured winner):
${studiesUsage()}`;

/** DPDK 22.11's EAL options that mean nothing here (doc/guides/linux_gsg/linux_eal_parameters.rst): flags, */
const EAL_IGNORED = [
  'no-huge', 'no-pci', 'in-memory', 'no-shconf', 'no-telemetry', 'telemetry', 'create-uio-dev', 'no-hpet',
  'vmware-tsc-map', 'legacy-mem', 'single-file-segments', 'match-allocations', 'v',
] as const;
/** options with a value, */
const EAL_IGNORED_VALUE = [
  'm', 'n', 'r', 'd', 's', 'S', 'a', 'allow', 'b', 'block', 'file-prefix', 'log-level', 'socket-mem', 'socket-limit',
  'proc-type', 'huge-dir', 'iova-mode', 'base-virtaddr', 'mbuf-pool-ops-name', 'syslog', 'vfio-intr', 'vfio-vf-token',
  'trace', 'trace-dir', 'trace-bufsz', 'trace-mode', 'force-max-simd-bitwidth',
] as const;
/** and options whose value is optional (`--huge-unlink` or `--huge-unlink=never`). */
const EAL_IGNORED_OPTIONAL = ['huge-unlink', 'huge-worker-stack'] as const;
const TESTPMD_IGNORED = ['no-flush-rx', 'record-core-cycles', 'record-burst-stats', 'no-lsc-interrupt', 'no-rmv-interrupt', 'disable-device-start'] as const;

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
  ...Object.fromEntries(TESTPMD_IGNORED.map((k) => [k, { type: 'boolean' as const }])),
} as const;

/**
 * Parses testpmd's command line. `cpus` are the CPUs this machine has (EAL's
 * detected cores), which -l and -c must name.
 * @throws ArgError naming the option, for anything DPDK would refuse.
 */
export function parseTestpmdArgs(argv: string[], cpus: number[] = detectedCpus()): TestpmdOptions {
  const sep = argv.indexOf('--');
  const eal = sep >= 0 ? argv.slice(0, sep) : argv;
  const app = sep >= 0 ? argv.slice(sep + 1) : [];
  const notes: string[] = [];

  const e = parseEal(eal);

  for (const k of [...EAL_IGNORED, ...EAL_IGNORED_VALUE, ...EAL_IGNORED_OPTIONAL]) {
    if (e[k] !== undefined) notes.push(`EAL option ${k.length === 1 ? '-' : '--'}${k} accepted and ignored: dpkit needs no hugepages, PCI or EAL files`);
  }

  const given = (['l', 'c', 'lcores'] as const).filter((k) => e[k] !== undefined);
  if (given.length > 1) throw new ArgError(`${given.map((k) => (k.length === 1 ? '-' : '--') + k).join(' and ')}: give one of -l, -c and --lcores, as EAL takes`);
  let lcores: number[];
  let lcoreCpus: CpuMap | undefined;
  if (typeof e['lcores'] === 'string') {
    ({ lcores, cpus: lcoreCpus } = parseLcoreMap(e['lcores']));
  } else if (typeof e['l'] === 'string') {
    lcores = onThisMachine(parseCoreList(e['l'], '-l'), `-l ${e['l']}: invalid core list`, cpus);
  } else if (typeof e['c'] === 'string') {
    lcores = onThisMachine(parseCoreMask(e['c']), `-c ${e['c']}: invalid coremask`, cpus);
  } else {
    lcores = range(0, availableParallelism() - 1);
  }
  let mainLcore = lcores[0]!;
  if (typeof e['main-lcore'] === 'string') {
    mainLcore = int('--main-lcore', e['main-lcore'], 0, 127);
    if (!lcores.includes(mainLcore)) throw new ArgError(`--main-lcore ${mainLcore} is not in the lcore list ${lcores.join(',')}`);
  }

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
    vdevs: (e['vdev'] as string[] | undefined) ?? [],
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
    notes,
  };
}

type Values = Record<string, string | boolean | string[] | undefined>;

function parseEal(args: string[]): Values {
  // An optional value is given with '=' or not at all: make the bare form take an empty one.
  const optional = new Set(EAL_IGNORED_OPTIONAL.map((k) => `--${k}`));
  args = args.map((a) => (optional.has(a) ? `${a}=` : a));
  const flag = (k: string) => [k, { type: 'boolean' as const, ...(k.length === 1 ? { short: k } : {}) }];
  const valued = (k: string) => [k, { type: 'string' as const, multiple: true, ...(k.length === 1 ? { short: k } : {}) }];
  try {
    return parseArgs({
      args,
      allowPositionals: false,
      strict: true,
      options: {
        l: { type: 'string', short: 'l' },
        c: { type: 'string', short: 'c' },
        lcores: { type: 'string' },
        'main-lcore': { type: 'string' },
        vdev: { type: 'string', multiple: true },
        ...Object.fromEntries(EAL_IGNORED.map(flag)),
        ...Object.fromEntries([...EAL_IGNORED_VALUE, ...EAL_IGNORED_OPTIONAL].map(valued)),
      },
    }).values as Values;
  } catch (err) {
    const m = err instanceof Error ? /Unknown option '(-[^']*)'/.exec(err.message) : null;
    const name = m?.[1]!.replace(/^--?/, '') ?? '';
    if (m && name in TESTPMD_OPTIONS) throw new ArgError(`unknown EAL option '${m[1]}' (testpmd's own options go after --, as with DPDK)`);
    if (m) throw new ArgError(`unknown EAL option '${m[1]}' (dpkit testpmd --help lists the options)`);
    throw err;
  }
}

/** Parses a DPDK core list: "0-3,5". */
export function parseCoreList(text: string, what: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new ArgError(`${what} ${text}: '${part}' is not a core number or range`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi > 127) throw new ArgError(`${what} ${text}: bad range '${part}' (lcores are 0..127)`);
    for (let i = lo; i <= hi; i++) if (!out.includes(i)) out.push(i);
  }
  if (out.length === 0) throw new ArgError(`${what}: empty core list`);
  return out;
}

/** Parses an EAL coremask: hex, 0x optional, bit N for lcore N. */
export function parseCoreMask(text: string): number[] {
  const hex = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-f]+$/i.test(hex)) throw new ArgError(`-c ${text}: not a hexadecimal coremask such as 0x3`);
  const out: number[] = [];
  for (let i = 0; i < hex.length; i++) {
    const nibble = parseInt(hex[hex.length - 1 - i]!, 16);
    for (let b = 0; b < 4; b++) if (nibble & (1 << b)) out.push(i * 4 + b);
  }
  if (out.length === 0 || out[out.length - 1]! > 127) throw new ArgError(`-c ${text}: no lcore in 0..127`);
  return out;
}

/** EAL's check of -l and -c (update_lcore_config): every lcore a CPU this machine has. */
function onThisMachine(lcores: number[], what: string, cpus: number[]): number[] {
  if (cpus.length > 0 && lcores.some((l) => !cpus.includes(l))) throw new ArgError(`${what}, please check specified cores are part of ${formatCoreList(cpus)} (--lcores with @ puts more lcores on them)`);
  return lcores;
}

/** "0-3,6": a core list as EAL prints one. */
export function formatCoreList(cores: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < cores.length; ) {
    let j = i;
    while (j + 1 < cores.length && cores[j + 1] === cores[j]! + 1) j++;
    parts.push(j > i ? `${cores[i]}-${cores[j]}` : `${cores[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Parses --lcores as EAL does: items of LCORES[@CPUS], each side N, N-M or a
 * (list). An lcore without @ runs on the CPU of its own number.
 */
export function parseLcoreMap(text: string): { lcores: number[]; cpus: CpuMap } {
  const lcores: number[] = [];
  const cpus: CpuMap = new Map();
  // Split on commas outside parentheses.
  const items = text.match(/(\([^)]*\)|[^,()]+)+/g) ?? [];
  const group = (t: string) => parseCoreList(t.replace(/^\(|\)$/g, ''), '--lcores');
  for (const item of items) {
    const [set, on, extra] = item.split('@');
    if (extra !== undefined || on === '') throw new ArgError(`--lcores ${text}: '${item}' is not LCORES[@CPUS]`);
    for (const id of group(set!)) {
      if (cpus.has(id)) throw new ArgError(`--lcores ${text}: lcore ${id} given twice`);
      lcores.push(id);
      cpus.set(id, on === undefined ? [id] : group(on));
    }
  }
  if (lcores.length === 0) throw new ArgError(`--lcores ${text}: no lcore`);
  return { lcores, cpus };
}

function range(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let i = lo; i <= hi; i++) out.push(i);
  return out;
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
