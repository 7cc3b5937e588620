/**
 * The optional native shim (native/: memfd, mmap into the heap, unix sockets
 * with SCM_RIGHTS, eventfd, fd readiness on the event loop, CPU affinity, a
 * clock reading that allocates nothing),
 * loaded on first use in each thread. When it is missing, `native()` returns
 * undefined and `nativeUnavailable()` says why (the build's own reason from
 * build/native-status.txt), so a feature that needs it can say so in one line
 * a user can act on: `requireNative('net_vhost0')` throws exactly that.
 *
 * The typed surface is in the modules beside this one (memory.ts, unix.ts,
 * eventfd.ts, watch.ts); drivers use those, not `NativeShim` directly.
 *
 * fds are plain numbers that the caller owns and closes (`closeFd` in
 * watch.ts). Nothing here closes an fd behind the caller's back: no handle
 * object, so no garbage collection ever closes one.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DpkitError } from '../errors.js';
import { packageRoot } from '../package.js';

/**
 * What native/build/Release/dpkit_native.node exports, each function throwing
 * NativeError / MapRefusedError (TypeError for a wrong argument type); the
 * contracts are on the wrappers in memory.ts, unix.ts, eventfd.ts, watch.ts.
 */
export interface NativeShim {
  /** Pins the calling thread to these CPUs (sched_setaffinity). */
  setAffinity(cpus: number[]): void;
  /** The CPUs the calling thread may run on. */
  getAffinity(): number[];
  /** The CPU the calling thread runs on now (sched_getcpu). */
  currentCpu(): number;

  /**
   * A reader of CLOCK_MONOTONIC that writes nanoseconds into `into[0]` and
   * returns nothing, so a reading allocates nothing (eal/clock.ts). Absent
   * from a shim built before it.
   */
  clockBind?(into: Float64Array): () => void;

  readonly pageSize: number;
  memfdCreate(name: string, size: number, seal: boolean): number;
  backMemory(buffer: SharedArrayBuffer, fd: number): void;
  mapWindow(buffer: SharedArrayBuffer, offset: number, length: number, fd: number, fdOffset: number, guard?: number): void;
  unmapWindow(buffer: SharedArrayBuffer, offset: number, length: number): void;
  fdSeals(fd: number): number;

  unixListen(path: string, type: 'stream' | 'seqpacket', backlog: number): number;
  unixAccept(fd: number): number;
  unixConnect(path: string, type: 'stream' | 'seqpacket'): number;
  sendMsg(fd: number, bytes: Uint8Array, fds: readonly number[]): number;
  recvMsg(fd: number, into: Uint8Array): { bytes: number; fds: number[]; truncated: boolean; fdsTruncated: boolean } | null;

  eventfdCreate(initial: number, semaphore: boolean): number;
  eventfdRead(fd: number): number;
  eventfdWrite(fd: number, add: number): boolean;

  watch(fd: number, events: number, onReady: (events: number) => void): void;
  unwatch(fd: number): boolean;
  close(fd: number): void;
  /**
   * write(2) of bytes[offset, offset + length) to `fd`, EINTR retried.
   * @returns the bytes written (fewer on a short write). Allocates nothing
   * (fs.writeSync allocates every call). Absent from a shim built before it.
   */
  writeFd?(fd: number, bytes: Uint8Array, offset: number, length: number): number;
}

/**
 * A system call failed: `code` is the errno name (`ECONNREFUSED`), and the
 * message names the call and what it acted on (`connect /run/vhost.sock: Connection
 * refused (ECONNREFUSED)`, `recvmsg fd 12: ...`).
 */
export class NativeError extends DpkitError {
  constructor(
    code: string,
    /** The errno value. */
    readonly errno: number,
    /** The failing call: `connect`, `mmap`, `uv_poll_start`... */
    readonly syscall: string,
    /** What it acted on: a socket path (`@name` when abstract) or `fd N`. */
    readonly what: string,
    message: string,
  ) {
    super(code, message);
  }
}

/**
 * The shim refused a mapping before making any system call, because it would
 * be unsafe: misaligned, outside the memory's current length, past wasm32's
 * 4 GiB, overlapping another window, larger than the fd. Nothing was changed.
 */
export class MapRefusedError extends DpkitError {}

/** A feature needs the native shim and it is not built or not loadable: the message says why. */
export class NativeUnavailableError extends DpkitError {
  constructor(message: string) {
    super('ENOTSUP', message);
  }
}

/** The shim's thrown error as one of the typed errors above (anything else is returned as is). */
export function typedError(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const x = e as Error & { kind?: string; code?: string; errno?: number; syscall?: string; what?: string };
  if (x.kind === 'sys') return new NativeError(x.code!, x.errno!, x.syscall!, x.what!, x.message);
  if (x.kind === 'refused') return new MapRefusedError(x.code!, x.message);
  return e;
}

/** The addon with every function's errors turned into the typed ones, once, at load. */
function typed(addon: Record<string, unknown>): NativeShim {
  const shim: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(addon)) {
    if (typeof f !== 'function') shim[name] = f;
    else
      shim[name] = function (): unknown {
        try {
          // apply with `arguments` passes them on without making an array.
          return (f as (...a: unknown[]) => unknown).apply(undefined, arguments as unknown as unknown[]);
        } catch (e) {
          throw typedError(e);
        }
      };
  }
  return shim as unknown as NativeShim;
}

let loaded: NativeShim | undefined;
let reason: string | undefined;

export function native(): NativeShim | undefined {
  if (loaded || reason) return loaded;
  if (process.env['DPKIT_NO_NATIVE']) {
    // As on a machine with no compiler: for running the suite down the shim-missing paths.
    reason = 'disabled (DPKIT_NO_NATIVE is set)';
    return undefined;
  }
  const root = packageRoot();
  try {
    loaded = typed(createRequire(root)(new URL('native/build/Release/dpkit_native.node', root).pathname) as Record<string, unknown>);
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

/**
 * The shim, for `feature` (a driver or device name). Throws NativeUnavailableError with one
 * line: `net_vhost0: needs the native shim (native/), which is not built: node-gyp rebuild exited with 1`.
 */
export function requireNative(feature: string): NativeShim {
  const shim = native();
  if (!shim) throw new NativeUnavailableError(`${feature}: needs the native shim (native/), which is ${reason}`);
  return shim;
}
