/**
 * Runs a testpmd — dpkit's or DPDK's — as a child process for a fixed time
 * with `--stats-period 1`, and reads its throughput from the periodic "Port
 * statistics" blocks both print in the same layout. Both systems are measured
 * the same way: the forwarding rate the ports report, second by second.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../package.js';
import { summarize } from './stats.js';

export type System = 'dpkit' | 'dpdk';

export interface TestpmdRun {
  system: System;
  /** EAL arguments (lcores, vdevs); DPDK's no-huge/no-pci/file-prefix are added for it. */
  eal: string[];
  /** testpmd arguments after `--`. */
  app: string[];
  /** Measured seconds (periodic blocks counted after the first nonzero one and the warm-up). */
  seconds: number;
  /** Seconds of forwarding left out before the measured ones (default 1). */
  warmup?: number;
  /** Count transmitted packets instead of received ones (txonly). */
  countTx: boolean;
  /** dpkit only: another checkout of dpkit to run (its folder), e.g. the commit before a change. */
  checkout?: string;
}

let dpdkPath: string | null | undefined;

/** The path of Debian's dpdk-testpmd, or null when it is not installed. */
export function dpdkTestpmd(): string | null {
  if (dpdkPath === undefined) {
    const r = spawnSync('sh', ['-c', 'command -v dpdk-testpmd'], { encoding: 'utf8' });
    dpdkPath = r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  }
  return dpdkPath;
}

/** DPDK's version string (from its pkg-config or its package), for the record. */
export function dpdkVersion(): string | null {
  const r = spawnSync('sh', ['-c', "dpkg-query -W -f='${Version}' dpdk 2>/dev/null"], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : null;
}

/**
 * Per-second throughput samples from testpmd output: the sum over ports of
 * Rx-pps (or Tx-pps) of each "Port statistics" block.
 */
export function parseThroughput(output: string, countTx: boolean): number[] {
  const blocks = output.split('Port statistics ====').slice(1);
  const key = countTx ? 'Tx-pps:' : 'Rx-pps:';
  return blocks.map((b) => {
    let sum = 0;
    for (const m of b.matchAll(new RegExp(`${key}\\s+(\\d+)`, 'g'))) sum += Number(m[1]);
    return sum;
  });
}

/**
 * How to start dpkit: the built CLI, or, when this code runs from its
 * TypeScript sources (tests, development), the sources too, so a run never
 * measures a stale build.
 */
export function dpkitEntry(): string[] {
  if (import.meta.url.endsWith('.ts')) return ['--import', 'tsx', fileURLToPath(new URL('src/cli/dpkit.ts', packageRoot()))];
  return [fileURLToPath(new URL('bin/dpkit.js', packageRoot()))];
}

/** Runs one testpmd and returns its median rate in Mpps over the measured seconds. */
export async function runTestpmd(run: TestpmdRun): Promise<number> {
  const warm = Math.ceil(run.warmup ?? 1);
  let cmd: string;
  let args: string[];
  let prefix = '';
  if (run.system === 'dpkit') {
    cmd = process.execPath;
    args = [...(run.checkout ? [join(run.checkout, 'bin', 'dpkit.js')] : dpkitEntry()), 'testpmd', ...run.eal, '--', ...run.app, '--stats-period=1', `--duration=${run.seconds + warm + 0.5}`];
  } else {
    const path = dpdkTestpmd();
    if (!path) throw new Error('dpdk-testpmd is not installed');
    prefix = `dpkit-bench-${process.pid}`;
    cmd = 'timeout';
    // DPDK needs ~2.5 s before it forwards; SIGINT makes it print its final statistics and exit.
    args = ['-s', 'INT', String(run.seconds + warm + 3.5), path, ...run.eal, '--no-huge', '-m', '1024', '--no-pci', '--file-prefix', prefix, '--', ...run.app, '--stats-period=1'];
  }
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0 || (run.system === 'dpdk' && (code === 124 || code === 130 || signal !== null))) resolve(text);
      else reject(new Error(`${run.system} testpmd exited with ${code ?? signal}: ${err.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
  if (prefix) rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
  const samples = parseThroughput(out, run.countTx);
  const first = samples.findIndex((s) => s > 0);
  const measured = first < 0 ? [] : samples.slice(first + warm, first + warm + run.seconds);
  if (measured.length === 0) throw new Error(`${run.system} testpmd printed no throughput (${samples.length} blocks)`);
  return summarize(measured).median / 1e6;
}
