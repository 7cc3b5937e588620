/**
 * The optional native shim (native/: memfd, mmap into the heap, SCM_RIGHTS,
 * eventfd, AF_PACKET, CPU affinity), loaded on first use. When it
 * is missing, `native()` returns undefined and `nativeUnavailable()` says why
 * (the build's own reason from build/native-status.txt), so a feature that
 * needs it can say so in a message a user can act on.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { packageRoot } from '../package.js';

export interface NativeShim {
  /** Pins the calling thread to these CPUs (sched_setaffinity). */
  setAffinity(cpus: number[]): void;
  /** The CPUs the calling thread may run on. */
  getAffinity(): number[];
  /** The CPU the calling thread runs on now (sched_getcpu). */
  currentCpu(): number;
}

let loaded: NativeShim | undefined;
let reason: string | undefined;

export function native(): NativeShim | undefined {
  if (loaded || reason) return loaded;
  const root = packageRoot();
  try {
    loaded = createRequire(root)(new URL('native/build/Release/dpkit_native.node', root).pathname) as NativeShim;
  } catch (e) {
    let status = '';
    try {
      status = readFileSync(new URL('build/native-status.txt', root), 'utf8').trim().split('\n')[0]!;
    } catch {
      status = 'not built (run npm install)';
    }
    reason = status.startsWith('not built') ? status : `not loadable: ${(e as Error).message}`;
  }
  return loaded;
}

/** Why the shim is missing, or undefined when it is loaded. */
export function nativeUnavailable(): string | undefined {
  native();
  return reason;
}
