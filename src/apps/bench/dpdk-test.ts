/**
 * DPDK's table autotests from Debian's `dpdk-test` (package dpdk-dev):
 * lpm_perf_autotest, lpm6_perf_autotest and hash_perf_autotest, run as
 * `echo NAME | dpdk-test --no-huge ...` and read from what they print. They
 * print cycles per operation; EAL's debug log gives the TSC frequency that
 * turns them into operations per second. A run is stopped once it has
 * printed every figure wanted (WANTED), so the slow rest of an autotest is
 * not waited for. A run that fails, times out or prints none of the lines
 * wanted is an outcome (`failed`), never a throw: the bench shows it in
 * place of DPDK's figures and goes on.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dpdkEalArgs } from './dpdk-memory.js';

export type Autotest = 'lpm_perf_autotest' | 'lpm6_perf_autotest' | 'hash_perf_autotest';

/** What one metric of a table costs in DPDK: cycles per operation, as the autotest prints it. */
export type Metric = 'add' | 'lookup' | 'bulk' | 'x4';

/** One autotest run: cycles per operation by metric and the TSC's Hz, or why there are none. */
export type AutotestRun = { cycles: Partial<Record<Metric, number>>; tscHz: number } | { failed: string };

/** The key size of hash_perf_autotest's table the bench reads: 16 bytes, l3fwd's IPv4 5-tuple key. */
export const HASH_KEY_SIZE = 16;

/** Seconds an autotest may take: lpm_perf_autotest builds a 1.2 M-route table first (minutes on a loaded machine). */
export const AUTOTEST_TIMEOUT_S = 1800;

const num = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text));

/** `EAL: TSC frequency is ~2450000 KHz` (printed at debug level). @returns Hz, or undefined */
export function parseTscHz(out: string): number | undefined {
  const khz = num(/TSC frequency is ~(\d+) KHz/.exec(out)?.[1]);
  return khz === undefined ? undefined : khz * 1000;
}

/**
 * lpm_perf_autotest's and lpm6_perf_autotest's lines: `Average LPM Add: %g
 * cycles`, `Average LPM Lookup: %.1f cycles (fails = …)`, `BULK LPM Lookup:
 * …`, `LPM LookupX4: …` (IPv4 only).
 */
export function parseLpmPerf(out: string): Partial<Record<Metric, number>> {
  const at = (label: string) => num(new RegExp(`^${label}: ([0-9.e+]+) cycles`, 'm').exec(out)?.[1]);
  const r: Partial<Record<Metric, number>> = {};
  for (const [m, label] of [['add', 'Average LPM Add'], ['lookup', 'Average LPM Lookup'], ['bulk', 'BULK LPM Lookup'], ['x4', 'LPM LookupX4']] as const) {
    const v = at(label);
    if (v !== undefined && Number.isFinite(v)) r[m] = v;
  }
  return r;
}

/**
 * hash_perf_autotest's first results table (operations without data, without
 * pre-computed hash values): the row of `keySize`, columns Add, Lookup,
 * Lookup_bulk, Delete in cycles per operation.
 */
export function parseHashPerf(out: string, keySize = HASH_KEY_SIZE): Partial<Record<Metric, number>> {
  const start = out.indexOf('Results (in CPU cycles/operation)');
  if (start < 0) return {};
  const end = out.indexOf('With pre-computed hash values', start);
  const block = out.slice(start, end < 0 ? undefined : end);
  const row = new RegExp(`^${keySize}\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s*$`, 'm').exec(block);
  if (!row) return {};
  return { add: Number(row[1]), lookup: Number(row[2]), bulk: Number(row[3]) };
}

/** The metrics each autotest prints: once all are there the rest of its run (deletes, other tables, RCU tests) is not waited for. */
export const WANTED: Record<Autotest, readonly Metric[]> = {
  lpm_perf_autotest: ['add', 'lookup', 'bulk', 'x4'],
  lpm6_perf_autotest: ['add', 'lookup', 'bulk'],
  hash_perf_autotest: ['add', 'lookup', 'bulk'],
};

/** Which parser reads which autotest. */
const PARSERS: Record<Autotest, (out: string) => Partial<Record<Metric, number>>> = {
  lpm_perf_autotest: parseLpmPerf,
  lpm6_perf_autotest: parseLpmPerf,
  hash_perf_autotest: (out) => parseHashPerf(out),
};

/** What an autotest's output and exit give: figures, or the reason there are none (the output's last line as a clue). */
export function readAutotest(test: Autotest, out: string, exit: string | null): AutotestRun {
  const cycles = PARSERS[test](out);
  const tscHz = parseTscHz(out);
  const last = out.trim().split('\n').filter((l) => !l.startsWith('EAL:')).at(-1)?.slice(0, 160) ?? '';
  if (Object.keys(cycles).length === 0) return { failed: `${test} ${exit ?? 'ended'} and printed none of its results${last ? ` (last line: ${last})` : ' (no output)'}` };
  if (tscHz === undefined) return { failed: `${test}: no 'TSC frequency' line from EAL, so its cycles cannot be turned into a rate` };
  if (/Test Failed/.test(out)) return { failed: `${test} reported Test Failed (${last})` };
  return { cycles, tscHz };
}

/** `name` on PATH, or null. */
function onPath(name: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/** The dpdk-test binary on PATH, or null. */
export function dpdkTestBinary(): string | null {
  return onPath('dpdk-test');
}

/**
 * Runs `test` once in dpdk-test's shell (its own file prefix, removed after),
 * at most `timeoutS` seconds. @returns its figures or why there are none; never throws.
 */
export function runAutotest(test: Autotest, timeoutS = AUTOTEST_TIMEOUT_S): Promise<AutotestRun> {
  const bin = dpdkTestBinary();
  if (!bin) return Promise.resolve({ failed: `${test}: dpdk-test is not installed (apt-get install dpdk-dev)` });
  const prefix = `dpkit-bench-${test}-${process.pid}`;
  const stdbuf = onPath('stdbuf');
  const args = [...dpdkEalArgs(prefix), '--log-level=lib.eal:debug'];
  return new Promise((done) => {
    // Line-buffered (coreutils' stdbuf): a run killed at the timeout still hands over the lines it printed.
    const child = stdbuf ? spawn(stdbuf, ['-oL', bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] }) : spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // A dpdk-test that exits before reading its command (EAL failing) closes the pipe: its exit tells why, not EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(`${test}\n`);
    let timedOut = false;
    let enough = false;
    const timer = setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), timeoutS * 1000);
    // Whole lines only: a figure cut by a chunk's end is not a figure.
    child.stdout.on('data', () => {
      if (enough || parseTscHz(out) === undefined) return;
      const got = PARSERS[test](out.slice(0, out.lastIndexOf('\n') + 1));
      if (WANTED[test].every((m) => got[m] !== undefined)) {
        enough = true;
        child.kill('SIGKILL');
      }
    });
    const finish = (exit: string | null) => {
      clearTimeout(timer);
      rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
      done(readAutotest(test, enough ? out.slice(0, out.lastIndexOf('\n') + 1) : out, exit));
    };
    child.on('error', (e) => finish(`could not start (${e.message})`));
    child.on('close', (code, signal) => finish(enough ? null : timedOut ? `did not finish in ${timeoutS} s` : code === 0 ? null : `exited with ${code ?? signal}`));
  });
}
