/**
 * A benchmark matrix: the typed config `dpkit bench` runs. Cells are points
 * of engines × packet sizes × lcores × bursts; in every cell each arm (a
 * variant of dpkit, or DPDK's testpmd) is measured the same number of times.
 * The first arm is the baseline A; comparisons are B / A ratios.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ArgError } from '../../errors.js';
import { engines } from '../../fwd/index.js';
import { NICSIM_DEFAULT_DESC } from '../../drivers/nicsim/nicsim.js';
import type { System } from './testpmd-run.js';
import type { Watch } from './watchers.js';

/** One arm of a cell: a system and the testpmd options that make it different. */
export interface Variant {
  name: string;
  /** 'dpkit' (default) or 'dpdk' (DPDK's dpdk-testpmd, skipped when not installed). */
  system?: System;
  /** More testpmd options (after --), e.g. ['--macswap-kernel=simd']. */
  args?: string[];
  /**
   * Arms with a dpkit side: the folder of another built checkout that side
   * (every dpkit side of a pair) runs instead of this one (`git worktree add
   * /tmp/before HEAD~1 && (cd /tmp/before && npm ci)`), so a change and the
   * commit before it alternate in one run.
   */
  checkout?: string;
  /** dpkit only: devargs added to every dpkit port, e.g. 'tx_free_mode=single' (net_nicsim's reclaim arms); in a mixed arm, to its dpkit side. */
  devargs?: string;
  /** dpkit only: telemetry clients, /metrics scrapers and dashboard viewers watching the run (bench/watchers.ts). */
  watch?: Watch;
  /**
   * vhost-user ports only: the system of the guest (virtio_user); `system` is
   * the host's (net_vhost). Default: the same as the host.
   */
  guest?: System;
  /** vhost-user ports only: devargs added to the guest's virtio_user whatever its system, e.g. 'packed_vq=1' (the packed-ring arms). */
  guestDevargs?: string;
  /** memif ports only: the system of the client process (txonly) sending to the measured server (`system`). */
  peer?: System;
  /** memif ports only: devargs added to the client's port, e.g. 'zero-copy=yes' (dpkit's zero-copy client arms). */
  peerDevargs?: string;
  /** memif ports only: more testpmd options for the client (after --). */
  peerArgs?: string[];
  /** ports 'kernel' only: the kernel-port driver the arm runs (bench/kernel-ports.ts, e.g. 'af_packet'). */
  kernelPort?: string;
  /** Arms running DPDK only: the dpdk-testpmd its DPDK sides run (`--dpdk PATH`, dpdk.ts); default: the one on PATH. */
  dpdk?: string;
}

/** A block of the matrix: its cells are the cross product of these lists. */
export interface Dims {
  engines: string[];
  sizes: number[];
  lcores: number[];
  bursts: number[];
  /** [tx_rs_thresh, tx_free_thresh] pairs (--txrst, --txfreet); empty: the driver's defaults. */
  txThresh: [number, number][];
}

/**
 * What testpmd forwards between: two net_null ports, two net_pcap ports
 * replaying a capture of the cell's size, or two net_nicsim ports cabled
 * together (a loop fed by --tx-first, the model's hardware thread on CPU 0
 * beside the sleeping main lcore). 'vhost-user': two processes on one unix
 * socket, a host (net_vhost) and a guest (virtio_user); see vhostUserArgs.
 * One net_memif port whose client is another process (memif-pair.ts).
 * 'kernel': two Linux interfaces through each arm's kernelPort driver, fed from a namespace
 * (bench/kernel-ports.ts).
 */
export type PortKind = 'null' | 'pcap-replay' | 'nicsim' | 'vhost-user' | 'memif' | 'kernel';

export interface MatrixConfig {
  name: string;
  title: string;
  /** The ports of every run (default 'null'). */
  ports?: PortKind;
  /** Descriptors per rx and tx queue (--rxd, --txd); default: the driver's. */
  nbDesc?: number;
  /** The union of these blocks' cross products, in order; later blocks fill in what earlier ones leave out. */
  matrix: Partial<Dims>[];
  /** Arms, baseline first. */
  variants: Variant[];
  /** Comparisons as [A, B] arm names (B / A); default: every arm against the baseline. */
  compare?: [string, string][];
  /** Measurements per arm and cell (A and B alternate, order randomized per pair); at least 5 for a result. */
  pairs: number;
  /** Measured seconds per run (whole seconds: testpmd's statistics period). */
  seconds: number;
  /** Whole seconds each run forwards before its measured window. */
  warmup: number;
  /** Seed of the per-pair order shuffle, so a schedule can be replayed. */
  seed?: number;
}

export interface Cell {
  id: string;
  engine: string;
  size: number;
  lcores: number;
  burst: number;
  /** [tx_rs_thresh, tx_free_thresh], when the cell sets them. */
  txThresh?: [number, number];
}

const DEFAULT_DIMS: Dims = { engines: ['io'], sizes: [64], lcores: [1], bursts: [32], txThresh: [] };
export const MIN_PAIRS = 5;

export function cellId(c: Omit<Cell, 'id'>): string {
  return `${c.engine} ${c.size} B ${c.lcores}c burst ${c.burst}${c.txThresh ? ` rs/free ${c.txThresh[0]}/${c.txThresh[1]}` : ''}`;
}

/** The cells of a config, without duplicates, in declaration order. */
export function expandCells(config: MatrixConfig): Cell[] {
  const out = new Map<string, Cell>();
  for (const block of config.matrix) {
    const d = { ...DEFAULT_DIMS, ...block };
    for (const engine of d.engines)
      for (const lcores of d.lcores)
        for (const size of d.sizes)
          for (const burst of d.bursts)
            for (const txThresh of d.txThresh.length ? d.txThresh : [undefined]) {
              const cell = { engine, size, lcores, burst, ...(txThresh ? { txThresh } : {}) };
              const id = cellId(cell);
              if (!out.has(id)) out.set(id, { id, ...cell });
            }
  }
  return [...out.values()];
}

/** The comparisons a config asks for, as [A, B] arm names present in `arms`. */
export function comparisons(config: MatrixConfig, arms: string[]): [string, string][] {
  const pairs = config.compare ?? arms.slice(1).map((b): [string, string] => [arms[0]!, b]);
  return pairs.filter(([a, b]) => arms.includes(a) && arms.includes(b));
}

/** Checks a config (typed or from JSON) and names the first problem. */
export function validateConfig(config: MatrixConfig, where: string): MatrixConfig {
  const fail = (m: string): never => {
    throw new ArgError(`${where}: ${m}`);
  };
  if (typeof config !== 'object' || config === null) fail('not an object');
  if (typeof config.name !== 'string' || !config.name) fail('name: expected a non-empty string');
  if (typeof config.title !== 'string') fail('title: expected a string');
  if (!Array.isArray(config.matrix) || config.matrix.length === 0) fail('matrix: expected a non-empty list of blocks');
  const ints = (v: unknown, what: string, lo: number, hi: number) => {
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => Number.isInteger(x) && x >= lo && x <= hi)) fail(`${what}: expected a non-empty list of integers in [${lo}, ${hi}]`);
  };
  config.matrix.forEach((b, i) => {
    if (b.engines !== undefined && (!Array.isArray(b.engines) || !b.engines.every((e) => engines.has(e)))) fail(`matrix[${i}].engines: expected some of ${[...engines.keys()].join(', ')}`);
    if (b.sizes !== undefined) ints(b.sizes, `matrix[${i}].sizes`, 64, 9000);
    if (b.lcores !== undefined) ints(b.lcores, `matrix[${i}].lcores`, 1, 64);
    if (b.bursts !== undefined) ints(b.bursts, `matrix[${i}].bursts`, 1, 512);
    if (b.txThresh !== undefined && !(Array.isArray(b.txThresh) && b.txThresh.every((t) => Array.isArray(t) && t.length === 2 && t.every((x) => Number.isInteger(x) && x >= 1 && x <= 4096)))) {
      fail(`matrix[${i}].txThresh: expected a list of [tx_rs_thresh, tx_free_thresh] pairs of integers in [1, 4096]`);
    }
  });
  if (!Array.isArray(config.variants) || config.variants.length === 0) fail('variants: expected at least one arm');
  const names = new Set<string>();
  for (const v of config.variants) {
    if (typeof v.name !== 'string' || !v.name) fail('variants: every arm needs a name');
    if (names.has(v.name)) fail(`variants: arm '${v.name}' given twice`);
    names.add(v.name);
    if (v.system !== undefined && v.system !== 'dpkit' && v.system !== 'dpdk') fail(`variants.${v.name}.system: expected dpkit or dpdk`);
    if (v.args !== undefined && !(Array.isArray(v.args) && v.args.every((a) => typeof a === 'string'))) fail(`variants.${v.name}.args: expected a list of strings`);
    if (v.devargs !== undefined && (typeof v.devargs !== 'string' || (v.system === 'dpdk' && v.guest !== 'dpkit'))) fail(`variants.${v.name}.devargs: expected a string, on an arm with a dpkit side`);
    if (v.peer !== undefined && (config.ports !== 'memif' || (v.peer !== 'dpkit' && v.peer !== 'dpdk'))) fail(`variants.${v.name}.peer: expected dpkit or dpdk, on memif ports`);
    if (v.peerDevargs !== undefined && (config.ports !== 'memif' || typeof v.peerDevargs !== 'string')) fail(`variants.${v.name}.peerDevargs: expected a devargs string, on memif ports`);
    if (v.peerArgs !== undefined && (config.ports !== 'memif' || !Array.isArray(v.peerArgs))) fail(`variants.${v.name}.peerArgs: expected a list of testpmd options, on memif ports`);
    if ((config.ports === 'kernel') !== (v.kernelPort !== undefined)) fail(`variants.${v.name}.kernelPort: expected on every arm of ports 'kernel' and on no other`);
    if (config.ports === 'nicsim' && v.system === 'dpdk') fail(`variants.${v.name}: net_nicsim is dpkit's model NIC; DPDK's testpmd cannot run it`);
    if (v.watch !== undefined && (v.system === 'dpdk' || !Number.isInteger(v.watch.telemetry) || !Number.isInteger(v.watch.metrics) || !Number.isInteger(v.watch.web))) fail(`variants.${v.name}.watch: expected { telemetry: N, metrics: M, web: V }, on a dpkit arm`);
    if (v.dpdk !== undefined && (typeof v.dpdk !== 'string' || (v.system !== 'dpdk' && v.guest !== 'dpdk' && v.peer !== 'dpdk'))) fail(`variants.${v.name}.dpdk: expected the path of a dpdk-testpmd, on an arm that runs DPDK`);
    if (v.checkout !== undefined) {
      if (v.system === 'dpdk' && v.guest !== 'dpkit' && v.peer !== 'dpkit') fail(`variants.${v.name}.checkout: only arms with a dpkit side run another checkout`);
      if (typeof v.checkout !== 'string' || !existsSync(join(v.checkout, 'bin', 'dpkit.js'))) fail(`variants.${v.name}.checkout: ${String(v.checkout)} is not a dpkit checkout (no bin/dpkit.js)`);
    }
  }
  for (const pair of config.compare ?? []) {
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((n) => names.has(n))) fail(`compare: ${JSON.stringify(pair)} is not a pair of arm names`);
  }
  if (config.ports !== undefined && config.ports !== 'null' && config.ports !== 'pcap-replay' && config.ports !== 'nicsim' && config.ports !== 'vhost-user' && config.ports !== 'memif' && config.ports !== 'kernel') fail('ports: expected null, pcap-replay, nicsim, vhost-user, memif or kernel');
  for (const v of config.variants) {
    if (v.guest !== undefined && (config.ports !== 'vhost-user' || (v.guest !== 'dpkit' && v.guest !== 'dpdk'))) fail(`variants.${v.name}.guest: expected dpkit or dpdk, with ports vhost-user`);
    if (v.guestDevargs !== undefined && (config.ports !== 'vhost-user' || typeof v.guestDevargs !== 'string')) fail(`variants.${v.name}.guestDevargs: expected a string, with ports vhost-user`);
  }
  if (config.ports === 'vhost-user') {
    config.matrix.forEach((b, i) => {
      if (b.engines !== undefined && !b.engines.every((e) => e === 'rxonly' || e === 'txonly')) fail(`matrix[${i}].engines: vhost-user cells are the guest's rxonly or txonly`);
      if (b.lcores !== undefined && !b.lcores.every((n) => n === 1)) fail(`matrix[${i}].lcores: vhost-user runs one forwarding lcore per side`);
    });
  }
  if (config.nbDesc !== undefined && !(Number.isInteger(config.nbDesc) && config.nbDesc >= 64 && config.nbDesc <= 4096)) fail('nbDesc: expected an integer in [64, 4096]');
  if (!Number.isInteger(config.pairs) || config.pairs < 2) fail('pairs: expected an integer of at least 2');
  // testpmd's periodic statistics come once a second: whole seconds only.
  if (!Number.isInteger(config.seconds) || config.seconds < 1) fail('seconds: expected a whole number of seconds, 1 or more');
  if (!Number.isInteger(config.warmup) || config.warmup < 0) fail('warmup: expected a whole number of seconds, 0 or more');
  return config;
}

/**
 * The command line of one run: two ports of the cell's size (null, pcap
 * replaying `capture`, a file of packets of that size, or two cabled
 * nicsim ports), its lcores with as many queues per port, placed the same
 * way for both systems: main lcore on CPU 0, forwarding lcore i on CPU i
 * modulo the CPUs (on 2 cores the sleeping main lcore shares a CPU:
 * `--lcores 0@0,1@1,2@0`). The nicsim model's hardware thread runs on CPU 0
 * too, so one forwarding lcore has CPU 1 to itself.
 */
export function testpmdArgs(cell: Cell, variant: Variant, cpus = availableParallelism(), ports: PortKind = 'null', capture = '', nbDesc = 0): { eal: string[]; app: string[] } {
  const placement = ['0@0'];
  for (let i = 1; i <= cell.lcores; i++) placement.push(`${i}@${i % cpus}`);
  const extra = variant.devargs ? `,${variant.devargs}` : '';
  const vdev = (i: number) => {
    if (ports === 'null') return `net_null${i},size=${cell.size}${extra}`;
    if (ports === 'pcap-replay') return `net_pcap${i},rx_pcap=${capture},infinite_rx=1${extra}`;
    return i === 0 ? `net_nicsim0,peer=net_nicsim1,hw_cpu=0${extra}` : `net_nicsim1${extra}`;
  };
  // A loop of cabled ports forwards only what was injected: enough to fill both ports' rx rings twice over.
  const loopFill = Math.ceil((2 * (nbDesc || NICSIM_DEFAULT_DESC)) / cell.burst);
  return {
    eal: ['--lcores', placement.join(','), '--vdev', vdev(0), '--vdev', vdev(1)],
    app: [
      // DPDK's testpmd would otherwise drain the capture's first packets before forwarding.
      ...(ports === 'pcap-replay' ? ['--no-flush-rx'] : []),
      `--forward-mode=${cell.engine}`,
      `--burst=${cell.burst}`,
      `--txpkts=${cell.size}`,
      `--nb-cores=${cell.lcores}`,
      `--rxq=${cell.lcores}`,
      `--txq=${cell.lcores}`,
      ...(nbDesc ? [`--rxd=${nbDesc}`, `--txd=${nbDesc}`] : []),
      ...(cell.txThresh ? [`--txrst=${cell.txThresh[0]}`, `--txfreet=${cell.txThresh[1]}`] : []),
      ...(ports === 'nicsim' ? [`--tx-first-bursts=${loopFill}`] : []),
      ...(variant.args ?? []),
    ],
  };
}

/** One side of a vhost-user run: which testpmd, its arguments, and whether its rate is the cell's. */
export interface VhostUserSide {
  system: System;
  eal: string[];
  app: string[];
  /** The receiving side (rxonly): the rate a vhost-user cell reports is what arrived. */
  measured: boolean;
}

/**
 * The two command lines of a vhost-user cell (the vhost enqueue-by-size study's setup): the host
 * (`variant.system`, net_vhost listening at `sock`) on CPU 0 and the guest
 * (`variant.guest`, virtio_user connecting to it) on CPU 1, each with its
 * main lcore beside its one forwarding lcore. The cell's engine is the
 * guest's (rxonly: the host sends, the study's direction; txonly: the
 * reverse), the host runs the other one, and the receiver is measured.
 */
export function vhostUserArgs(cell: Cell, variant: Variant, sock: string, cpus = availableParallelism()): { host: VhostUserSide; guest: VhostUserSide } {
  const other = cell.engine === 'rxonly' ? 'txonly' : 'rxonly';
  const guestCpu = 1 % cpus;
  const app = (engine: string) => [`--forward-mode=${engine}`, `--burst=${cell.burst}`, `--txpkts=${cell.size}`, '--nb-cores=1', '--rxq=1', '--txq=1'];
  const extra = (system: System) => (variant.devargs && system === 'dpkit' ? `,${variant.devargs}` : '');
  const hostSystem = variant.system ?? 'dpkit';
  const guestSystem = variant.guest ?? hostSystem;
  return {
    host: { system: hostSystem, eal: ['--lcores', '0@0,1@0', '--vdev', `net_vhost0,iface=${sock},queues=1${extra(hostSystem)}`], app: [...app(other), ...(variant.args ?? [])], measured: other === 'rxonly' },
    guest: {
      system: guestSystem,
      eal: ['--lcores', `0@${guestCpu},1@${guestCpu}`, '--vdev', `virtio_user0,path=${sock},queues=1${extra(guestSystem)}${variant.guestDevargs ? `,${variant.guestDevargs}` : ''}`],
      app: [...app(cell.engine), ...(variant.args ?? [])],
      measured: cell.engine === 'rxonly',
    },
  };
}
