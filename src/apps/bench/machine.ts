/**
 * What a result needs next to it: the machine it was measured on, and how
 * busy the machine was with anything else while it was measured.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, release } from 'node:os';
import { native } from '../../native/native.js';
import { version } from '../../package.js';
import { dpdkTestpmd, dpdkVersion } from './testpmd-run.js';
import type { DpdkBuild } from './dpdk.js';
import { dpdkMemoryFact } from './dpdk-memory.js';

export interface MachineFacts {
  cpu: string;
  cores: number;
  kernel: string;
  node: string;
  dpkit: string;
  dpdk: string | null;
  /** The DPDK builds the run's DPDK arms ran (`--dpdk`, or the one on PATH): version, build flags, path. */
  dpdkBuilds?: DpdkBuild[];
  /** The pages DPDK's processes ran on (dpdk-memory.ts): hugepages, or --no-huge and why. */
  dpdkMemory?: string;
  /** Whether lcores were pinned (the native shim is built). */
  affinity: boolean;
  loadavg: number[];
}

export function machineFacts(): MachineFacts {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    kernel: release(),
    node: process.version,
    dpkit: version(),
    dpdk: dpdkTestpmd() ? (dpdkVersion() ?? 'installed, version unknown') : null,
    ...(dpdkTestpmd() ? { dpdkMemory: dpdkMemoryFact() } : {}),
    affinity: native() !== undefined,
    loadavg: loadavg(),
  };
}

const TICKS_PER_SECOND = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout);
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** CPU ticks (user + system) and parent of every process, from /proc. */
export interface CpuSnapshot {
  at: number;
  procs: Map<number, { ppid: number; ticks: number }>;
}

export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, { ppid: number; ticks: number }>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    // no /proc: no load figures
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(e), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // the process ended between readdir and read
    }
  }
  return { at: performance.now(), procs };
}

/**
 * CPUs' worth of work done between two snapshots by processes that are
 * neither `self` nor its descendants: the load a measurement competed with
 * (0.5 = half a core busy elsewhere on average).
 */
export function otherLoad(before: CpuSnapshot, after: CpuSnapshot, self = process.pid): number {
  const seconds = (after.at - before.at) / 1000;
  if (seconds <= 0 || after.procs.size === 0) return 0;
  const ours = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
      if (p === self) return true;
      const info = after.procs.get(p) ?? before.procs.get(p);
      if (!info) return false;
      p = info.ppid;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, a] of after.procs) {
    if (ours(pid)) continue;
    const b = before.procs.get(pid);
    ticks += a.ticks - (b ? b.ticks : 0);
  }
  return Math.max(0, ticks / TICKS_PER_SECOND / seconds);
}
