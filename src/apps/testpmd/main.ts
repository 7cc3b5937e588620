/**
 * `dpkit testpmd`: the command-line front of testpmd. Without -i it
 * forwards until a newline on stdin, a signal (signals.ts) or --duration (see
 * untilStopped), printing periodic port statistics with --stats-period,
 * then the final forward statistics.
 * With -i it runs the interactive shell (shell.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ArgError } from '../../errors.js';
import { pinThisThread } from '../../eal/affinity.js';
import { parseTestpmdArgs, TESTPMD_USAGE, type TestpmdOptions } from './options.js';
import { startObservers } from './observe.js';
import { RateSampler } from './sampler.js';
import { runShell } from './shell.js';
import { StopSignals } from './signals.js';
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
      // node's parseArgs adds advice about positionals that does not apply here.
      const what = e.message.split('. To specify')[0]!.replace(/^Unknown option/, 'unknown option');
      throw new ArgError(`testpmd: ${what} (dpkit testpmd --help lists the options)`);
    }
    throw e;
  }
  // With --json, stdout carries only the JSON; everything else goes to stderr.
  const out = opts.json ? process.stderr : process.stdout;
  const log = (line: string) => out.write(line + '\n');
  for (const n of opts.notes) process.stderr.write(`testpmd: ${n}\n`);

  // Caught before anything starts: a signal during start-up stops the run once it has started.
  const signals = opts.interactive ? null : new StopSignals();
  try {
    const pmd = new Testpmd(opts, log);
    // The main lcore's thread too, as EAL pins it (only here: Testpmd may run inside a test process).
    pinThisThread(pmd.placement.cpus.get(opts.mainLcore));
    let observers;
    try {
      observers = await startObservers(pmd, opts, (line) => process.stderr.write(line + '\n'));
    } catch (e) {
      pmd.close();
      throw e;
    }
    try {
      if (!signals) return await runShell(pmd, log);
      return signals.exitCode(await forward(pmd, opts, log, out, signals));
    } finally {
      observers.close();
    }
  } finally {
    signals?.release();
  }
}

/** Forwards until told to stop, then prints the final statistics (and --json) and closes everything. @returns 0. */
async function forward(pmd: Testpmd, opts: TestpmdOptions, log: (line: string) => void, out: NodeJS.WriteStream, signals: StopSignals): Promise<number> {
  log('No commandline core given, start packet forwarding');
  let failure: unknown;
  try {
    await pmd.start(opts.txFirst ? opts.txFirstBursts : 0);
    const reason = signals.received ? signals.line : await untilStopped(pmd, opts, log, out, signals);
    if (reason) log(reason);
  } catch (e) {
    failure = e;
  }
  process.stdin.pause();
  // Forwarding time from the lcores' launch, so the rates leave out their start-up.
  const seconds = pmd.forwardingSeconds();
  let text = '';
  if (pmd.forwarding) {
    try {
      text = await pmd.stop();
    } catch (e) {
      failure ??= e;
    }
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
      // gc: garbage collections in the lcore's worker while it forwarded (0 for an allocation-free data path).
      lcores: pmd.fwdLcoreIds().map((lcore) => ({ lcore, cpu: pmd.cpuOfLcore.get(lcore) ?? null, gc: pmd.gcOfLcore.get(lcore) ?? null })),
      ports: [...ports].map(([port, s]) => ({ port, ...s, nic: pmd.ethdev.stats(port) })),
      streams: pmd.streamStats().map(({ stats: _slot, ...s }) => s),
      ...(pmd.genReport() ? { gen: pmd.genReport() } : {}),
      total,
      mpps: { rx: seconds > 0 ? total.rxPackets / seconds / 1e6 : 0, tx: seconds > 0 ? total.txPackets / seconds / 1e6 : 0 },
    };
    // With --stats-period the periodic objects came as JSON lines: the final one is a line too.
    process.stdout.write(JSON.stringify(json, null, opts.statsPeriod > 0 ? undefined : 2) + '\n');
  }
  log('');
  pmd.close();
  log('\nBye...');
  await sleep(0);
  return 0;
}

/**
 * Forwards until one of DPDK's reasons to stop, printing periodic statistics
 * meanwhile: a newline on stdin (a terminal or a pipe), SIGINT, SIGTERM or SIGHUP,
 * --duration elapsed, every capture read to its end, or end of stdin when
 * nothing else would end the run (no --stats-period, no --duration).
 * @returns the line to print about why it stopped ('' for none).
 * @throws the LcoreError of an lcore that failed meanwhile (its timers cleared all the same).
 */
async function untilStopped(pmd: Testpmd, opts: TestpmdOptions, log: (line: string) => void, out: NodeJS.WriteStream, signals: StopSignals): Promise<string> {
  let watch: NodeJS.Timeout | undefined;
  let periodic: NodeJS.Timeout | undefined;
  const stopped = new Promise<string>((resolve) => {
    // Captures read to their end: nothing more will arrive, stop as --duration would. Only watched
    // when every port can end: the main thread shares a CPU with others (a traffic source, say),
    // and 50 wake-ups a second are theirs to lose.
    if (pmd.inputCanEnd()) watch = setInterval(() => pmd.inputEnded() && resolve('\nEnd of input on every port (capture files read to their end), stopping forwarding.'), 20);
    void signals.next().then(resolve);
    log('Press enter to exit');
    process.stdin.on('data', (d: Buffer) => d.includes(10) && resolve(''));
    if (opts.statsPeriod === 0 && opts.duration === 0) process.stdin.once('end', () => resolve(''));
    // From the launch, so every lcore forwards the whole duration; re-armed for what is left,
    // as a timer may fire a hair early on the event loop's cached clock.
    const due = () => {
      const left = opts.duration - pmd.forwardingSeconds();
      if (left <= 0) resolve('');
      else setTimeout(due, left * 1000 + 1).unref();
    };
    if (opts.duration > 0) due();
    if (opts.statsPeriod > 0) {
      pmd.portStatsText(); // sets the "since last show" baseline
      const sampler = opts.json ? new RateSampler(pmd) : undefined;
      sampler?.sample();
      periodic = setInterval(() => {
        // --json: one object per period on stdout (JSON lines), the text still on stderr.
        // gen: each stream's account so far rides along (asked against achieved, live).
        const gen = pmd.genReport();
        if (sampler) process.stdout.write(JSON.stringify({ period: true, ...sampler.sample(), ...(gen ? { gen: gen.streams } : {}) }) + '\n');
        const clear = out.isTTY ? '\x1b[2J\x1b[1;1H' : '';
        log(`${clear}\nPort statistics ====================================\n${pmd.portStatsText()}`);
      }, opts.statsPeriod * 1000);
    }
  });
  try {
    return await Promise.race([stopped, pmd.failed()]);
  } finally {
    clearInterval(periodic);
    clearInterval(watch);
  }
}
