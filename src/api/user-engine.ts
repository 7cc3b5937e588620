/**
 * User engines: testpmd's `--forward-mode=./engine.js` (and `set fwd
 * ./engine.js`). The module is loaded in every forwarding lcore's worker and
 * exports `engine`, a function over one received burst that returns how many
 * of its packets to transmit. testpmd keeps doing the rest as for a built-in
 * engine: receive, counters, transmit, freeing what tx refused. The contract
 * types here are public (`import type { UserEngine } from 'dpkit'`).
 */
import { resolve } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { ArgError } from '../errors.js';
import { lcoreModuleUrl } from './launch.js';
import { BurstOps } from './burst-ops.js';
import type { Burst, Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import type { Mempool } from '../mem/mempool.js';
import { receive, transmit } from '../fwd/common.js';
import { FS_FWD_DROPPED, type FwdContext, type FwdEngine, type FwdStream } from '../fwd/engine.js';

/** A forwarding stream as a user engine sees it: where its burst came from and where it goes. */
export interface UserStream {
  /** The port this stream receives from. */
  readonly rxPort: number;
  /** Its rx queue on that port. */
  readonly rxQueue: number;
  /** The port this stream sends to. */
  readonly txPort: number;
  /** Its tx queue on that port. */
  readonly txQueue: number;
  /** The tx port's own MAC address. */
  readonly txMac: Uint8Array;
  /** The tx port's peer address (--eth-peer, default 02:00:00:00:00:pp): what the mac engine writes as destination. */
  readonly peerMac: Uint8Array;
}

/** What a user engine's `setup` gets, once per lcore before forwarding starts. Use it from that lcore only. */
export interface UserEngineContext {
  /** The lcore this engine instance runs on. */
  readonly lcoreId: number;
  /** The shared heap, opened as this lcore. */
  readonly heap: Heap;
  /** The mbuf accessors (rte_pktmbuf_*). */
  readonly mbufs: Mbufs;
  /** testpmd's mbuf pool, with this lcore's cache (for engines that make packets). */
  readonly pool: Mempool;
  /** Packets per burst (--burst): the most `engine` gets at once. */
  readonly burstSize: number;
  /** This lcore's streams, in the order it polls them. */
  readonly streams: readonly UserStream[];
  /** Burst-level kernels (the built-in engines' per-burst work) for this lcore, made on first call. */
  burstOps(): BurstOps;
}

/**
 * The per-burst work: `burst[0..n)` are the packets received on
 * `stream.rxPort`; the engine may rewrite, reorder or free them.
 * @returns how many to transmit, `k` in 0..n: `burst[0..k)` go to
 *   `stream.txPort`. Any packet not among them the engine must have freed
 *   (`mbufs.free`) or it leaks; testpmd counts them as dropped. Must not
 *   allocate per packet.
 */
export type UserBurstFn = (burst: Burst, n: number, stream: UserStream) => number;

/**
 * What an engine module exports as `engine` (or as its default export): the
 * per-burst function, or an object with it as `burst` and an optional
 * per-lcore `setup` (make views and tables there, not per burst).
 */
export type UserEngine =
  | UserBurstFn
  | {
      /** Once per lcore, before forwarding starts: make views and tables here, not per burst. */
      setup?(ctx: UserEngineContext): void;
      /** Per received burst: returns how many of `burst[0..n)` to transmit. */
      burst: UserBurstFn;
    };

/** Whether a forwarding mode names an engine module rather than a built-in engine. */
export function isEnginePath(mode: string): boolean {
  return mode.startsWith('.') || mode.startsWith('/') || /\.(?:m?js|ts)$/.test(mode);
}

/**
 * The file URL of an engine module named on the command line or in the
 * shell, relative to the cwd; `what` (the option or command) starts the error.
 * @throws ArgError naming the file when it does not exist.
 */
export function engineModuleUrl(mode: string, what: string): string {
  return lcoreModuleUrl(pathToFileURL(resolve(mode)), what).href;
}

/**
 * Imports an engine module and checks what it exports.
 * @returns the engine as an object with `burst`.
 * @throws ArgError naming the file when it fails to load or exports no engine.
 */
export async function loadUserEngine(url: string): Promise<{ setup?(ctx: UserEngineContext): void; burst: UserBurstFn }> {
  const file = fileURLToPath(url);
  let mod: { engine?: unknown; default?: unknown };
  try {
    mod = (await import(url)) as typeof mod;
  } catch (e) {
    throw new ArgError(`${file}: failed to load: ${describe(e)}`);
  }
  const e = mod.engine ?? mod.default;
  if (e === undefined) throw new ArgError(`${file}: exports no engine (write \`export const engine: UserEngine = (burst, n, stream) => n\`)`);
  if (typeof e === 'function') return { burst: e as UserBurstFn };
  if (typeof e !== 'object' || e === null) throw new ArgError(`${file}: engine is ${e === null ? 'null' : `a ${typeof e}`}, not a function or an object with a burst function`);
  const { burst, setup } = e as { burst?: unknown; setup?: unknown };
  if (typeof burst !== 'function') throw new ArgError(`${file}: engine.burst is ${burst === undefined ? 'missing' : `a ${typeof burst}`}, not a function`);
  if (setup !== undefined && typeof setup !== 'function') throw new ArgError(`${file}: engine.setup is a ${typeof setup}, not a function`);
  return e as { setup?(ctx: UserEngineContext): void; burst: UserBurstFn };
}

/**
 * The forwarding engine over a loaded user engine on this lcore: runs its
 * `setup`, then per stream receives, calls `burst` and transmits what it
 * kept. A throw or a bad count frees the packets of the burst still
 * referenced and throws an error naming the file (the lcore loop rethrows
 * it, named by its lcore, and every lcore stops).
 * @throws ArgError naming the file when `setup` throws.
 */
export function userEngine(ctx: FwdContext, url: string, engine: { setup?(ctx: UserEngineContext): void; burst: UserBurstFn }, streams: readonly FwdStream[]): FwdEngine {
  const file = fileURLToPath(url);
  let ops: BurstOps | undefined;
  const uctx: UserEngineContext = {
    lcoreId: ctx.heap.lcoreId,
    heap: ctx.heap,
    mbufs: ctx.mb,
    pool: ctx.pool,
    burstSize: ctx.config.burst,
    streams,
    burstOps: () => (ops ??= new BurstOps(ctx.heap)),
  };
  try {
    engine.setup?.(uctx);
  } catch (e) {
    throw new ArgError(`${file}: engine.setup threw ${describe(e)}`);
  }
  const fn = engine.burst;
  const burst = ctx.burst;
  const mb = ctx.mb;
  const fail = (fs: FwdStream, n: number, why: string): ArgError => {
    // What the engine did not free goes back; freed ones have refcnt 0 and are skipped.
    for (let i = 0; i < n; i++) if (mb.refcnt(burst[i]!) > 0) mb.free(burst[i]!);
    return new ArgError(`${file}: engine ${why} (burst from port ${fs.rxPort} queue ${fs.rxQueue})`);
  };
  return {
    name: file,
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      let k: number;
      try {
        k = fn(burst, n, fs);
      } catch (e) {
        throw fail(fs, n, `threw ${describe(e)}`);
      }
      if (!Number.isInteger(k) || k < 0 || k > n) throw fail(fs, n, `returned ${String(k)}, not a count in 0..${n}`);
      // What the engine dropped counts as dropped, so rx = tx + dropped holds per stream.
      if (k < n) ctx.heap.f64[fs.stats + FS_FWD_DROPPED] += n - k;
      if (k > 0) transmit(ctx, fs, k);
    },
  };
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
