/**
 * Runs a testpmd — dpkit's or DPDK's — as a child process for a fixed time
 * with `--stats-period 1`, and reads its throughput from the periodic "Port
 * statistics" blocks both print in the same layout. Both systems are measured
 * the same way: the forwarding rate the ports report, second by second.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchRunError } from '../../errors.js';
import { packageRoot } from '../../package.js';
import { dpdkEalArgs } from './dpdk-memory.js';
import { summarize } from './stats.js';
import { watchTestpmd, type Watch } from './watchers.js';

export type System = 'dpkit' | 'dpdk';

export interface TestpmdRun {
  system: System;
  /** EAL arguments (lcores, vdevs); DPDK's memory, no-pci and file-prefix are added for it (dpdkEalArgs). */
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
  /** dpkit only: telemetry clients and /metrics scrapers watching the run. */
  watch?: Watch;
  /** Seconds the run may take to start forwarding, beyond the usual (a peer to connect to; default 0). */
  startup?: number;
  /** DPDK only: the dpdk-testpmd to run (default: the one on PATH, dpdkTestpmd()). */
  dpdk?: string;
  /** DPDK only: its --file-prefix, when two DPDK testpmds run at once (default: one per bench process). */
  prefix?: string;
  /** Seconds the process may wait for its traffic before it starts (a memif server waits for its client); added to its run time. */
  lead?: number;
  /** Sees the process's stdout as it comes (a memif pair starts its client once the server prints statistics). */
  onOutput?: (text: string) => void;
  /**
   * The measured run this one is the peer of (a vhost-user host feeding its guest, a memif client
   * its server): this run is stopped once that one ends, and not at its own measured blocks, which
   * may come before the other's last second.
   */
  stopWhen?: Promise<unknown>;
}

/** The /metrics port of a watched run (one run at a time); the dashboard takes the next. */
const WATCH_METRICS_PORT = 19478;

/** Seconds past its own end after which a testpmd run counts as stuck. */
const HUNG_AFTER_S = 30;

/** Seconds a DPDK testpmd may take to start forwarding beyond the usual ~2.5 (its run ends when its blocks are in). */
const DPDK_SLOW_START_S = 20;

/** Whether a testpmd's output holds the warm-up and measured blocks after its first nonzero one. */
function measuredBlocksIn(out: string, countTx: boolean, warm: number, seconds: number): boolean {
  const samples = parseThroughput(out, countTx);
  const first = samples.findIndex((s) => s > 0);
  return first >= 0 && samples.length >= first + warm + seconds;
}

/** Runs in this process so far: each DPDK run gets its own --file-prefix (two may run at once). */
let runs = 0;

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

let logs = 0;

/** Keeps a failed run's command and output where its error can point, for the person reading the report. */
function keepLog(system: System, cmd: string, args: string[], out: string, err: string): string {
  const dir = join(tmpdir(), 'dpkit-bench-logs');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${system}-${process.pid}-${++logs}.log`);
  writeFileSync(file, `$ ${[cmd, ...args].join(' ')}\n--- stdout\n${out}\n--- stderr\n${err}\n`);
  return file;
}

/**
 * Runs one testpmd and returns its median rate in Mpps over the measured seconds.
 * Either system is stopped with SIGINT once its measured blocks are in (or, as
 * a peer, once the run it serves ends); its --duration, or `timeout` for
 * DPDK's, only bounds a run that never gets there.
 * @throws BenchRunError when the process fails or prints no throughput, naming the log of its output.
 */
export async function runTestpmd(run: TestpmdRun): Promise<number> {
  const warm = Math.ceil(run.warmup ?? 1);
  const startup = run.startup ?? 0;
  const span = run.seconds + warm + startup + (run.lead ?? 0);
  let cmd: string;
  let args: string[];
  let prefix = '';
  if (run.system === 'dpkit') {
    cmd = process.execPath;
    args = [...(run.checkout ? [join(run.checkout, 'bin', 'dpkit.js')] : dpkitEntry()), 'testpmd', ...run.eal, '--', ...run.app, '--stats-period=1', `--duration=${span + 0.5}`];
    if (run.watch) {
      prefix = `dpkit-bench-${process.pid}`;
      args.splice(args.indexOf('--'), 0, '--file-prefix', prefix);
      args.push(`--metrics=127.0.0.1:${WATCH_METRICS_PORT}`, `--web=127.0.0.1:${WATCH_METRICS_PORT + 1}`);
    }
  } else {
    const path = run.dpdk ?? dpdkTestpmd();
    if (!path) throw new BenchRunError('dpdk-testpmd is not installed (apt-get install dpdk-dev, or give --dpdk PATH)');
    prefix = run.prefix ?? `dpkit-bench-${process.pid}-${runs++}`;
    cmd = 'timeout';
    // DPDK needs ~2.5 s before it forwards, and much longer on a loaded machine or on ports that
    // map kernel rings: the run is stopped with SIGINT (`timeout` passes it on, DPDK prints its
    // final statistics) once its measured blocks are in, and `timeout` only bounds a slow start.
    args = ['-s', 'INT', String(span + 3.5 + DPDK_SLOW_START_S), path, ...run.eal, ...dpdkEalArgs(prefix), '--', ...run.app, '--stats-period=1'];
  }
  let err = '';
  let exited!: () => void;
  const ended = new Promise<void>((r) => (exited = r));
  const watching = run.watch && run.system === 'dpkit' ? watchTestpmd(run.watch, prefix, `http://127.0.0.1:${WATCH_METRICS_PORT}/metrics`, `http://127.0.0.1:${WATCH_METRICS_PORT + 1}/`, ended) : Promise.resolve();
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.on('exit', () => exited());
    let text = '';
    let stopping = false;
    const stop = () => {
      if (stopping || child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      child.kill('SIGINT');
    };
    run.stopWhen?.then(stop, stop);
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      run.onOutput?.(text);
      if (!run.stopWhen && !stopping && measuredBlocksIn(text, run.countTx, warm, run.seconds)) stop();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new BenchRunError(`${run.system} testpmd did not start: ${e.message}`)));
    // A run that outlives its duration by this much is stuck (a peer gone mid-start): killed, and the run fails.
    const limit = run.seconds + warm + startup + HUNG_AFTER_S + (run.system === 'dpdk' ? DPDK_SLOW_START_S : 0);
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, limit * 1000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (hung) return reject(new BenchRunError(`${run.system} testpmd did not end within ${limit} s (killed)`, keepLog(run.system, cmd, args, text, err)));
      if (code === 0 || (run.system === 'dpdk' && (code === 124 || code === 130 || signal !== null))) resolve(text);
      else {
        const last = err.trim().split('\n').slice(-3).join(' | ');
        reject(new BenchRunError(`${run.system} testpmd exited with ${code ?? signal}${last ? `: ${last}` : ''}`, keepLog(run.system, cmd, args, text, err)));
      }
    });
  }).finally(() => {
    exited();
    if (prefix) rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
  });
  await watching;
  const samples = parseThroughput(out, run.countTx);
  const first = samples.findIndex((s) => s > 0);
  const measured = first < 0 ? [] : samples.slice(first + warm, first + warm + run.seconds);
  if (measured.length === 0) throw new BenchRunError(`${run.system} testpmd printed no throughput (${samples.length} blocks)`, keepLog(run.system, cmd, args, out, err));
  return summarize(measured).median / 1e6;
}

/** One side of a two-process run (a vhost-user or memif pair): its role and how its run ended. */
export interface PairSide {
  role: string;
  result: PromiseSettledResult<number>;
}

/**
 * The measured side's rate of a two-process run, or its failure with the other
 * side's beside it when that failed too (`server: ...; client: ...`): a side
 * left without its peer fails for want of traffic, a peer stopped by a failed
 * side fails after it, and only both messages tell which came first.
 * @throws the measured side's error, or a BenchRunError naming both sides'.
 */
export function pairOutcome(measured: PairSide, other: PairSide): number {
  const m = measured.result;
  if (m.status === 'fulfilled') return m.value;
  const o = other.result;
  if (o.status === 'fulfilled' || !(m.reason instanceof Error) || !(o.reason instanceof Error)) throw m.reason;
  throw new BenchRunError(`${measured.role}: ${m.reason.message}; ${other.role}: ${o.reason.message}`);
}
