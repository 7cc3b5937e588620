/**
 * Lcore placement, as EAL does it: each lcore thread is pinned to its CPU set
 * (`-l 0-2` puts lcore N on CPU N; `--lcores 0@0,1@1,2@0` says so explicitly).
 * The main thread decides the sets (`placeLcores`) and checks them against
 * the CPUs this process may use; each worker pins itself on start
 * (`pinThisThread`), since sched_setaffinity acts on the calling thread.
 * Without the native shim every lcore floats, and placement says why.
 */
import { cpus } from 'node:os';
import { ArgError } from '../errors.js';
import { native, nativeUnavailable } from '../native/native.js';

/** Lcore id -> the CPUs it may run on; a missing entry floats. */
export type CpuMap = Map<number, number[]>;

export interface Placement {
  cpus: CpuMap;
  /** Why some or all lcores float, for the start-up log. */
  notes: string[];
}

/** The CPUs this machine has (EAL's eal_cpu_detected): what -l and -c may name. Empty when the OS does not say. */
export function detectedCpus(): number[] {
  return cpus().map((_, i) => i);
}

/** The CPUs this process may run on; undefined without the shim. */
export function allowedCpus(): number[] | undefined {
  return native()?.getAffinity();
}

/**
 * Resolves the placement of `lcores` from an explicit map (`--lcores`) or
 * EAL's default of lcore N on CPU N. Explicit CPUs outside the allowed set
 * are an error, as in EAL; an implicit CPU that does not exist leaves that
 * lcore floating with a note (dpkit runs more lcores than cores, EAL does not).
 * `allowed` is null without the shim: every lcore floats.
 */
export function placeLcores(lcores: number[], explicit?: CpuMap, allowed: number[] | null = allowedCpus() ?? null): Placement {
  const notes: string[] = [];
  const cpus: CpuMap = new Map();
  if (!allowed) {
    notes.push(`lcores float: no CPU affinity (native shim ${nativeUnavailable()})`);
    return { cpus, notes };
  }
  const floating: number[] = [];
  for (const id of lcores) {
    const set = explicit?.get(id);
    if (set) {
      const bad = set.filter((c) => !allowed.includes(c));
      if (bad.length) throw new ArgError(`--lcores: lcore ${id} on CPU ${bad.join(',')}, but this process may only use CPUs ${allowed.join(',')}`);
      cpus.set(id, set);
    } else if (allowed.includes(id)) {
      cpus.set(id, [id]);
    } else {
      floating.push(id);
    }
  }
  if (floating.length) notes.push(`lcore${floating.length > 1 ? 's' : ''} ${floating.join(',')} float: no CPU ${floating.join(',')} here (CPUs ${allowed.join(',')})`);
  return { cpus, notes };
}

/** Pins the calling thread (an lcore's worker) to `cpus`; returns the CPU it now runs on, or undefined when floating. */
export function pinThisThread(cpus: number[] | undefined): number | undefined {
  const shim = native();
  if (!cpus || !shim) return undefined;
  shim.setAffinity(cpus);
  return shim.currentCpu();
}
