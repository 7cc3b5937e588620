/**
 * `dpkit testpmd`: the command-line front of testpmd. Without -i it
 * forwards until Enter, SIGINT, SIGTERM or --duration, printing periodic
 * port statistics with --stats-period, then the final forward statistics.
 * With -i it runs the interactive shell (shell.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ArgError } from '../../errors.js';
import { pinThisThread } from '../../eal/affinity.js';
import { parseTestpmdArgs, TESTPMD_USAGE } from './options.js';
import { runShell } from './shell.js';
import { Testpmd } from './testpmd.js';

export async function testpmdMain(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(TESTPMD_USAGE);
    return 0;
  }
  let opts;
  try {
    opts = parseTestpmdArgs(argv);
  } catch (e) {
    if (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) {
      throw new ArgError(`testpmd: ${e.message}\n\n${TESTPMD_USAGE}`);
    }
    throw e;
  }
  // With --json, stdout carries only the JSON; everything else goes to stderr.
  const out = opts.json ? process.stderr : process.stdout;
  const log = (line: string) => out.write(line + '\n');
  for (const n of opts.notes) process.stderr.write(`testpmd: ${n}\n`);

  const pmd = new Testpmd(opts, log);
  // The main lcore's thread too, as EAL pins it (only here: Testpmd may run inside a test process).
  pinThisThread(pmd.placement.cpus.get(opts.mainLcore));
  if (opts.interactive) return runShell(pmd, log);

  log('No commandline core given, start packet forwarding');
  pmd.start(opts.txFirst ? opts.txFirstBursts : 0);

  let reason = '';
  let watch: NodeJS.Timeout | undefined;
  const stopped = new Promise<void>((resolve) => {
    // Captures read to their end: nothing more will arrive, stop as --duration would.
    watch = setInterval(() => {
      if (!pmd.inputEnded()) return;
      reason = '\nEnd of input on every port (capture files read to their end), stopping forwarding.';
      resolve();
    }, 20);
    const onSignal = (sig: NodeJS.Signals) => {
      reason = `\nSignal ${sig === 'SIGINT' ? 2 : 15} received, preparing to exit...`;
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    if (process.stdin.isTTY) {
      log('Press enter to exit');
      process.stdin.on('data', (d: Buffer) => d.includes(10) && resolve());
    }
    if (opts.duration > 0) setTimeout(resolve, opts.duration * 1000).unref();
  });

  let periodic: NodeJS.Timeout | undefined;
  if (opts.statsPeriod > 0) {
    pmd.portStatsText(); // sets the "since last show" baseline
    periodic = setInterval(() => {
      const clear = out.isTTY ? '\x1b[2J\x1b[1;1H' : '';
      log(`${clear}\nPort statistics ====================================\n${pmd.portStatsText()}`);
    }, opts.statsPeriod * 1000);
  }

  let failure: unknown;
  await Promise.race([stopped, pmd.failed().catch((e: unknown) => (failure = e))]);
  clearInterval(periodic);
  clearInterval(watch);
  process.stdin.pause();
  if (reason) log(reason);
  // Forwarding time from the lcores' first poll, so the rates leave out their start-up.
  const seconds = pmd.forwardingSeconds();
  let text = '';
  try {
    text = await pmd.stop();
  } catch (e) {
    failure ??= e;
  }
  if (failure) {
    // The failure is the news; a leak it caused (mbufs held by a dead lcore) would only hide it.
    try {
      pmd.close();
    } catch (e) {
      process.stderr.write(`testpmd: after the failure: ${(e as Error).message}\n`);
    }
    throw failure;
  }
  log(text);
  if (opts.json) {
    const { ports, total } = pmd.fwdStats();
    const json = {
      forwardMode: pmd.forwardMode,
      datapath: pmd.heap.datapath,
      seconds,
      burst: pmd.config.burst,
      lcores: pmd.fwdLcoreIds().map((lcore) => ({ lcore, cpu: pmd.cpuOfLcore.get(lcore) ?? null })),
      ports: [...ports].map(([port, s]) => ({ port, ...s, nic: pmd.ethdev.stats(port) })),
      streams: pmd.streamStats().map(({ stats: _slot, ...s }) => s),
      total,
      mpps: { rx: seconds > 0 ? total.rxPackets / seconds / 1e6 : 0, tx: seconds > 0 ? total.txPackets / seconds / 1e6 : 0 },
    };
    process.stdout.write(JSON.stringify(json, null, 2) + '\n');
  }
  log('');
  pmd.close();
  log('\nBye...');
  await sleep(0);
  return 0;
}
