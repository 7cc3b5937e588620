/**
 * dpkit l3fwd against DPDK's l3fwd (22.11's examples/l3fwd, built here from
 * Debian's dpdk-doc sources against libdpdk-dev, its rx offload request
 * masked to what the port has; DPKIT_DPDK_L3FWD=PATH runs another build,
 * e.g. a native 25.11 one). Same ports for both: two net_pcap ports
 * replaying one capture of 1024 IPv4 UDP flows over DPDK's default routes
 * (198.18.0.x and 198.18.1.x, 64 B frames) with infinite_rx, whose tx drops
 * what it is given, so forwarding is the bound. One forwarding lcore, LPM and
 * EM arms, runs alternating. Throughput is the growth of both ports'
 * opackets read through the telemetry socket (dpdk-telemetry.py) after the
 * warm-up and again after the measured seconds.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { bootstrapRatio, summarize, verdict } from '../src/apps/bench/stats.js';
import type { BenchCase, BenchOptions, Benchmark } from '../src/apps/bench/types.js';
import { ipv4CksumSet } from '../src/net/checksum.js';
import { PcapWriter } from '../src/pcap/writer.js';
import { packageRoot } from '../src/package.js';
import { DpdkBuildError } from './api.js';

const EXAMPLES = '/usr/share/dpdk/examples';
const EAL = ['--no-huge', '-m', '1024', '--no-pci'];
const FLOWS = 1024;
type Arm = 'dpdk' | 'dpkit';
type Lookup = 'lpm' | 'em';
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

/** The capture both programs replay: 1024 UDP flows 10.0.0.x → 198.18.{0,1}.y, 9 → 9, 64 B frames with their CRC's 4 bytes left off. */
function mixPcap(): string {
  const file = join(tmpdir(), `dpkit-bench-l3fwd-mix-${FLOWS}.pcap`);
  if (existsSync(file)) return file;
  const w = PcapWriter.create(file);
  const f = new Uint8Array(60);
  for (let i = 0; i < FLOWS; i++) {
    f.fill(0);
    f.set([2, 0, 0, 0, 0, 0xee, 2, 0, 0, 0, 0, 0xdd, 0x08, 0x00]);
    f.set([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, i >> 8, i & 0xff, 198, 18, i & 1, (i >> 1) & 0xff], 14);
    f.set([0, 9, 0, 9, 0, 26, 0, 0], 34);
    ipv4CksumSet(f, 14);
    w.write(f, 0, f.length, 1_700_000_000, i);
  }
  w.close();
  return file;
}

/** The command of one run. */
function command(arm: Arm, lookup: Lookup, prefix: string): string[] {
  const mix = mixPcap();
  const ports = ['--vdev', `net_pcap0,rx_pcap=${mix},infinite_rx=1`, '--vdev', `net_pcap1,rx_pcap=${mix},infinite_rx=1`];
  const app = ['--', '-p', '0x3', '--config', '(0,0,1),(1,0,1)', '--parse-ptype', '--lookup', lookup];
  // DPDK's l3fwd makes a tx queue per enabled lcore and a pcap port given only rx_pcap has one:
  // `-l 1`, its main lcore forwarding on CPU 1. dpkit's main thread sleeps on CPU 0.
  if (arm === 'dpdk') return [dpdkL3fwd(), '-l', '1', ...EAL, '--file-prefix', prefix, ...ports, ...app];
  return [process.execPath, 'bin/dpkit.js', 'l3fwd', '--lcores', '0@0,1@1', '--file-prefix', prefix, ...ports, ...app];
}

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
async function run(arm: Arm, lookup: Lookup, opts: BenchOptions): Promise<{ mpps: number; gc: number }> {
  const prefix = `dpkit-bench-l3fwd-${process.pid}`;
  const [bin, ...args] = command(arm, lookup, prefix);
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
    if (first === undefined) throw new Error(`bench l3fwd: ${ARM_NAME[arm]} (${lookup}) never answered on its telemetry socket:\n${text.slice(-400)}`);
    await sleep(opts.warmupMs);
    const a = opackets(prefix);
    const t0 = performance.now();
    await sleep(opts.durationMs);
    const b = opackets(prefix);
    const secs = (performance.now() - t0) / 1000;
    if (a === undefined || b === undefined) throw new Error(`bench l3fwd: ${ARM_NAME[arm]} (${lookup}) stopped answering on its telemetry socket`);
    return { mpps: (b - a) / secs / 1e6, gc: 0 };
  } finally {
    child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await closed;
    clearTimeout(killer);
    rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  name: 'l3fwd',
  title: "dpkit l3fwd against DPDK's l3fwd: 2 net_pcap ports replaying 1024 IPv4 UDP flows (64 B) over the default routes, 1 lcore, LPM and EM; Mpps sent, summed over ports",
  defaults: { reps: 5, durationMs: 3000, warmupMs: 1000 },
  cases: () => {
    dpdkL3fwd(); // fails the bench here, in one line, before any run
    const cases: BenchCase[] = [];
    for (const lookup of ['lpm', 'em'] as const) {
      for (const arm of ['dpdk', 'dpkit'] as const) cases.push({ name: `${lookup}: ${ARM_NAME[arm]}`, params: { lookup, arm, size: 64, lcores: 1 }, measure: (o) => run(arm, lookup, o) });
    }
    return cases;
  },
  summary: (results) => {
    const fmt = (x: number) => x.toFixed(2);
    const t = new Table({ head: ['lookup', 'dpkit Mpps', 'DPDK Mpps', 'dpkit / DPDK (95 % CI)', 'verdict'], style: { head: [], border: [] } });
    for (const lookup of ['lpm', 'em']) {
      const d = results.find((r) => r.params.lookup === lookup && r.params.arm === 'dpdk');
      const a = results.find((r) => r.params.lookup === lookup && r.params.arm === 'dpkit');
      if (!a || !d || a.samples.length === 0 || d.samples.length === 0) continue;
      const ci = bootstrapRatio(d.samples, a.samples);
      t.push([lookup, fmt(summarize(a.samples).median), fmt(summarize(d.samples).median), `${fmt(ci.ratio)} (${fmt(ci.lo)}..${fmt(ci.hi)})`, a.samples.length < 5 ? 'too few runs' : verdict(ci)]);
    }
    return `dpkit l3fwd / DPDK l3fwd (goal: >= 1.5 per core)\n${t.toString()}`;
  },
};
