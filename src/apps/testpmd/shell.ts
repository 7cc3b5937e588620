/**
 * testpmd's interactive prompt, read with node:readline (history, tab
 * completion). Statistics are read while the lcores forward; commands run
 * one at a time, in order, also when piped in.
 *
 * Commands are token patterns, as DPDK's cmdline instances: a line runs the
 * first command whose every token it matches. A line no command matches is
 * "Bad arguments" when its first word starts some command, "Command not
 * found" otherwise, as DPDK's cmdline answers; the shell goes on either way.
 */
import { createInterface } from 'node:readline';
import { DpkitError } from '../../errors.js';
import { engines } from '../../fwd/index.js';
import { parseRateSpec } from '../../gen/pacer.js';
import { sizeOf } from '../../gen/spec-file.js';
import { isEnginePath } from '../../api/user-engine.js';
import { deviceInfoBlock, portInfoBlock, portSummary, xstatsBlock } from './display.js';
import { HELP_BRIEF, HELP_SECTIONS, helpText } from './help.js';
import type { Testpmd } from './testpmd.js';

type Log = (line: string) => void;
/** A matched token's value: a word, or a number for `#n`, a list for `#list`. */
type Arg = string | number | number[];

interface Command {
  /** Space-separated tokens: a literal, alternatives `a|b`, `#n` (unsigned integer), `#list` (1,3-4), `#word`, `#mode` (a forwarding mode), or a mix (`all|#n`). */
  tokens: string[];
  run: (pmd: Testpmd, a: Arg[], log: Log) => void | Promise<void>;
}

const cmd = (tokens: string, run: Command['run']): Command => ({ tokens: tokens.split(' '), run });

const COMMANDS: Command[] = [
  cmd('help', (_p, _a, log) => log(HELP_BRIEF)),
  cmd(`help all|${HELP_SECTIONS.join('|')}`, (_p, [s], log) => log(helpText(s as 'all'))),

  // Control.
  cmd('start', (p) => p.start(0)),
  cmd('start tx_first', (p) => p.start(1)),
  cmd('start tx_first #n', (p, [n], log) => (n === 0 ? log('Bad arguments') : p.start(n as number))),
  cmd('stop', async (p, _a, log) => log(await p.stop())),

  // Display.
  cmd('show port stats all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => log(p.portStatsText(ps)))),
  cmd('show port info all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => log(ps.map((q) => portInfoBlock(p.ethdev, q)).join('\n')))),
  cmd('show port summary all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => log(portSummary(p.ethdev, ps)))),
  cmd('show port xstats all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => log(ps.map((q) => xstatsBlock(p.ethdev, q)).join('\n')))),
  cmd('clear port stats all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => clearStats(p, ps, log))),
  cmd('clear port xstats all|#n', (p, [w], log) => withPorts(p, w, log, (ps) => p.clearPortStats(ps))),
  cmd('show port #n rss-hash', (p, [n], log) => rssHash(p, n as number, log)),
  cmd('show port #n rss-hash key', (p, [n], log) => rssHash(p, n as number, log)),
  cmd('show port #n rxq|txq #n desc #n status', (p, [n, dir, q, d], log) => descStatus(p, n as number, dir as 'rxq' | 'txq', q as number, d as number, log)),
  cmd('show device info all|#word', (p, [w], log) => deviceInfo(p, w as string, log)),
  cmd('show config rxtx', (p, _a, log) => log(p.fwdParamsText())),
  cmd('show config cores', (p, _a, log) => log(`List of forwarding lcores:${p.cfgLcoreIds().map((l) => ` ${String(l).padStart(2)}`).join('')}`)),
  cmd('show config fwd', (p, _a, log) => log(p.fwdConfigText() + '\n')),
  cmd('show fwd stats all', (p, _a, log) => log(p.fwdStatsText())),
  cmd('clear fwd stats all', (p) => p.clearFwdStats()),

  // Configuration.
  cmd('set fwd #mode', (p, [m]) => p.setForwardMode(m as string)),
  cmd('set fwd #mode retry', (p, [m]) => p.setForwardMode(m as string, true)),
  cmd('set burst #n', (p, [n], log) => setBurst(p, n as number, log)),
  cmd('set burst tx delay #n retry #n', (p, [d, r]) => {
    p.txDelayUs = d as number;
    p.txRetries = r as number;
  }),
  cmd('set txpkts #list', (p, [l]) => {
    stopped(p);
    // As --txpkts: each segment 1..65535 bytes.
    if ((l as number[]).some((n) => n === 0 || n > 0xffff)) throw new DpkitError('EINVAL', 'Bad arguments');
    p.config.txPkts = l as number[];
  }),
  // gen: read by the lcores of the next start; a bad value is refused here, in one line (N% against each tx port's link at start).
  cmd('set gen rate #word', (p, [r], log) => {
    stopped(p);
    parseRateSpec(r as string, 'set gen rate');
    p.config.gen.rate = r as string;
    log(`gen: rate of streams that name none set to ${r as string}`);
  }),
  cmd('set gen size #word', (p, [v]) => {
    stopped(p);
    p.config.gen.streams = [{ size: sizeOf(v as string, 'set gen size')! }];
  }),
  cmd('set gen latency on|off', (p, [on]) => {
    stopped(p);
    p.config.gen.latency = on === 'on';
  }),
  cmd('set nbcore #n', (p, [n]) => p.setNbCores(n as number)),
  cmd('set nbport #n', (p, [n]) => p.setNbPorts(n as number)),
  cmd('set portlist #list', (p, [l]) => p.setPortList(l as number[])),
  cmd('set verbose #n', (p, [n]) => p.setVerbose(n as number)),
  // As testpmd's: silent, read by the lcores of the next start.
  cmd('set record-core-cycles on|off', (p, [on]) => void (p.recordCoreCycles = on === 'on')),
  cmd('set record-burst-stats on|off', (p, [on]) => void (p.recordBurstStats = on === 'on')),
  cmd('set eth-peer #n #word', (p, [n, mac]) => p.setEthPeer(n as number, mac as string)),
  cmd('set promisc all|#n on|off', (p, [w, on], log) => setMode(p, w, on === 'on', 'promiscuous', log)),
  cmd('set allmulti all|#n on|off', (p, [w, on], log) => setMode(p, w, on === 'on', 'all-multicast', log)),
  cmd('set link-up port #n', (p, [n], log) => link(p, n as number, true, log)),
  cmd('set link-down port #n', (p, [n], log) => link(p, n as number, false, log)),

  // Ports.
  cmd('port start|stop|close|reset all|#n', (p, [op, w]) => portOp(p, op as string, w as number | 'all')),
  cmd('port config all rxq|txq|rxd|txd #n', (p, [what, n]) => p.portConfigAll(what as 'rxq', n as number)),
  cmd('port config mtu #n #n', (p, [n, mtu], log) => {
    if (!p.ports.includes(n as number)) return log(`Invalid port ${n}`);
    p.ethdev.mtuSet(n as number, mtu as number);
  }),
];

/** Literal prefixes of every command, for tab completion. */
const COMPLETIONS = [...new Set(COMMANDS.map((c) => c.tokens.slice(0, Math.max(1, c.tokens.findIndex((t) => t.includes('#') || t.includes('|')))).join(' ')))].concat('quit');

export async function runShell(pmd: Testpmd, log: Log): Promise<number> {
  const run = async (line: string) => {
    try {
      await execute(pmd, line, log);
    } catch (e) {
      if (e instanceof DpkitError) log(e.message);
      else throw e;
    }
  };
  let failure: unknown;
  // A failing lcore stops forwarding; the shell says why and reads the next command.
  pmd.onLcoreFailure = (e) => {
    failure = e;
    log(`\n${e.message}`);
  };
  // Before the prompt reads stdin: piped commands wait in the pipe meanwhile.
  if (pmd.opts.autoStart) await run(pmd.opts.txFirst ? `start tx_first ${pmd.opts.txFirstBursts}` : 'start');
  const rl = createInterface({
    input: process.stdin,
    output: process.stdout,
    prompt: 'testpmd> ',
    historySize: 1000,
    completer: (line: string): [string[], string] => [COMPLETIONS.filter((c) => c.startsWith(line)), line],
  });
  rl.prompt();
  for await (const raw of rl) {
    const line = raw.trim();
    if (line === 'quit' || line === 'exit') break;
    await run(line);
    rl.prompt();
  }
  rl.close();
  if (pmd.forwarding) {
    try {
      log(await pmd.stop());
    } catch (e) {
      failure ??= e;
    }
  }
  log('');
  pmd.close();
  log('\nBye...');
  if (failure) throw failure;
  return 0;
}

/** Runs one shell command. Throws DpkitError for one the model refuses, with the reason. */
export async function execute(pmd: Testpmd, line: string, log: Log): Promise<void> {
  const words = line.split(/\s+/).filter(Boolean);
  if (words.length === 0 || words[0]!.startsWith('#')) return;
  for (const c of COMMANDS) {
    const args = match(c.tokens, words);
    if (args) return c.run(pmd, args, log);
  }
  log(COMMANDS.some((c) => c.tokens[0] === words[0]) || words[0] === 'quit' ? 'Bad arguments' : 'Command not found');
}

/** The values of a command's variable tokens when `words` match it; undefined when they do not. */
function match(tokens: string[], words: string[]): Arg[] | undefined {
  if (tokens.length !== words.length) return undefined;
  const args: Arg[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const alts = tokens[i]!.split('|');
    const v = alts.reduce<Arg | undefined>((found, alt) => found ?? token(alt, words[i]!), undefined);
    if (v === undefined) return undefined;
    if (alts.length > 1 || alts[0]!.startsWith('#')) args.push(v);
  }
  return args;
}

function token(alt: string, w: string): Arg | undefined {
  switch (alt) {
    case '#n':
      return /^\d+$/.test(w) && Number(w) <= UINT32_MAX ? Number(w) : undefined;
    case '#list':
      return parseList(w);
    case '#word':
      return w;
    case '#mode':
      return engines.has(w) || isEnginePath(w) ? w : undefined;
    default:
      return alt === w ? w : undefined;
  }
}

/** A number token is an unsigned 32-bit value, as DPDK's cmdline parses it; past that, the command does not match. */
const UINT32_MAX = 0xffff_ffff;
/** Most items a list names (segments, ports): a range past it is refused before it is walked. */
const LIST_MAX = 1024;

/** testpmd's parse_item_list: 1,3,5 or 1-3 or 1-2,5, no repeats; values 32-bit, at most LIST_MAX of them. */
function parseList(w: string): number[] | undefined {
  const out: number[] = [];
  for (const part of w.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const [a, b] = [Number(m[1]), Number(m[2] ?? m[1])];
    // 1e20 + 1 === 1e20: without the bound, a range of huge numbers never ends.
    if (b < a || b > UINT32_MAX || out.length + (b - a) >= LIST_MAX) return undefined;
    for (let v = a; v <= b; v++) if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** Runs `f` on the ports `which` names, or prints testpmd's message for a port that does not exist. */
function withPorts(pmd: Testpmd, which: Arg, log: Log, f: (ports: number[]) => void): void {
  if (which === 'all') return f(pmd.ports);
  if (!pmd.ports.includes(which as number)) {
    log(`Invalid port ${which}`);
    return log(`The valid ports array is [${pmd.ports.map((p) => ` ${p}`).join('')} ]`);
  }
  f([which as number]);
}

function stopped(pmd: Testpmd): void {
  if (pmd.forwarding) throw new DpkitError('EBUSY', 'Please stop forwarding first');
}

function setBurst(pmd: Testpmd, n: number, log: Log): void {
  stopped(pmd);
  if (n > 512) return log(`nb pkt per burst: ${n} > 512 (maximum packet per burst)  ignored`);
  if (n === 0) return log('nb pkt per burst: 0 < 1 (a burst takes at least one packet)  ignored');
  pmd.config.burst = n;
  log(`Number of packets per burst set to ${n}`);
}

function clearStats(pmd: Testpmd, ports: number[], log: Log): void {
  pmd.clearPortStats(ports);
  for (const p of ports) log(`\n  NIC statistics for port ${p} cleared`);
}

function portOp(pmd: Testpmd, op: string, which: number | 'all'): void {
  if (op === 'start') return pmd.portStart(which);
  if (op === 'stop') return pmd.portStop(which);
  if (op === 'close') return pmd.portClose(which);
  return pmd.portReset(which);
}

/** `set promisc` / `set allmulti` (eth_set_promisc_mode, eth_set_allmulticast_mode). */
function setMode(pmd: Testpmd, which: Arg, on: boolean, mode: 'promiscuous' | 'all-multicast', log: Log): void {
  if (which !== 'all' && !pmd.ports.includes(which as number)) {
    return log(`Invalid port_id=${which}\nError during ${on ? 'enabling' : 'disabling'} ${mode} mode for port ${which}: No such device`);
  }
  const e = pmd.ethdev;
  for (const p of which === 'all' ? pmd.ports : [which as number]) {
    if (mode === 'promiscuous' && on) e.promiscuousEnable(p);
    else if (mode === 'promiscuous') e.promiscuousDisable(p);
    else if (on) e.allmulticastEnable(p);
    else e.allmulticastDisable(p);
  }
}

function link(pmd: Testpmd, port: number, up: boolean, log: Log): void {
  if (!pmd.ports.includes(port)) return log(`Invalid port_id=${port}\n\nSet link ${up ? 'up' : 'down'} fail.`);
  if (up) pmd.ethdev.setLinkUp(port);
  else pmd.ethdev.setLinkDown(port);
}

/** dpkit's ports have no RSS hash key (dev_info.hash_key_size 0): testpmd's answer for such a port. */
function rssHash(pmd: Testpmd, port: number, log: Log): void {
  if (!pmd.ports.includes(port)) return log(`Invalid port ${port}`);
  log('dev_info did not provide a valid hash key size');
}

const RX_DESC_STATUS = ['AVAILABLE', 'DONE', 'UNAVAILABLE'];
const TX_DESC_STATUS = ['FULL', 'DONE', 'UNAVAILABLE'];

function descStatus(pmd: Testpmd, port: number, dir: 'rxq' | 'txq', q: number, d: number, log: Log): void {
  if (!pmd.ports.includes(port)) return log(`invalid port id ${port}`);
  const rc = dir === 'rxq' ? pmd.ethdev.rxDescriptorStatus(port, q, d) : pmd.ethdev.txDescriptorStatus(port, q, d);
  // testpmd's words for any failure, "not supported" included.
  if (rc < 0) return log(`Invalid input: queue id = ${q}, desc id = ${d}`);
  log(`Desc status = ${(dir === 'rxq' ? RX_DESC_STATUS : TX_DESC_STATUS)[rc] ?? 'UNAVAILABLE'}`);
}

function deviceInfo(pmd: Testpmd, which: string, log: Log): void {
  const ports = which === 'all' ? pmd.ports : pmd.ports.filter((p) => pmd.ethdev.name(p) === which.split(',')[0]);
  if (ports.length > 0) log(ports.map((p) => deviceInfoBlock(pmd.ethdev, p)).join('\n'));
}
