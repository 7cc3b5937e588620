/**
 * l2fwd: DPDK's L2 forwarding sample on dpkit. Ports in the portmask are
 * paired in order (0 <-> 1, 2 <-> 3; an odd last one sends to itself); each
 * lcore polls up to `-q` ports' rx queues, rewrites each packet's MACs and
 * sends it out of the paired port. The main thread prints per-port
 * statistics every `-T` seconds.
 *
 *   node examples/l2fwd/main.js -l 0-2 --vdev net_null0 --vdev net_null1 -- -p 0x3 -q 1 -T 1
 *
 * l2fwd's options: -p PORTMASK (hex, required), -q NQ (ports per lcore,
 * default 1), -T PERIOD (seconds between statistics, default 10, 0 off),
 * --[no-]mac-updating (default on). dpkit's: --count N (each lcore stops
 * after N received packets), --kernel (the MAC rewrite as one kernel call per
 * burst instead of the TypeScript loop).
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ArgError, init, type Eal } from 'dpkit';
import { STAT_DROPPED, STAT_RX, STAT_TX, type L2fwdArgs } from './lcore.js';

const MAX_RX_QUEUE_PER_LCORE = 16;
const NB_MBUF_PER_PORT = 8192;
const RX_DESC = 1024;
const TX_DESC = 1024;

export interface PortCounts {
  port: number;
  tx: number;
  rx: number;
  dropped: number;
}

/** A finished run: per-port counters, and whether every mbuf came back. */
export interface L2fwdReport {
  ports: PortCounts[];
  poolFull: boolean;
  /** How many statistics blocks were printed. */
  statsPrinted: number;
}

interface L2fwdOptions {
  portmask: number;
  nq: number;
  period: number;
  macUpdating: boolean;
  kernel: boolean;
  count: number;
}

function parseAppArgs(args: readonly string[]): L2fwdOptions {
  const { values: v } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      p: { type: 'string', short: 'p' },
      q: { type: 'string', short: 'q' },
      T: { type: 'string', short: 'T' },
      'mac-updating': { type: 'boolean' },
      'no-mac-updating': { type: 'boolean' },
      kernel: { type: 'boolean' },
      count: { type: 'string' },
    },
  });
  const portmask = v.p === undefined ? 0 : parseInt(v.p, 16);
  if (!(portmask > 0)) throw new ArgError(`l2fwd: invalid portmask${v.p === undefined ? ' (give -p PORTMASK)' : ` ${v.p}`}`);
  const nq = v.q === undefined ? 1 : Number(v.q);
  if (!Number.isInteger(nq) || nq < 1 || nq > MAX_RX_QUEUE_PER_LCORE) throw new ArgError(`l2fwd: invalid queue number ${v.q}`);
  const period = v.T === undefined ? 10 : Number(v.T);
  if (!(period >= 0)) throw new ArgError(`l2fwd: invalid timer period ${v.T}`);
  const count = v.count === undefined ? Infinity : Number(v.count);
  if (!(count > 0)) throw new ArgError(`l2fwd: invalid --count ${v.count}`);
  return { portmask, nq, period, macUpdating: v['no-mac-updating'] !== true, kernel: v.kernel === true, count };
}

/** l2fwd's print_stats: one block per enabled port, then the totals. */
function printStats(ports: number[], stats: Float64Array): void {
  const line = (what: string, n: number) => `${what.padEnd(25)}${String(n).padStart(20)}`;
  const out = ['\nPort statistics ===================================='];
  let tx = 0;
  let rx = 0;
  let dropped = 0;
  for (const p of ports) {
    const s = [stats[p * 3 + STAT_TX]!, stats[p * 3 + STAT_RX]!, stats[p * 3 + STAT_DROPPED]!];
    out.push(`Statistics for port ${p} ------------------------------`, line('Packets sent:', s[0]!), line('Packets received:', s[1]!), line('Packets dropped:', s[2]!));
    tx += s[0]!;
    rx += s[1]!;
    dropped += s[2]!;
  }
  out.push('Aggregate statistics ===============================', line('Total packets sent:', tx), line('Total packets received:', rx), line('Total packets dropped:', dropped));
  out.push('====================================================');
  console.log(out.join('\n'));
}

/** Pairs the enabled ports in order; an odd last port sends to itself (l2fwd's notice). */
function pairPorts(enabled: number[]): number[] {
  const dst: number[] = [];
  for (let i = 0; i + 1 < enabled.length; i += 2) {
    dst[enabled[i]!] = enabled[i + 1]!;
    dst[enabled[i + 1]!] = enabled[i]!;
  }
  if (enabled.length % 2 === 1) {
    console.log('Notice: odd number of ports in portmask.');
    dst[enabled.at(-1)!] = enabled.at(-1)!;
  }
  return dst;
}

/** Each lcore takes up to `nq` rx ports, in port order (l2fwd's rx_lcore_id walk). */
function assignLcores(eal: Eal, enabled: number[], nq: number): { lcores: number[]; rxPorts: number[][] } {
  const workers = eal.workerLcores();
  const lcores: number[] = [];
  const rxPorts: number[][] = [];
  for (const p of enabled) {
    if (rxPorts.length === 0 || rxPorts.at(-1)!.length === nq) {
      if (lcores.length === workers.length) throw new ArgError('l2fwd: Not enough cores');
      lcores.push(workers[lcores.length]!);
      rxPorts.push([]);
    }
    rxPorts.at(-1)!.push(p);
    console.log(`Lcore ${lcores.at(-1)}: RX port ${p}`);
  }
  return { lcores, rxPorts };
}

function portInit(eal: Eal, port: number): void {
  const { ethdev } = eal;
  ethdev.configure(port, 1, 1);
  ethdev.rxQueueSetup(port, 0, RX_DESC, eal.pool);
  ethdev.txQueueSetup(port, 0, TX_DESC);
  ethdev.start(port);
  ethdev.promiscuousEnable(port);
  const mac = [...ethdev.macAddr(port)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
  console.log(`Port ${port}, MAC address: ${mac}\n`);
}

/** Runs l2fwd with DPDK's command line. @throws ArgError for a bad command line, LaunchError when an lcore fails. */
export async function l2fwd(argv: readonly string[]): Promise<L2fwdReport> {
  const probe = argv.indexOf('--');
  const o = parseAppArgs(probe >= 0 ? argv.slice(probe + 1) : []);
  const nbPorts = argv.filter((a) => a === '--vdev').length;
  const eal = init(argv, { mbufs: Math.max(nbPorts, 1) * NB_MBUF_PER_PORT, mbufCacheSize: 256 });
  try {
    const missing = [...Array(32).keys()].filter((p) => (o.portmask >> p) & 1 && !eal.ethdev.portIds().includes(p));
    if (missing.length) throw new ArgError(`l2fwd: portmask 0x${o.portmask.toString(16)} names ports ${missing.join(',')}, which do not exist`);
    const enabled = eal.ethdev.portIds().filter((p) => (o.portmask >> p) & 1);
    const dstPorts = pairPorts(enabled);
    const { lcores, rxPorts } = assignLcores(eal, enabled, o.nq);
    for (const p of enabled) portInit(eal, p);
    const stats = new Float64Array(new SharedArrayBuffer(8 * 3 * 32));
    const args: L2fwdArgs = { rxPorts, dstPorts, macUpdating: o.macUpdating, kernel: o.kernel, count: o.count, stats };
    const run = await eal.launch<number, L2fwdArgs>(new URL('./lcore.js', import.meta.url), { lcores, args });
    let statsPrinted = 0;
    const timer = o.period > 0 ? setInterval(() => (printStats(enabled, stats), statsPrinted++), o.period * 1000) : undefined;
    const stop = () => void run.stop().catch(() => {});
    process.once('SIGINT', stop);
    try {
      await run.wait();
    } finally {
      clearInterval(timer);
      process.off('SIGINT', stop);
    }
    printStats(enabled, stats);
    await eal.close();
    const ports = enabled.map((port) => ({ port, tx: stats[port * 3 + STAT_TX]!, rx: stats[port * 3 + STAT_RX]!, dropped: stats[port * 3 + STAT_DROPPED]! }));
    return { ports, poolFull: eal.pool.full(), statsPrinted: statsPrinted + 1 };
  } finally {
    await eal.close().catch(() => {});
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await l2fwd(process.argv.slice(2));
}
