/**
 * EAL's command line (rte_eal_init's argv): the options before `--`. Every
 * EAL option DPDK 22.11 documents is accepted: the lcore ones (-l, -c,
 * --lcores, --main-lcore), --vdev, --file-prefix and --[no-]telemetry act;
 * the ones dpkit has no use for (hugepages, PCI, memory, tracing, …) are noted in one line
 * each so a pasted command runs. testpmd and the public `init(argv)` share it.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { ArgError } from '../errors.js';
import { detectedCpus, type CpuMap } from './affinity.js';

/** What EAL's options chose. */
export interface EalArgs {
  /** Lcore ids from -l / -c / --lcores, in the order given (default: one per CPU). */
  lcores: number[];
  /** CPU sets given by --lcores (lcore@cpus); absent lcores follow EAL's lcore N on CPU N. */
  lcoreCpus: CpuMap | undefined;
  /** --main-lcore, default the first lcore: the thread that runs the control plane. */
  mainLcore: number;
  /** --vdev devargs, in order. */
  vdevs: string[];
  /** --file-prefix (default `rte`): names the runtime directory, where the telemetry socket lives. */
  filePrefix: string;
  /** false with --no-telemetry: no telemetry socket (EAL's default is one). */
  telemetry: boolean;
  /** One line each: options accepted for compatibility that change nothing here. */
  notes: string[];
}

/** How an application names itself in EAL's errors: its own options (to say they go after `--`) and where help is. */
export interface EalAppHint {
  name: string;
  options: ReadonlySet<string>;
  help: string;
}

/** DPDK 22.11's EAL options that mean nothing here (doc/guides/linux_gsg/linux_eal_parameters.rst): flags, */
const EAL_IGNORED = [
  'no-huge', 'no-pci', 'in-memory', 'no-shconf', 'create-uio-dev', 'no-hpet',
  'vmware-tsc-map', 'legacy-mem', 'single-file-segments', 'match-allocations', 'v',
] as const;
/** options with a value, */
const EAL_IGNORED_VALUE = [
  'm', 'n', 'r', 'd', 's', 'S', 'a', 'allow', 'b', 'block', 'log-level', 'socket-mem', 'socket-limit',
  'proc-type', 'huge-dir', 'iova-mode', 'base-virtaddr', 'mbuf-pool-ops-name', 'syslog', 'vfio-intr', 'vfio-vf-token',
  'trace', 'trace-dir', 'trace-bufsz', 'trace-mode', 'force-max-simd-bitwidth',
] as const;
/** and options whose value is optional (`--huge-unlink` or `--huge-unlink=never`). */
const EAL_IGNORED_OPTIONAL = ['huge-unlink', 'huge-worker-stack'] as const;

/**
 * Parses EAL's options (the argv before `--`), as rte_eal_init does. `cpus`
 * are the CPUs this machine has (EAL's detected cores), which -l and -c must name.
 * @throws ArgError naming the option, for anything EAL would refuse.
 */
export function parseEalArgs(eal: string[], app: EalAppHint, cpus: number[] = detectedCpus()): EalArgs {
  const notes: string[] = [];
  const e = parseEal(eal, app);

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
    const v = e['main-lcore'];
    mainLcore = Number(v);
    if (!/^\d+$/.test(v) || mainLcore > 127) throw new ArgError(`--main-lcore=${v}: expected an integer in [0, 127]`);
    if (!lcores.includes(mainLcore)) throw new ArgError(`--main-lcore ${mainLcore} is not in the lcore list ${lcores.join(',')}`);
  }
  const prefixes = e['file-prefix'] as string[] | undefined;
  const filePrefix = prefixes?.[prefixes.length - 1] ?? 'rte';
  // The prefix becomes a directory name: refuse what would leave the runtime directory.
  if (filePrefix === '' || filePrefix.includes('/') || filePrefix === '.' || filePrefix === '..') {
    throw new ArgError(`--file-prefix=${filePrefix}: expected a name without '/'`);
  }
  // The last of --telemetry / --no-telemetry wins, as EAL's getopt loop.
  const telemetry = eal.reduce((on, a) => (a === '--telemetry' ? true : a === '--no-telemetry' ? false : on), true);
  return { lcores, lcoreCpus, mainLcore, vdevs: (e['vdev'] as string[] | undefined) ?? [], filePrefix, telemetry, notes };
}

type Values = Record<string, string | boolean | string[] | undefined>;

function parseEal(args: string[], app: EalAppHint): Values {
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
        'file-prefix': { type: 'string', multiple: true },
        telemetry: { type: 'boolean' },
        'no-telemetry': { type: 'boolean' },
        ...Object.fromEntries(EAL_IGNORED.map(flag)),
        ...Object.fromEntries([...EAL_IGNORED_VALUE, ...EAL_IGNORED_OPTIONAL].map(valued)),
      },
    }).values as Values;
  } catch (err) {
    const m = err instanceof Error ? /Unknown option '(-[^']*)'/.exec(err.message) : null;
    const name = m?.[1]!.replace(/^--?/, '') ?? '';
    if (m && app.options.has(name)) throw new ArgError(`unknown EAL option '${m[1]}' (${app.name}'s own options go after --, as with DPDK)`);
    if (m) throw new ArgError(`unknown EAL option '${m[1]}' (${app.help} lists the options)`);
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

