/**
 * l3fwd's own command line (the argv after `--`), as DPDK 22.11's l3fwd
 * parses it (examples/l3fwd/main.c parse_args): every option of its poll
 * mode. Event mode, ACL and FIB lookups are refused by name.
 */
import { parseArgs } from 'node:util';
import { ArgError } from '../../errors.js';
import type { Datapath } from '../../eal/kernels.js';

/** One --config triple: this lcore polls this rx queue of this port. */
export interface LcoreParam {
  port: number;
  queue: number;
  lcore: number;
}

export interface L3fwdOptions {
  portmask: number;
  promiscuous: boolean;
  lookup: 'lpm' | 'em';
  config: LcoreParam[];
  /** --eth-dest: the destination MAC of each port's packets (default 02:00:00:00:00:<port>). */
  ethDest: Map<number, Uint8Array>;
  ruleIpv4: string | undefined;
  ruleIpv6: string | undefined;
  /** --ipv6: EM's keys are IPv6 5-tuples (LPM forwards both families either way). */
  ipv6: boolean;
  parsePtype: boolean;
  /** --max-pkt-len: each port's MTU becomes this less the Ethernet header and CRC; undefined keeps the ports' MTU. */
  maxPktLen: number | undefined;
  /** --hash-entry-num: EM flows to generate as DPDK <= 21.08 did, instead of the default table; undefined: none. */
  hashEntryNum: number | undefined;
  rxQueueSize: number;
  txQueueSize: number;
  perPortPool: boolean;
  relaxRxOffload: boolean;
  /** dpkit's: run the per-burst forward as the wasm kernel (default) or its TypeScript twin. */
  datapath: Datapath;
  /** Lines to print about options that change nothing here. */
  notes: string[];
}

export const L3FWD_USAGE = `Usage: dpkit l3fwd [EAL options] -- -p PORTMASK [-P] [--lookup LOOKUP_METHOD]
  --config (port,queue,lcore)[,(port,queue,lcore)] [--rx-queue-size NPKTS] [--tx-queue-size NPKTS]
  [--eth-dest=X,MM:MM:MM:MM:MM:MM] [--max-pkt-len PKTLEN] [--no-numa] [--hash-entry-num]
  [--ipv6] [--parse-ptype] [--per-port-pool] [--relax-rx-offload] [-L | -E]
  [--rule_ipv4=FILE] [--rule_ipv6=FILE] [--datapath wasm|ts]

  -p PORTMASK: Hexadecimal bitmask of ports to configure
  -P : Enable promiscuous mode
  --lookup: Select the lookup method: lpm (default) or em (acl and fib: not in dpkit)
  --config (port,queue,lcore): Rx queue configuration
  --rx-queue-size NPKTS: Rx queue size in decimal (default 1024)
  --tx-queue-size NPKTS: Tx queue size in decimal (default 1024)
  --eth-dest=X,MM:MM:MM:MM:MM:MM: Ethernet destination for port X
  --max-pkt-len PKTLEN: maximum packet length in decimal (64-9600)
  --no-numa: Disable numa awareness (dpkit has one heap)
  --hash-entry-num: Specify the hash entry number in hexadecimal to be setup (EM: that many
                    generated flows, as DPDK <= 21.08)
  --ipv6: Set if running ipv6 packets (EM: the table holds IPv6 5-tuples; LPM forwards both families)
  --parse-ptype: Set to use software to analyze packet type (dpkit always parses in software)
  --per-port-pool: Use separate buffer pool per port
  --relax-rx-offload: Ask ports only for the rx offloads they have (dpkit asks none)
  -E : Enable exact match, legacy flag please use --lookup=em instead
  -L : Enable longest prefix match, legacy flag please use --lookup=lpm instead
  --rule_ipv4=FILE: Specify the ipv4 rules entries file: R<ip>/<depth> <port> (LPM),
                    R<dst> <src> <dport> <sport> <proto> <port> (EM)
  --rule_ipv6=FILE: Specify the ipv6 rules entries file
  --datapath wasm|ts: dpkit's: the forward as a wasm kernel (default) or its TypeScript twin
`;

/** DPDK's L3FWD_HASH_ENTRIES on x86: the most flows --hash-entry-num may ask for. */
export const L3FWD_HASH_ENTRIES_MAX = 4 * 1024 * 1024;

/** DPDK's MAX_LCORE_PARAMS. */
const MAX_LCORE_PARAMS = 1024;
const MAX_RX_QUEUE_PER_PORT = 128;

/**
 * Parses l3fwd's options.
 * @throws ArgError naming the option, for anything l3fwd would refuse.
 */
export function parseL3fwdArgs(args: readonly string[]): L3fwdOptions {
  let v;
  try {
    v = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        p: { type: 'string', short: 'p' },
        P: { type: 'boolean', short: 'P' },
        L: { type: 'boolean', short: 'L' },
        E: { type: 'boolean', short: 'E' },
        lookup: { type: 'string' },
        config: { type: 'string' },
        'eth-dest': { type: 'string', multiple: true },
        rule_ipv4: { type: 'string' },
        rule_ipv6: { type: 'string' },
        ipv6: { type: 'boolean' },
        'parse-ptype': { type: 'boolean' },
        'max-pkt-len': { type: 'string' },
        'hash-entry-num': { type: 'string' },
        'rx-queue-size': { type: 'string' },
        'tx-queue-size': { type: 'string' },
        'per-port-pool': { type: 'boolean' },
        'relax-rx-offload': { type: 'boolean' },
        'no-numa': { type: 'boolean' },
        mode: { type: 'string' },
        alg: { type: 'string' },
        datapath: { type: 'string' },
      },
    }).values;
  } catch (e) {
    throw new ArgError(`l3fwd: ${(e as Error).message.split('. To specify')[0]!.replace(/^Unknown option/, 'unknown option')} (dpkit l3fwd --help lists the options)`);
  }
  const notes: string[] = [];
  const portmask = v.p === undefined ? 0 : /^(0x)?[0-9a-f]+$/i.test(v.p) ? parseInt(v.p, 16) : NaN;
  if (!(portmask > 0) || portmask > 0xffffffff) throw new ArgError(`l3fwd: Invalid portmask${v.p === undefined ? ' (give -p PORTMASK)' : ` ${v.p}`}`);

  const modes = [v.L && 'lpm', v.E && 'em', v.lookup].filter((m): m is string => typeof m === 'string');
  if (modes.length > 1) throw new ArgError('l3fwd: Only one lookup mode is allowed at a time!');
  const lookup = modes[0] ?? 'lpm';
  if (lookup === 'acl' || lookup === 'fib') throw new ArgError(`l3fwd: --lookup ${lookup}: not in dpkit (lpm and em are)`);
  if (lookup !== 'lpm' && lookup !== 'em') throw new ArgError(`l3fwd: Invalid lookup option '${lookup}'! Accepted options: acl, em, lpm, fib`);
  if (modes.length === 0) notes.push('Neither ACL, LPM, EM, or FIB selected, defaulting to LPM');
  if (v.mode !== undefined && v.mode !== 'poll') throw new ArgError(`l3fwd: --mode ${v.mode}: dpkit runs poll mode only`);
  if (v.alg !== undefined) throw new ArgError('l3fwd: --alg is for ACL lookups, which dpkit does not have');

  const ethDest = new Map<number, Uint8Array>();
  for (const d of v['eth-dest'] ?? []) {
    const m = /^(\d+),((?:[0-9a-f]{1,2}:){5}[0-9a-f]{1,2})$/i.exec(d);
    if (!m || Number(m[1]) >= 32) throw new ArgError(`l3fwd: --eth-dest=${d}: expected PORT,MM:MM:MM:MM:MM:MM with PORT < 32`);
    ethDest.set(Number(m[1]), Uint8Array.from(m[2]!.split(':').map((x) => parseInt(x, 16))));
  }

  const datapath = v.datapath ?? 'wasm';
  if (datapath !== 'wasm' && datapath !== 'ts') throw new ArgError(`l3fwd: --datapath ${datapath}: expected wasm or ts`);
  if (v['no-numa']) notes.push('--no-numa: dpkit has one heap, NUMA or not');
  if (v['parse-ptype']) notes.push('soft parse-ptype is enabled');
  if (v['per-port-pool']) notes.push('per port buffer pool is enabled');
  if (v['hash-entry-num'] !== undefined && lookup !== 'em') notes.push('Hash entry number will be ignored');
  const emRules = v.ipv6 ? v.rule_ipv6 : v.rule_ipv4;
  if (v['hash-entry-num'] !== undefined && lookup === 'em' && emRules !== undefined) {
    throw new ArgError(`l3fwd: --hash-entry-num generates the EM flows; it does not go with --rule_ipv${v.ipv6 ? 6 : 4} (give one)`);
  }
  return {
    portmask,
    promiscuous: v.P === true,
    lookup,
    config: v.config === undefined ? DEFAULT_CONFIG : parseConfig(v.config),
    ethDest,
    ruleIpv4: v.rule_ipv4,
    ruleIpv6: v.rule_ipv6,
    ipv6: v.ipv6 === true,
    parsePtype: v['parse-ptype'] === true,
    maxPktLen: v['max-pkt-len'] === undefined ? undefined : intOption(v['max-pkt-len'], '--max-pkt-len', 64, 9600, 0),
    hashEntryNum: v['hash-entry-num'] === undefined ? undefined : hexOption(v['hash-entry-num'], '--hash-entry-num', 1, L3FWD_HASH_ENTRIES_MAX),
    rxQueueSize: intOption(v['rx-queue-size'], '--rx-queue-size', 1, 65535, 1024),
    txQueueSize: intOption(v['tx-queue-size'], '--tx-queue-size', 1, 65535, 1024),
    perPortPool: v['per-port-pool'] === true,
    relaxRxOffload: v['relax-rx-offload'] === true,
    datapath,
    notes,
  };
}

/** DPDK's lcore_params_array_default: used when --config is not given. */
const DEFAULT_CONFIG: LcoreParam[] = [
  [0, 0, 2], [0, 1, 2], [0, 2, 2], [1, 0, 2], [1, 1, 2], [1, 2, 2], [2, 0, 2], [3, 0, 3], [3, 1, 3],
].map(([port, queue, lcore]) => ({ port: port!, queue: queue!, lcore: lcore! }));

/** parse_config: "(port,queue,lcore),(port,queue,lcore)…". */
export function parseConfig(text: string): LcoreParam[] {
  const out: LcoreParam[] = [];
  const re = /\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*,?\s*/y;
  let at = text.trimStart().length === text.length ? 0 : text.length - text.trimStart().length;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) throw new ArgError(`l3fwd: Invalid config "${text}" at "${text.slice(at)}": expected (port,queue,lcore),…`);
    const [port, queue, lcore] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (port > 31 || queue >= MAX_RX_QUEUE_PER_PORT || lcore > 127) throw new ArgError(`l3fwd: Invalid config (${port},${queue},${lcore}): port < 32, queue < ${MAX_RX_QUEUE_PER_PORT}, lcore < 128`);
    out.push({ port, queue, lcore });
    at = re.lastIndex;
  }
  if (out.length === 0) throw new ArgError(`l3fwd: Invalid config "${text}": no (port,queue,lcore)`);
  if (out.length > MAX_LCORE_PARAMS) throw new ArgError(`l3fwd: exceeded max number of lcore params: ${out.length}`);
  return out;
}

function intOption(text: string | undefined, what: string, lo: number, hi: number, dflt: number): number {
  if (text === undefined) return dflt;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= lo && n <= hi)) throw new ArgError(`l3fwd: ${what} ${text}: expected an integer in [${lo}, ${hi}]`);
  return n;
}

function hexOption(text: string, what: string, lo: number, hi: number): number {
  const n = /^(0x)?[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : NaN;
  if (!(n >= lo && n <= hi)) throw new ArgError(`l3fwd: ${what} ${text}: expected a hexadecimal number in [0x${lo.toString(16)}, 0x${hi.toString(16)}]`);
  return n;
}
