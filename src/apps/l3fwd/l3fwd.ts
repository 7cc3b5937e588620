/**
 * `dpkit l3fwd`: DPDK's l3fwd sample (examples/l3fwd, 22.11) on dpkit, in
 * poll mode: each lcore of --config polls its (port, queue) pairs and routes
 * every IPv4 and IPv6 packet by LPM tables of destination prefixes (--lookup
 * lpm) or an exact-match hash of 5-tuples (--lookup em; IPv6 keys with
 * --ipv6), from DPDK's default routes, --rule_ipv4 / --rule_ipv6 files or
 * (--hash-entry-num) DPDK <= 21.08's generated flows, out of the port the
 * route names. It serves DPDK's telemetry socket while it runs.
 *
 * The control plane here sets up ports, tables (built once, in the heap,
 * read by every lcore) and each lcore's block; lcore.ts is the poll loop and
 * l3fwd.as.ts the per-burst forward. It prints DPDK's start-up lines; at exit
 * DPDK's l3fwd prints no counters, dpkit adds one block per lcore and port.
 */
import { init, type Eal } from '../../api/eal.js';
import { ArgError } from '../../errors.js';
import { Hash, hashFootprint } from '../../hash/hash.js';
import { Lpm, lpmFootprint } from '../../lpm/lpm.js';
import { Lpm6, lpm6Footprint } from '../../lpm/lpm6.js';
import type { Mempool } from '../../mem/mempool.js';
import { parseEalArgs } from '../../eal/options.js';
import { registerEal, registerEthdev, registerMempools } from '../../telemetry/commands.js';
import { TelemetryInUseError, TelemetryServer } from '../../telemetry/server.js';
import { TelemetryRegistry } from '../../telemetry/telemetry.js';
import {
  L3FWD_LCORE_SIZE,
  L3L_F_BAD_PACKETS,
  L3L_F_RX_OVERSIZE,
  L3L_F_RX_PACKETS,
  L3L_F_TX_DROPPED,
  L3L_F_TX_PACKETS,
  L3L_FLAG_EM,
  L3L_MAC,
  L3L_MAC_STRIDE,
  L3L_MAX_PORTS,
  L3L_TX_BUF_LEN,
  L3L_W_DROPS,
  L3L_W_FLAGS,
  L3L_W_MAX_LEN,
  L3L_W_PORT_MASK,
  L3L_W_TABLE,
  L3L_W_TABLE6,
  L3L_W_TX_BUFS,
} from './l3fwd-layout.js';
import { MAX_PKT_BURST, type L3fwdLcoreArgs } from './lcore.js';
import { parseL3fwdArgs, L3FWD_USAGE, type L3fwdOptions } from './options.js';
import {
  DEFAULT_EM6_ROUTES,
  DEFAULT_EM_ROUTES,
  DEFAULT_LPM6_ROUTES,
  DEFAULT_LPM_ROUTES,
  EM6_KEY_LEN,
  em6Key,
  emKey,
  fmtIpv4,
  fmtIpv6,
  manyFlowsV4,
  manyFlowsV6,
  readEm6Rules,
  readEmRules,
  readLpm6Rules,
  readLpmRules,
  type Em6Route,
  type EmRoute,
  type Lpm6Route,
  type LpmRoute,
} from './routes.js';

/** DPDK's l3fwd sizes. */
const IPV4_L3FWD_LPM_MAX_RULES = 1024;
const IPV4_L3FWD_LPM_NUMBER_TBL8S = 1 << 8;
const IPV6_L3FWD_LPM_MAX_RULES = 1024;
/**
 * DPDK's IPV6_L3FWD_LPM_NUMBER_TBL8S is 2^16 groups (64 MiB); dpkit sizes
 * the groups to the routes: a /128 needs 13 below tbl24, 2^8 at least.
 */
const lpm6Tbl8s = (routes: number): number => Math.min(1 << 16, Math.max(1 << 8, 13 * routes));
/** dpkit's hash size (DPDK's is 4 Mi entries on x86): 1 Mi keys, or what --hash-entry-num asks, a quarter spare for the cuckoo moves. */
const L3FWD_HASH_ENTRIES = 1024 * 1024;
const hashEntries = (flows: number): number => Math.max(L3FWD_HASH_ENTRIES, flows + (flows >>> 2));
/** RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN: what --max-pkt-len counts beyond the MTU (eth_dev_get_overhead_len). */
const ETHER_OVERHEAD = 18;
const ETHER_HDR_LEN = 14;
const MEMPOOL_CACHE_SIZE = 256;
const NB_MBUF_MIN = 8192;

/** What one lcore did. */
export interface L3fwdLcoreCounts {
  lcore: number;
  rxPackets: number;
  badPackets: number;
  /** Frames longer than the rx port's MTU allows, dropped. */
  rxOversize: number;
  txPackets: number;
  txDropped: number;
}

/** A finished run. */
export interface L3fwdReport {
  lcores: L3fwdLcoreCounts[];
  /** Every mbuf back in its pool at the end. */
  poolsFull: boolean;
}

/** How a run ends: a signal, or every rx port's input read to its end (capture files). */
export interface L3fwdRunOptions {
  log?: (line: string) => void;
}

/**
 * Runs l3fwd with DPDK's command line (`[EAL options] -- [l3fwd options]`)
 * until SIGINT / SIGTERM, or until every enabled port's input has ended
 * (pcap rx files read through).
 * @throws ArgError for a bad command line or route file (one line naming it), LaunchError when an lcore fails.
 */
export async function runL3fwd(argv: readonly string[], run: L3fwdRunOptions = {}): Promise<L3fwdReport> {
  const log = run.log ?? ((line: string) => process.stdout.write(line + '\n'));
  const sep = argv.indexOf('--');
  const o = parseL3fwdArgs(sep >= 0 ? argv.slice(sep + 1) : []);
  for (const n of o.notes) log(n);
  const routes = readRoutes(o);
  const lcores = [...new Set(o.config.map((c) => c.lcore))];
  const nbPorts = popcount(o.portmask);
  const nbMbuf = Math.max(nbPorts * o.config.length * o.rxQueueSize + nbPorts * lcores.length * MAX_PKT_BURST + nbPorts * lcores.length * o.txQueueSize + lcores.length * MEMPOOL_CACHE_SIZE, NB_MBUF_MIN);
  const table =
    o.lookup === 'lpm'
      ? lpmFootprint({ maxRules: IPV4_L3FWD_LPM_MAX_RULES, numberTbl8s: IPV4_L3FWD_LPM_NUMBER_TBL8S }) + lpm6Footprint({ maxRules: IPV6_L3FWD_LPM_MAX_RULES, numberTbl8s: lpm6Tbl8s(routes.lpm6.length) })
      : hashFootprint({ entries: hashEntries(o.ipv6 ? routes.em6.length : routes.em.length), keyLen: o.ipv6 ? EM6_KEY_LEN : 16 });
  const perPortPools = o.perPortPool ? nbPorts * (nbMbuf * 2304 + (1 << 20)) : 0;
  const ealArgs = parseEalArgs(sep >= 0 ? argv.slice(0, sep) : [...argv], { name: 'l3fwd', options: new Set(), help: 'dpkit l3fwd --help' });
  const eal = init(argv, { mbufs: o.perPortPool ? 0 : nbMbuf, mbufCacheSize: MEMPOOL_CACHE_SIZE, memory: table + perPortPools + (8 << 20), datapath: o.datapath });
  for (const n of eal.notes) log(n);
  let telemetry: TelemetryServer | undefined;
  try {
    const ports = checkConfig(eal, o);
    const pools = portsInit(eal, o, ports, lcores, nbMbuf, log);
    const tables = o.lookup === 'lpm' ? setupLpm(eal, routes, o.portmask, log) : setupEm(eal, o.ipv6, routes, o.portmask, log);
    const args: L3fwdLcoreArgs = {
      blocks: lcores.map(() => lcoreBlock(eal, o, ports, tables)),
      rx: lcores.map((l) => o.config.filter((c) => c.lcore === l).map((c) => [c.port, c.queue] as [number, number])),
      txQueue: lcores.map((_, i) => i),
      ports,
    };
    for (const [i, l] of lcores.entries()) {
      log(`\nInitializing rx queues on lcore ${l} ... ${args.rx[i]!.map(([p, q]) => `rxq=${p},${q},0 `).join('')}`);
    }
    for (const p of ports) eal.ethdev.start(p);
    log('\nChecking link status...done');
    for (const p of ports) {
      if (o.promiscuous) eal.ethdev.promiscuousEnable(p);
      log(`Port ${p} Link up at ${eal.ethdev.linkSpeed(p) >= 1000 ? `${eal.ethdev.linkSpeed(p) / 1000} Gbps` : `${eal.ethdev.linkSpeed(p)} Mbps`} FDX Autoneg`);
    }
    for (const [i, l] of lcores.entries()) {
      log(`L3FWD: entering main loop on lcore ${l}`);
      for (const [p, q] of args.rx[i]!) log(`L3FWD:  -- lcoreid=${l} portid=${p} rxqueueid=${q}`);
    }
    const launch = await eal.launch<number, L3fwdLcoreArgs>(new URL('./lcore.js', import.meta.url), { lcores, args });
    const counts = () =>
      lcores.map((lcore, i) => {
        const f = args.blocks[i]! >>> 3;
        const f64 = eal.heap.f64;
        return { lcore, rxPackets: f64[f + L3L_F_RX_PACKETS]!, badPackets: f64[f + L3L_F_BAD_PACKETS]!, rxOversize: f64[f + L3L_F_RX_OVERSIZE]!, txPackets: f64[f + L3L_F_TX_PACKETS]!, txDropped: f64[f + L3L_F_TX_DROPPED]! };
      });
    telemetry = ealArgs.telemetry ? startTelemetry(eal, ealArgs.filePrefix, sep >= 0 ? argv.slice(0, sep) : argv, sep >= 0 ? argv.slice(sep + 1) : [], pools, counts, log) : undefined;
    const why = await untilStopped(eal, ports);
    if (why) log(why);
    await launch.stop();
    telemetry?.close();
    const final = counts();
    log(statsText(eal, ports, final));
    for (const p of ports) {
      eal.ethdev.stop(p);
      log(`Closing port ${p}... Done`);
    }
    await eal.close();
    const poolsFull = [...pools].every((mp) => mp.full());
    log('Bye...');
    return { lcores: final, poolsFull };
  } finally {
    telemetry?.close();
    await eal.close().catch(() => {});
  }
}

/** `dpkit l3fwd`'s entry. @returns the exit code */
export async function l3fwdMain(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(L3FWD_USAGE);
    return 0;
  }
  await runL3fwd(argv);
  return 0;
}

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

/** check_lcore_params and check_port_config. @returns the enabled ports, in order */
function checkConfig(eal: Eal, o: L3fwdOptions): number[] {
  const exist = eal.ethdev.portIds();
  for (const c of o.config) {
    if (!eal.lcores.includes(c.lcore)) throw new ArgError(`l3fwd: error: lcore ${c.lcore} is not enabled in lcore mask`);
    if (c.lcore === eal.mainLcore) throw new ArgError(`l3fwd: --config (${c.port},${c.queue},${c.lcore}): lcore ${c.lcore} is the main lcore, which runs dpkit's control plane: give l3fwd other lcores (-l)`);
    if (!((o.portmask >>> c.port) & 1)) throw new ArgError(`l3fwd: port ${c.port} is not enabled in port mask`);
    if (!exist.includes(c.port)) throw new ArgError(`l3fwd: port ${c.port} is not present on the board`);
  }
  const ports = exist.filter((p) => (o.portmask >>> p) & 1);
  for (const p of ports) {
    const qs = o.config.filter((c) => c.port === p).map((c) => c.queue).sort((a, b) => a - b);
    if (qs.some((q, i) => q !== i)) throw new ArgError(`l3fwd: Queue ids of the port ${p} must be in contiguous order starting from queue id 0`);
  }
  const missing = [...Array(32).keys()].filter((p) => (o.portmask >>> p) & 1 && !exist.includes(p));
  if (missing.length) throw new ArgError(`l3fwd: portmask 0x${o.portmask.toString(16)} names port(s) ${missing.join(',')}, which do not exist`);
  return ports;
}

const mac = (b: Uint8Array): string => [...b].map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(':');

/** The destination MAC of port `p`'s packets: --eth-dest, else DPDK's 02:00:00:00:00:<p>. */
function destMac(o: L3fwdOptions, p: number): Uint8Array {
  return o.ethDest.get(p) ?? Uint8Array.of(2, 0, 0, 0, 0, p);
}

/** Each enabled port: its rx queues (from --config), one tx queue per lcore. @returns the pools in use */
function portsInit(eal: Eal, o: L3fwdOptions, ports: number[], lcores: number[], nbMbuf: number, log: (l: string) => void): Set<Mempool> {
  const pools = new Set<Mempool>();
  for (const p of ports) {
    const nbRxq = o.config.filter((c) => c.port === p).length;
    const pool = o.perPortPool ? eal.mempoolCreate({ name: `mbuf_pool_${p}:0`, n: nbMbuf, cacheSize: MEMPOOL_CACHE_SIZE }) : eal.pool;
    pools.add(pool);
    eal.ethdev.configure(p, nbRxq, lcores.length);
    if (o.maxPktLen !== undefined) {
      // config_port_max_pkt_len: the MTU is the length less the Ethernet header and CRC.
      try {
        eal.ethdev.mtuSet(p, o.maxPktLen - ETHER_OVERHEAD);
      } catch (e) {
        throw new ArgError(`l3fwd: Invalid max packet length: ${o.maxPktLen} (port ${p}): ${(e as Error).message}`);
      }
    }
    const line = [`Initializing port ${p} ... Creating queues: nb_rxq=${nbRxq} nb_txq=${lcores.length}... `];
    line.push(` Address:${mac(eal.ethdev.macAddr(p))}, Destination:${mac(destMac(o, p))}, `);
    line.push(`Allocated mbuf pool on socket 0\n`);
    for (let q = 0; q < nbRxq; q++) eal.ethdev.rxQueueSetup(p, q, o.rxQueueSize, pool);
    for (const [i, l] of lcores.entries()) {
      eal.ethdev.txQueueSetup(p, i, o.txQueueSize);
      line.push(`txq=${l},${i},0 `);
    }
    log(line.join(''));
  }
  return pools;
}

/** The routes of both families for the lookup mode: route files, DPDK's defaults, or --hash-entry-num's generated flows. */
interface Routes {
  lpm: readonly LpmRoute[];
  lpm6: readonly Lpm6Route[];
  em: readonly EmRoute[];
  em6: readonly Em6Route[];
}

/** read_config_files_lpm / read_config_files_em: a family without a file takes DPDK's defaults. */
function readRoutes(o: L3fwdOptions): Routes {
  if (o.lookup === 'lpm') {
    return { lpm: o.ruleIpv4 ? readLpmRules(o.ruleIpv4) : DEFAULT_LPM_ROUTES, lpm6: o.ruleIpv6 ? readLpm6Rules(o.ruleIpv6) : DEFAULT_LPM6_ROUTES, em: [], em6: [] };
  }
  // setup_hash fills one family's table: IPv6 with --ipv6, else IPv4.
  if (o.ipv6) return { lpm: [], lpm6: [], em: [], em6: o.hashEntryNum !== undefined ? manyFlowsV6(o.hashEntryNum) : o.ruleIpv6 ? readEm6Rules(o.ruleIpv6) : DEFAULT_EM6_ROUTES };
  return { lpm: [], lpm6: [], em: o.hashEntryNum !== undefined ? manyFlowsV4(o.hashEntryNum) : o.ruleIpv4 ? readEmRules(o.ruleIpv4) : DEFAULT_EM_ROUTES, em6: [] };
}

/** The heap offsets of the IPv4 and IPv6 tables' headers (0: that family always misses). */
interface Tables {
  v4: number;
  v6: number;
}

/** setup_lpm: the routes to enabled ports into the IPv4 and the IPv6 table. */
function setupLpm(eal: Eal, routes: Routes, portmask: number, log: (l: string) => void): Tables {
  const lpm = Lpm.create(eal.heap, 'IPV4_L3FWD_LPM_0', { maxRules: IPV4_L3FWD_LPM_MAX_RULES, numberTbl8s: IPV4_L3FWD_LPM_NUMBER_TBL8S });
  for (const r of routes.lpm) {
    if (!((portmask >>> r.port) & 1)) continue;
    try {
      lpm.add(r.ip, r.depth, r.port);
    } catch (e) {
      throw new ArgError(`l3fwd: Unable to add entry ${fmtIpv4(r.ip)}/${r.depth} to the l3fwd LPM table: ${(e as Error).message}`);
    }
    log(`LPM: Adding route ${fmtIpv4(r.ip)} / ${r.depth} (${r.port}) [${eal.ethdev.name(r.port)}]`);
  }
  const lpm6 = Lpm6.create(eal.heap, 'IPV6_L3FWD_LPM_0', { maxRules: IPV6_L3FWD_LPM_MAX_RULES, numberTbl8s: lpm6Tbl8s(routes.lpm6.length) });
  for (const r of routes.lpm6) {
    if (!((portmask >>> r.port) & 1)) continue;
    try {
      lpm6.add(r.ip, r.depth, r.port);
    } catch (e) {
      throw new ArgError(`l3fwd: Unable to add entry ${fmtIpv6(r.ip)}/${r.depth} to the l3fwd LPM6 table: ${(e as Error).message}`);
    }
    log(`LPM: Adding route ${fmtIpv6(r.ip)} / ${r.depth} (${r.port}) [${eal.ethdev.name(r.port)}]`);
  }
  return { v4: lpm.offset, v6: lpm6.offset };
}

/**
 * setup_hash: the flows to enabled ports into one hash, IPv6 5-tuples with
 * --ipv6, else IPv4 (populate_ipv4_flow_into_table and its IPv6 twin; DPDK
 * makes the other family's table too and leaves it empty, so its packets
 * miss: dpkit makes none, with the same result). A generated table
 * (--hash-entry-num) prints one line, not one per flow.
 */
function setupEm(eal: Eal, ipv6: boolean, routes: Routes, portmask: number, log: (l: string) => void): Tables {
  const flows = ipv6 ? routes.em6 : routes.em;
  const h = Hash.create(eal.heap, ipv6 ? 'ipv6_l3fwd_hash_0' : 'ipv4_l3fwd_hash_0', { entries: hashEntries(flows.length), keyLen: ipv6 ? EM6_KEY_LEN : 16 });
  const quiet = flows.length > 64;
  let n = 0;
  for (const [i, r] of flows.entries()) {
    if (!((portmask >>> r.port) & 1)) continue;
    try {
      if (ipv6) h.addKey(em6Key(r as Em6Route), r.port);
      else h.addKey(emKey(r as EmRoute), r.port);
    } catch (e) {
      throw new ArgError(`l3fwd: Unable to add entry ${i} to the l3fwd hash: ${(e as Error).message}`);
    }
    n++;
    if (quiet) continue;
    const [dst, src] = ipv6 ? [fmtIpv6((r as Em6Route).dst), fmtIpv6((r as Em6Route).src)] : [fmtIpv4((r as EmRoute).dst), fmtIpv4((r as EmRoute).src)];
    log(`EM: Adding route ${dst}, ${src}, ${r.dport}, ${r.sport}, ${r.proto} (${r.port}) [${eal.ethdev.name(r.port)}]`);
  }
  log(`Hash: Adding 0x${n.toString(16)} keys`);
  return ipv6 ? { v4: 0, v6: h.offset } : { v4: h.offset, v6: 0 };
}

/** One lcore's block: the tables, the port mask, each port's MACs and largest frame, its tx buffers and drop list. @returns its offset */
function lcoreBlock(eal: Eal, o: L3fwdOptions, ports: number[], tables: Tables): number {
  const heap = eal.heap;
  const s = heap.reserve(L3FWD_LCORE_SIZE, 64, 'l3fwd lcore');
  const sw = s >>> 2;
  heap.u32[sw + L3L_W_TABLE] = tables.v4;
  heap.u32[sw + L3L_W_TABLE6] = tables.v6;
  heap.u32[sw + L3L_W_FLAGS] = o.lookup === 'em' ? L3L_FLAG_EM : 0;
  heap.u32[sw + L3L_W_PORT_MASK] = o.portmask >>> 0;
  heap.u32[sw + L3L_W_TX_BUFS] = heap.reserve(4 * L3L_MAX_PORTS * L3L_TX_BUF_LEN, 64, 'l3fwd tx buffers');
  heap.u32[sw + L3L_W_DROPS] = heap.reserve(4 * MAX_PKT_BURST, 64, 'l3fwd drops');
  for (const p of ports) {
    heap.u8.set(destMac(o, p), s + L3L_MAC + p * L3L_MAC_STRIDE);
    heap.u8.set(eal.ethdev.macAddr(p), s + L3L_MAC + p * L3L_MAC_STRIDE + 6);
    heap.u32[sw + L3L_W_MAX_LEN + p] = eal.ethdev.mtuGet(p) + ETHER_HDR_LEN;
  }
  return s;
}

/**
 * DPDK's telemetry socket (EAL starts it in every DPDK program; l3fwd adds
 * no commands of its own): /eal, /ethdev, /mempool, and dpkit's
 * /dpkit/l3fwd with each lcore's counters. A socket in use is one line and
 * no telemetry, as EAL goes on without it.
 */
function startTelemetry(eal: Eal, prefix: string, ealArgs: readonly string[], appArgs: readonly string[], pools: Set<Mempool>, counts: () => L3fwdLcoreCounts[], log: (l: string) => void): TelemetryServer | undefined {
  const reg = new TelemetryRegistry();
  registerEal(reg, 'dpkit-l3fwd', ealArgs, appArgs);
  registerEthdev(reg, eal.ethdev, [...pools][0]!.bufLen);
  registerMempools(reg, () => [...pools]);
  reg.register('/dpkit/l3fwd', "Returns each l3fwd lcore's counters: rx, dropped bad, dropped oversize, tx, tx-dropped. Takes no parameters", () =>
    counts().map((c) => ({ lcore: c.lcore, rx_packets: c.rxPackets, bad_packets: c.badPackets, rx_oversize: c.rxOversize, tx_packets: c.txPackets, tx_dropped: c.txDropped })),
  );
  try {
    return new TelemetryServer(reg, prefix);
  } catch (e) {
    if (!(e instanceof TelemetryInUseError) && !(e instanceof Error && 'code' in e)) throw e;
    log(`TELEMETRY: ${(e as Error).message}; no telemetry`);
    return undefined;
  }
}

/** Until SIGINT / SIGTERM, or every port's input ended. @returns the line to print about why */
async function untilStopped(eal: Eal, ports: number[]): Promise<string> {
  let watch: NodeJS.Timeout | undefined;
  let onSignal: ((sig: NodeJS.Signals) => void) | undefined;
  try {
    return await new Promise<string>((resolve) => {
      onSignal = (sig) => resolve(`\n\nSignal ${sig === 'SIGINT' ? 2 : 15} received, preparing to exit...`);
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      watch = setInterval(() => ports.every((p) => eal.ethdev.rxEnded(p) === true) && resolve('\nEnd of input on every port (capture files read to their end), preparing to exit...'), 20);
    });
  } finally {
    clearInterval(watch);
    if (onSignal) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}

/** dpkit's exit block: each lcore's counters, then each port's. */
function statsText(eal: Eal, ports: number[], counts: L3fwdLcoreCounts[]): string {
  const out = ['\nL3FWD statistics (dpkit) ==========================='];
  for (const c of counts) out.push(`lcore ${c.lcore}: RX-packets: ${c.rxPackets}  TX-packets: ${c.txPackets}  Dropped (not IP or bad header): ${c.badPackets}  RX-oversize: ${c.rxOversize}  TX-dropped: ${c.txDropped}`);
  for (const p of ports) {
    const s = eal.ethdev.stats(p);
    out.push(`port ${p}: RX-packets: ${s.ipackets}  RX-missed: ${s.imissed}  TX-packets: ${s.opackets}  TX-errors: ${s.oerrors}`);
  }
  out.push('====================================================');
  return out.join('\n');
}
