/**
 * Runs `dpkit testpmd` as a user does: the built command (bin/dpkit.js over
 * dist/, which scripts/test.js builds before any test runs). Built lcore
 * workers start in milliseconds where tsx's take most of a second.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allowedCpus, detectedCpus } from '../../../src/eal/affinity.js';
import { formatCoreList } from '../../../src/apps/testpmd/options.js';

export const DPKIT = fileURLToPath(new URL('../../../bin/dpkit.js', import.meta.url));
if (!existsSync(new URL('../../../dist/src/cli/dpkit.js', import.meta.url))) throw new Error('dist/ is not built: run the tests with `npm test` (it builds dist first)');

/**
 * Three lcores (a main and two forwarding) on any machine, as EAL takes more
 * lcores than CPUs: --lcores with @, on the CPUs this process may use.
 */
export const THREE_LCORES = ['--lcores', `(0-2)@(${formatCoreList(allowedCpus() ?? detectedCpus())})`];

export interface TestpmdRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs testpmd to its end; `input` is its whole stdin (none: stdin ends at once). */
export function testpmd(argv: string[], input?: string): TestpmdRun {
  const r = spawnSync(process.execPath, [DPKIT, 'testpmd', ...argv], { encoding: 'utf8', input, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface RunningTestpmd {
  child: ChildProcessWithoutNullStreams;
  /** Everything it printed on stdout so far. */
  out: () => string;
  /** Everything it printed on stderr so far (drivers' log lines). */
  err: () => string;
  /** Resolves once `text` appears on its stdout. */
  waitFor: (text: string) => Promise<void>;
  exit: Promise<number | null>;
}

/** A running testpmd with piped stdio. */
export function startTestpmd(argv: string[]): RunningTestpmd {
  const child = spawn(process.execPath, [DPKIT, 'testpmd', ...argv], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', r));
  return { child, out: () => out, err: () => err, waitFor: (text) => until(() => out.includes(text), () => `no '${text}' in:\n${out}`), exit };
}

/** Resolves once `ready()`; fails after `ms` (a bound against hanging, not a timing assertion). */
export async function until(ready: () => boolean, why: () => string, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > end) throw new Error(`after ${ms} ms: ${why()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
