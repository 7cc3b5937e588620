/**
 * dpkit l3fwd against DPDK's l3fwd (22.11's examples/l3fwd, built here from
 * Debian's dpdk-doc sources against libdpdk-dev, its rx offload request
 * masked to what the port has; DPKIT_DPDK_L3FWD=PATH runs another build,
 * e.g. a native 25.11 one). Same ports for both: two net_pcap ports
 * replaying one capture of 1024 UDP flows over DPDK's default routes with
 * infinite_rx, whose tx drops what it is given, so forwarding is the bound.
 * IPv4 flows go to 198.18.0.x and 198.18.1.x (64 B frames); IPv6 flows, run
 * with --ipv6 by both programs, to 2001:200:0:0::x and 2001:200:0:1::x (66 B,
 * the smallest UDP/IPv6 frame). LPM and EM, 1 and 2 forwarding lcores, runs
 * alternating. Throughput is the growth of both ports' opackets read through
 * the telemetry socket (dpdk-telemetry.py) after the warm-up and again after
 * the measured seconds.
 *
 * 2 lcores: each port replays the capture on two rx queues (two rx_pcap
 * keys), lcore A polls queue 0 of both ports and lcore B queue 1. Two rx
 * queues also give a pcap port without a tx key two dropping tx queues,
 * which l3fwd wants (one per lcore).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { dpdkEalArgs } from '../src/apps/bench/dpdk-memory.js';
import { bootstrapRatio, summarize, verdict } from '../src/apps/bench/stats.js';
import type { BenchCase, BenchOptions, Benchmark } from '../src/apps/bench/types.js';
import { ipv4CksumSet, ipv6UdptcpCksum } from '../src/net/checksum.js';
import { PcapWriter } from '../src/pcap/writer.js';
import { packageRoot } from '../src/package.js';
import { DpdkBuildError } from './api.js';

const EXAMPLES = '/usr/share/dpdk/examples';
const FLOWS = 1024;
type Arm = 'dpdk' | 'dpkit';
type Lookup = 'lpm' | 'em';
/** IP version of the flows; 6 runs both programs with --ipv6. */
type Family = 4 | 6;
const ARM_NAME: Record<Arm, string> = { dpdk: "DPDK's l3fwd", dpkit: 'dpkit l3fwd' };

let built: string | undefined;

/**
 * DPDK's l3fwd: DPKIT_DPDK_L3FWD, or built once per machine under the temp
 * folder from the examples' sources, with the rx offload request masked to
 * the port's capabilities in the port's and the queue's configuration
 * (22.11 asks net_pcap for a checksum offload it lacks and exits).
 * @throws DpdkBuildError when the sources or the build fail.
 */
export function dpdkL3fwd(): string {
  const env = process.env['DPKIT_DPDK_L3FWD'];
  if (env) {
    if (!existsSync(env)) throw new DpdkBuildError(`bench l3fwd: DPKIT_DPDK_L3FWD=${env}: no such file`);
    return env;
  }
  if (built) return built;
  const dir = join(tmpdir(), 'dpkit-bench-l3fwd');
  const bin = join(dir, 'l3fwd', 'build', 'l3fwd');
  if (!existsSync(bin)) {
    const hint = 'apt-get install dpdk-doc libdpdk-dev pkg-config make gcc';
    if (!existsSync(join(EXAMPLES, 'l3fwd'))) throw new DpdkBuildError(`bench l3fwd: DPDK's l3fwd sources are not in ${EXAMPLES} (${hint})`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const d of ['common', 'l3fwd']) cpSync(join(EXAMPLES, d), join(dir, d), { recursive: true });
    const main = join(dir, 'l3fwd', 'main.c');
    const src = readFileSync(main, 'utf8');
    const conf = '\t\tret = rte_eth_dev_configure(portid, nb_rx_queue,';
    const rxq = '\t\t\trxq_conf.offloads = port_conf.rxmode.offloads;';
    if (!src.includes(conf) || !src.includes(rxq)) throw new DpdkBuildError(`bench l3fwd: ${main} is not 22.11's (the rx offload lines to mask are missing); give DPKIT_DPDK_L3FWD=PATH`);
    writeFileSync(main, src.replace(conf, '\t\tlocal_port_conf.rxmode.offloads &= dev_info.rx_offload_capa;\n' + conf).replace(rxq, '\t\t\trxq_conf.offloads = port_conf.rxmode.offloads & dev_info.rx_offload_capa;'));
    try {
      execFileSync('make', ['-C', join(dir, 'l3fwd')], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    } catch (e) {
      const last = ((e as { stderr?: string }).stderr ?? String(e)).trim().split('\n').at(-1) ?? '';
      throw new DpdkBuildError(`bench l3fwd: building DPDK's l3fwd failed (${last.slice(0, 160)}); ${hint}`);
    }
    if (!existsSync(bin)) throw new DpdkBuildError(`bench l3fwd: make built no ${bin}`);
  }
  return (built = bin);
}

let mixDir: string | undefined;

/**
 * The capture both programs replay, frames without their CRC's 4 bytes, UDP 9 → 9:
 * IPv4, 1024 flows 10.0.x.y → 198.18.{0,1}.z in 60 B; IPv6, 1024 flows
 * 2001:db8::x → 2001:200:0:{0,1}::z (hop limit 64, no UDP payload) in 62 B.
 */
function mixPcap(family: Family): string {
  // Written once per run into a folder that goes when the process exits: a capture left by an older bench is never replayed.
  if (mixDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-l3fwd-mix-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    mixDir = dir;
  }
  const file = join(mixDir, `mix${family}-${FLOWS}.pcap`);
  if (existsSync(file)) return file;
  const w = PcapWriter.create(file);
  const f = new Uint8Array(family === 4 ? 60 : 62);
  for (let i = 0; i < FLOWS; i++) {
    f.fill(0);
    f.set([2, 0, 0, 0, 0, 0xee, 2, 0, 0, 0, 0, 0xdd, ...(family === 4 ? [0x08, 0x00] : [0x86, 0xdd])]);
    if (family === 4) {
      f.set([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, i >> 8, i & 0xff, 198, 18, i & 1, (i >> 1) & 0xff], 14);
      f.set([0, 9, 0, 9, 0, 26, 0, 0], 34);
      ipv4CksumSet(f, 14);
    } else {
      f.set([0x60, 0, 0, 0, 0, 8, 17, 64], 14);
      f.set([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i >> 8, i & 0xff], 22);
      f.set([0x20, 0x01, 0x02, 0x00, 0, 0, 0, i & 1, 0, 0, 0, 0, 0, 0, 0, ((i >> 1) & 0xff) | 1], 38);
      f.set([0, 9, 0, 9, 0, 8, 0, 0], 54);
      // Over IPv6 a UDP checksum is mandatory: a real one, though neither l3fwd reads it.
      const c = ipv6UdptcpCksum(f, 14, 54);
      f.set([c >> 8, c & 0xff], 60);
    }
    w.write(f, 0, f.length, 1_700_000_000, i);
  }
  w.close();
  return file;
}

const relaxes = new Map<string, boolean>();

/**
 * Whether an l3fwd binary knows `--relax-rx-offload` (DPDK 23.07 and later:
 * ask each port only for the rx offloads it has, what the patch of 22.11's
 * build does). A newer build given by DPKIT_DPDK_L3FWD, such as a native
 * 25.11 one, exits on net_pcap without it.
 */
export function relaxesRxOffload(bin: string): boolean {
  let known = relaxes.get(bin);
  if (known === undefined) {
    known = readFileSync(bin).includes('relax-rx-offload');
    relaxes.set(bin, known);
  }
  return known;
}

/** A cell of the matrix: lookup, IP version and forwarding lcores. */
interface Cell {
  lookup: Lookup;
  family: Family;
  lcores: 1 | 2;
}

/**
 * The command of one run. DPDK's l3fwd forwards on its main lcore too: `-l 1`
 * (one lcore, on CPU 1) or `-l 0-1`. dpkit's main thread sleeps on CPU 0, its
 * forwarding lcores are 1 (CPU 1) and 2 (CPU 0): the same CPUs forward.
 */
export function l3fwdCommand(arm: Arm, cell: Cell, prefix: string): string[] {
  const rx = `rx_pcap=${mixPcap(cell.family)}`;
  const queues = cell.lcores === 1 ? rx : `${rx},${rx}`;
  const ports = ['--vdev', `net_pcap0,${queues},infinite_rx=1`, '--vdev', `net_pcap1,${queues},infinite_rx=1`];
  const lc = arm === 'dpdk' ? [1, 0] : [1, 2];
  const config = cell.lcores === 1 ? `(0,0,${lc[0]}),(1,0,${lc[0]})` : `(0,0,${lc[0]}),(0,1,${lc[1]}),(1,0,${lc[0]}),(1,1,${lc[1]})`;
  const app = ['--', '-p', '0x3', '--config', config, '--parse-ptype', '--lookup', cell.lookup, ...(cell.family === 6 ? ['--ipv6'] : [])];
  if (arm === 'dpdk') {
    const bin = dpdkL3fwd();
    return [bin, '-l', cell.lcores === 1 ? '1' : '0-1', ...dpdkEalArgs(prefix), ...ports, ...app, ...(relaxesRxOffload(bin) ? ['--relax-rx-offload'] : [])];
  }
  return [process.execPath, 'bin/dpkit.js', 'l3fwd', '--lcores', cell.lcores === 1 ? '0@0,1@1' : '0@0,1@1,2@0', '--file-prefix', prefix, ...ports, ...app];
}

/** How a cell reads in the table and in errors: `lpm IPv6 2c`. */
const cellName = (c: Cell) => `${c.lookup} IPv${c.family} ${c.lcores}c`;

/** Both ports' opackets through the telemetry socket, or undefined when it does not answer yet. */
function opackets(prefix: string): number | undefined {
  try {
    const out = execFileSync('dpdk-telemetry.py', ['-f', prefix], { input: '/ethdev/stats,0\n/ethdev/stats,1\n', encoding: 'utf8', timeout: 20_000 });
    const replies = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, { opackets?: number }>);
    const n = replies.map((r) => r['/ethdev/stats']?.opackets);
    return n.every((x) => typeof x === 'number') ? n.reduce((a, b) => a! + b!, 0) : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run: start, warm up, read opackets twice `duration` apart, stop with SIGINT. */
async function run(arm: Arm, cell: Cell, opts: BenchOptions): Promise<{ mpps: number; gc: number }> {
  const prefix = `dpkit-bench-l3fwd-${process.pid}`;
  const [bin, ...args] = l3fwdCommand(arm, cell, prefix);
  let text = '';
  const child: ChildProcess = spawn(bin!, args, { cwd: fileURLToPath(packageRoot()), stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  try {
    let first: number | undefined;
    for (let t = 0; t < 60 && first === undefined; t++) {
      await sleep(500);
      if (child.exitCode !== null) break;
      if (/entering main loop/.test(text)) first = opackets(prefix);
    }
    if (first === undefined) throw new Error(`bench l3fwd: ${ARM_NAME[arm]} (${cellName(cell)}) never answered on its telemetry socket:\n${text.slice(-400)}`);
    await sleep(opts.warmupMs);
    const a = opackets(prefix);
    const t0 = performance.now();
    await sleep(opts.durationMs);
    const b = opackets(prefix);
    const secs = (performance.now() - t0) / 1000;
    if (a === undefined || b === undefined) throw new Error(`bench l3fwd: ${ARM_NAME[arm]} (${cellName(cell)}) stopped answering on its telemetry socket`);
    return { mpps: (b - a) / secs / 1e6, gc: 0 };
  } finally {
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await closed;
    clearTimeout(killer);
    rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
  }
}

/** The matrix, in the order the cases run within a repetition (each cell's two arms side by side). */
export const L3FWD_CELLS: readonly Cell[] = (['lpm', 'em'] as const).flatMap((lookup) =>
  ([4, 6] as const).flatMap((family) => ([1, 2] as const).map((lcores) => ({ lookup, family, lcores }))),
);

export const benchmark: Benchmark = {
  name: 'l3fwd',
  title:
    "dpkit l3fwd against DPDK's l3fwd: 2 net_pcap ports replaying 1024 UDP flows over the default routes (IPv4 64 B, IPv6 66 B with --ipv6), 1 and 2 lcores, LPM and EM; Mpps sent, summed over ports",
  defaults: { reps: 5, durationMs: 3000, warmupMs: 1000 },
  cases: () => {
    dpdkL3fwd(); // fails the bench here, in one line, before any run
    return L3FWD_CELLS.flatMap((cell) =>
      (['dpdk', 'dpkit'] as const).map(
        (arm): BenchCase => ({
          name: `${cellName(cell)}: ${ARM_NAME[arm]}`,
          params: { lookup: cell.lookup, ip: `IPv${cell.family}`, arm, size: cell.family === 4 ? 64 : 66, lcores: cell.lcores },
          measure: (o) => run(arm, cell, o),
        }),
      ),
    );
  },
  summary: (results) => {
    const fmt = (x: number) => x.toFixed(2);
    const t = new Table({ head: ['cell', 'dpkit Mpps', 'DPDK Mpps', 'dpkit / DPDK (95 % CI)', 'verdict'], style: { head: [], border: [] } });
    for (const cell of L3FWD_CELLS) {
      const of = (arm: Arm) => results.find((r) => r.params.lookup === cell.lookup && r.params.ip === `IPv${cell.family}` && r.params.lcores === cell.lcores && r.params.arm === arm);
      const d = of('dpdk');
      const a = of('dpkit');
      if (!a || !d || a.samples.length === 0 || d.samples.length === 0) continue;
      const ci = bootstrapRatio(d.samples, a.samples);
      t.push([cellName(cell), fmt(summarize(a.samples).median), fmt(summarize(d.samples).median), `${fmt(ci.ratio)} (${fmt(ci.lo)}..${fmt(ci.hi)})`, a.samples.length < 5 ? 'too few runs' : verdict(ci)]);
    }
    return `dpkit l3fwd / DPDK l3fwd (goal: >= 1.5 per core; 2c cells are 2 lcores)\n${t.toString()}`;
  },
};
