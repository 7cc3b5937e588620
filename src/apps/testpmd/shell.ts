/**
 * testpmd's interactive prompt: the commands people use, read with
 * node:readline (history, tab completion). Statistics are read while the
 * lcores forward; commands run one at a time, in order, also when piped in.
 */
import { createInterface } from 'node:readline';
import { DpkitError } from '../../errors.js';
import { engines } from '../../fwd/index.js';
import type { Testpmd } from './testpmd.js';

const COMMANDS = [
  'start',
  'start tx_first',
  'stop',
  'set fwd ',
  'set burst ',
  'set txpkts ',
  'show port stats all',
  'show port info all',
  'show fwd stats all',
  'show config fwd',
  'clear port stats all',
  'clear fwd stats all',
  'port stop all',
  'port start all',
  'help',
  'quit',
];

const HELP = `Commands:
  start | start tx_first [N]        start forwarding (first sending N bursts of txonly packets)
  stop                              stop forwarding and print the forward statistics
  set fwd MODE                      ${[...engines.keys()].join(' ')}
  set burst N                       packets per burst (1..512)
  set txpkts A[,B...]               segment lengths of generated packets
  show port stats all|N             NIC statistics and throughput since the last show
  show port info all|N              port name, MAC, link, queues
  show fwd stats all                forward statistics since start
  show config fwd                   forwarding streams per lcore
  clear port stats all              reset NIC statistics
  port stop all | port start all    stop or start every port
  quit                              stop, close the ports and exit`;

export async function runShell(pmd: Testpmd, log: (line: string) => void): Promise<number> {
  const run = async (line: string) => {
    try {
      await execute(pmd, line, log);
    } catch (e) {
      if (e instanceof DpkitError) log(e.message);
      else throw e;
    }
  };
  // Before the prompt reads stdin: piped commands wait in the pipe meanwhile.
  if (pmd.opts.autoStart) await run(pmd.opts.txFirst ? `start tx_first ${pmd.opts.txFirstBursts}` : 'start');
  const rl = createInterface({
    input: process.stdin,
    output: process.stdout,
    prompt: 'testpmd> ',
    historySize: 1000,
    completer: (line: string): [string[], string] => [COMMANDS.filter((c) => c.startsWith(line)), line],
  });
  let failure: unknown;
  pmd.failed().catch((e: unknown) => {
    failure = e;
    log(`\n${e instanceof Error ? e.message : String(e)}`);
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

/** Runs one shell command. Throws DpkitError for a bad one, with the reason. */
export async function execute(pmd: Testpmd, line: string, log: (line: string) => void): Promise<void> {
  const w = line.split(/\s+/).filter(Boolean);
  const cmd = w.join(' ');
  if (w.length === 0) return;
  if (cmd === 'help') return log(HELP);
  if (w[0] === 'start') {
    // Returns once every lcore polls, so statistics read right after show traffic.
    if (w[1] === 'tx_first') return pmd.start(w[2] === undefined ? 1 : positive(w[2], 'start tx_first'));
    if (w.length === 1) return pmd.start(0);
  }
  if (cmd === 'stop') return log(await pmd.stop());
  if (w[0] === 'set' && w[1] === 'fwd' && w[2]) return pmd.setForwardMode(w[2]);
  if (w[0] === 'set' && w[1] === 'burst' && w[2]) {
    stopped(pmd);
    const n = positive(w[2], 'set burst');
    if (n > 512) throw new DpkitError('EINVAL', `set burst ${n}: must be at most 512`);
    pmd.config.burst = n;
    return log(`Number of packets per burst set to ${n}`);
  }
  if (w[0] === 'set' && w[1] === 'txpkts' && w[2]) {
    stopped(pmd);
    pmd.config.txPkts = w[2].split(',').map((s) => positive(s, 'set txpkts'));
    return;
  }
  if (w[0] === 'show' && w[1] === 'port' && w[2] === 'stats') return log(pmd.portStatsText(portList(pmd, w[3])));
  if (w[0] === 'show' && w[1] === 'port' && w[2] === 'info') return log(portList(pmd, w[3]).map((p) => portInfo(pmd, p)).join('\n'));
  if (cmd === 'show fwd stats all') return log(pmd.fwdStatsText());
  if (cmd === 'show config fwd') return log(pmd.fwdConfigText());
  if (cmd === 'clear port stats all' || cmd === 'clear fwd stats all') {
    pmd.clearPortStats();
    return log('\n  NIC statistics for all ports cleared');
  }
  if (cmd === 'port stop all') return pmd.portStop();
  if (cmd === 'port start all') return pmd.portStart();
  throw new DpkitError('EINVAL', `Bad arguments: '${line}' (type help)`);
}

function stopped(pmd: Testpmd): void {
  if (pmd.forwarding) throw new DpkitError('EBUSY', 'Please stop forwarding first');
}

function positive(s: string, what: string): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new DpkitError('EINVAL', `${what}: '${s}' is not a positive integer`);
  return n;
}

function portList(pmd: Testpmd, which: string | undefined): number[] {
  if (which === undefined || which === 'all') return pmd.ports;
  const p = Number(which);
  if (!pmd.ports.includes(p)) throw new DpkitError('EINVAL', `Invalid port ${which}`);
  return [p];
}

function portInfo(pmd: Testpmd, p: number): string {
  const e = pmd.ethdev;
  const mac = [...e.macAddr(p)].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
  return [
    '',
    `********************* Infos for port ${p}  *********************`,
    `MAC address: ${mac}`,
    `Device name: ${e.name(p)}`,
    `Driver name: ${e.info(p).driverName}`,
    `Link status: ${e.linkUp(p) ? 'up' : 'down'}`,
    `Link speed: ${e.linkSpeed(p) >= 1000 ? `${e.linkSpeed(p) / 1000} Gbps` : `${e.linkSpeed(p)} Mbps`}`,
    `Promiscuous mode: ${e.promiscuousGet(p) ? 'enabled' : 'disabled'}`,
    `Current number of RX queues: ${e.nbRxQueues(p)}`,
    `Current number of TX queues: ${e.nbTxQueues(p)}`,
  ].join('\n');
}
