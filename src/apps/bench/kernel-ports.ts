/**
 * The `kernel-ports` preset's runs: dpkit's and DPDK's testpmd forwarding
 * (io) between two Linux interfaces through a kernel-port driver of the same
 * name, fed by a traffic source in a network namespace.
 *
 * Each run builds its own topology and removes it after:
 *
 *     namespace S: source testpmd (DPDK's, else dpkit's: txonly on net_af_packet, CPU 0)
 *        s0 ─veth─ s1 ── port 0 of the measured testpmd ── port 1 ── k1 ─veth─ k0 (namespace K: drops)
 *
 * For a driver that attaches to an interface (af_packet, af_xdp) the ports
 * are s1 and k1. For net_tap the measured testpmd creates its two taps; t0
 * is bridged with s1 so the source's frames reach it, t1 hands what is
 * forwarded to this namespace's stack, which drops it (not its MAC). The
 * source is the same for both systems, and its rate bounds what either can
 * forward: read the cells as "forwarded of what the source offered".
 *
 * Adding a driver is one entry in KERNEL_PORTS. The `pcap-live` preset runs
 * the same topology with PCAP_LIVE (net_pcap's iface=).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dpdkEalArgs } from './dpdk-memory.js';
import type { Cell, MatrixConfig, Variant } from './matrix.js';
import { testpmdArgs } from './matrix.js';
import { dpdkTestpmd, dpkitEntry, runTestpmd } from './testpmd-run.js';

/** A kernel-port driver as both systems name it and attach it. */
export interface KernelPortDriver {
  /** DPDK's driver name without `net_`: the arms are `<name>-dpdk` and `<name>-dpkit`. */
  readonly name: string;
  /** 'veth': the ports attach to s1 and k1; 'tap': the ports create taps, t0 bridged to s1. */
  readonly attach: 'veth' | 'tap';
  /** The devargs of port `i` on interface `iface` with `queues` queue pairs (the same for both systems). */
  vdev(i: number, iface: string, queues: number): string;
  /** The veths' MTU (default 9000); at least 1504, so the 1518-byte frames pass. */
  readonly mtu?: number;
}

export const KERNEL_PORTS: readonly KernelPortDriver[] = [
  // MTU 1504: at 9000 dpkit grows its ring frames to hold the MTU (9 KiB frames, a 6 MiB ring) while
  // DPDK keeps 2048-byte frames and truncates longer ones, so the cells would compare ring geometries.
  { name: 'af_packet', attach: 'veth', vdev: (i, iface, q) => `net_af_packet${i},iface=${iface},qpairs=${q}`, mtu: 1504 },
  { name: 'tap', attach: 'tap', vdev: (i, iface) => `net_tap${i},iface=${iface}` },
  // A veth takes an XDP program only while its peer's MTU fits a page ("veth: Peer MTU is too large to set XDP").
  { name: 'af_xdp', attach: 'veth', vdev: (i, iface, q) => `net_af_xdp${i},iface=${iface},queue_count=${q}`, mtu: 1504 },
];

/**
 * net_pcap on live interfaces (`iface=`), the `pcap-live` preset's driver: the
 * same topology and source as kernel-ports', so DPDK's libpcap path and
 * dpkit's (af_packet's rings under DPDK's devargs) meet on one veth pair.
 * One queue pair per port: `iface=` gives one in both systems.
 */
export const PCAP_LIVE: KernelPortDriver = { name: 'pcap', attach: 'veth', vdev: (i, iface) => `net_pcap${i},iface=${iface}` };

/** Every driver an arm's kernelPort may name. */
const ALL_DRIVERS: readonly KernelPortDriver[] = [...KERNEL_PORTS, PCAP_LIVE];

/** A preset's arms: DPDK then dpkit for every driver of `drivers` (default kernel-ports'), each pair compared. */
export function kernelPortVariants(drivers: readonly KernelPortDriver[] = KERNEL_PORTS): Variant[] {
  return drivers.flatMap((d) => [
    { name: `${d.name}-dpdk`, system: 'dpdk' as const, kernelPort: d.name },
    { name: `${d.name}-dpkit`, kernelPort: d.name },
  ]);
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
}

/** Interface names of one run: at most 15 bytes, unique to this process. */
function names(): Record<'S' | 'K' | 's0' | 's1' | 'k0' | 'k1' | 't0' | 't1' | 'br', string> {
  const t = `kp${process.pid.toString(36)}`;
  return { S: `${t}S`, K: `${t}K`, s0: `${t}s0`, s1: `${t}s1`, k0: `${t}k0`, k1: `${t}k1`, t0: `${t}t0`, t1: `${t}t1`, br: `${t}br` };
}

/** Two namespaces with a veth each to here, MTU `mtu` (1518-byte frames pass), 2 queues per veth end. */
function buildTopology(n: ReturnType<typeof names>, mtu: number): void {
  for (const [ns, inner, outer] of [[n.S, n.s0, n.s1], [n.K, n.k0, n.k1]] as const) {
    ip('netns', 'add', ns);
    ip('link', 'add', outer, 'numtxqueues', '2', 'numrxqueues', '2', 'type', 'veth', 'peer', 'name', inner, 'numtxqueues', '2', 'numrxqueues', '2');
    ip('link', 'set', inner, 'netns', ns);
    ip('-n', ns, 'link', 'set', inner, 'mtu', String(mtu), 'up');
    spawnSync('sysctl', ['-qw', `net.ipv6.conf.${outer}.disable_ipv6=1`]);
    ip('link', 'set', outer, 'mtu', String(mtu), 'up');
  }
}

function removeTopology(n: ReturnType<typeof names>): void {
  for (const x of [['netns', 'del', n.S], ['netns', 'del', n.K], ['link', 'del', n.s1], ['link', 'del', n.k1], ['link', 'del', n.br]]) spawnSync('ip', x, { stdio: 'ignore' });
}

/**
 * The source in namespace S, on CPU 0, many flows (so 2 queues both get
 * some): DPDK's txonly on net_af_packet when dpdk-testpmd is installed (the
 * faster of the two, so it bounds the cells less), else dpkit's. The same
 * for every arm of a run.
 */
function startSource(n: ReturnType<typeof names>, size: number, seconds: number): ChildProcess {
  const dpdk = dpdkTestpmd();
  const app = ['--forward-mode=txonly', `--txpkts=${size}`, '--txonly-multi-flow'];
  const vdev = ['--lcores', '0@0,1@0', '--vdev', `net_af_packet0,iface=${n.s0}`];
  // Without a terminal testpmd would stop at once ("Press enter to exit"): DPDK's runs on its
  // periodic statistics, dpkit's for --duration. The run kills it sooner.
  const cmd = dpdk
    ? ['timeout', String(seconds), dpdk, ...vdev, ...dpdkEalArgs(n.S), '--', ...app, '--stats-period=1']
    : [process.execPath, ...dpkitEntry(), 'testpmd', ...vdev, '--', ...app, `--duration=${seconds}`];
  return spawn('ip', ['netns', 'exec', n.S, ...cmd], { stdio: 'ignore' });
}

/** Resolves once frames from the source arrive on s1 (a process start takes seconds on a loaded machine). */
async function sourceFlowing(n: ReturnType<typeof names>, source: ChildProcess): Promise<void> {
  const counter = `/sys/class/net/${n.s1}/statistics/rx_packets`;
  const end = performance.now() + 60_000;
  while (Number(readFileSync(counter, 'utf8')) < 1000) {
    if (source.exitCode !== null || performance.now() > end) throw new Error(`kernel-ports: the traffic source in ${n.S} sent nothing (exit ${String(source.exitCode)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Bridges the measured testpmd's t0 with s1 as soon as it exists; resolves when `done` does. */
async function bridgeTap(n: ReturnType<typeof names>, done: Promise<unknown>): Promise<void> {
  let finished = false;
  const end = () => (finished = true);
  done.then(end, end); // its failure is the caller's to report
  ip('link', 'add', n.br, 'type', 'bridge');
  ip('link', 'set', n.br, 'mtu', '9000', 'up');
  ip('link', 'set', n.s1, 'master', n.br);
  while (!finished) {
    if (spawnSync('ip', ['link', 'set', n.t0, 'master', n.br], { stdio: 'ignore' }).status === 0) {
      spawnSync('ip', ['link', 'set', n.t0, 'mtu', '9000', 'up']);
      spawnSync('ip', ['link', 'set', n.t1, 'mtu', '9000', 'up'], { stdio: 'ignore' });
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The measured testpmd's command line: testpmdArgs' (lcores, queues, engine,
 * placed alike for both systems) with its two ports on `ifaces` through
 * `driver`, one queue pair per forwarding lcore.
 */
export function kernelTestpmdArgs(cell: Cell, variant: Variant, driver: KernelPortDriver, ifaces: readonly [string, string], cpus?: number): { eal: string[]; app: string[] } {
  const { eal, app } = testpmdArgs(cell, variant, cpus, 'null');
  let port = 0;
  // testpmdArgs' null ports are placeholders: each --vdev value becomes the driver's.
  return { eal: eal.map((a, i) => (eal[i - 1] === '--vdev' ? driver.vdev(port, ifaces[port++]!, cell.lcores) : a)), app };
}

/**
 * One run of `variant` (its `kernelPort` names the driver) in `cell`: the
 * topology, the source, the measured testpmd, then everything removed.
 * @returns the measured testpmd's median rx rate in Mpps.
 */
export async function measureKernelPorts(cell: Cell, variant: Variant, config: MatrixConfig): Promise<number> {
  const driver = ALL_DRIVERS.find((d) => d.name === variant.kernelPort);
  if (!driver) throw new Error(`bench ${config.name}: arm ${variant.name}: kernelPort ${String(variant.kernelPort)} is none of ${ALL_DRIVERS.map((d) => d.name).join(', ')}`);
  const n = names();
  removeTopology(n); // what a killed run may have left
  buildTopology(n, driver.mtu ?? 9000);
  const source = startSource(n, cell.size, config.seconds + config.warmup + 120);
  try {
    await sourceFlowing(n, source);
    const { eal, app } = kernelTestpmdArgs(cell, variant, driver, driver.attach === 'veth' ? [n.s1, n.k1] : [n.t0, n.t1]);
    const run = runTestpmd({ system: variant.system ?? 'dpkit', eal, app, seconds: config.seconds, warmup: config.warmup, countTx: false, checkout: variant.checkout, dpdk: variant.dpdk });
    if (driver.attach === 'tap') await bridgeTap(n, run);
    return await run;
  } finally {
    // `ip netns exec` execs its command: SIGTERM reaches `timeout`, which passes it to DPDK, or dpkit itself.
    const exited = new Promise((r) => (source.exitCode !== null ? r(null) : source.once('exit', r)));
    source.kill('SIGTERM');
    await exited;
    removeTopology(n);
    rmSync(`/var/run/dpdk/${n.S}`, { recursive: true, force: true });
  }
}
