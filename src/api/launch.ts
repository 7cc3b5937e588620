/**
 * A launch: a user's module running on lcore workers
 * (rte_eal_mp_remote_launch and rte_eal_mp_wait_lcore). The main thread
 * holds this handle to stop the lcores and collect what each returned.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ArgError, DpkitError } from '../errors.js';
import { LcoreError, type Lcores } from '../eal/launcher.js';
import type { LcoreDone } from './lcore-worker.js';

/** What `Eal.launch` takes besides the module. @typeParam A - the `args` type. */
export interface LaunchOptions<A = unknown> {
  /**
   * The lcores to run the module on; each must be one of `Eal.lcores` and not
   * the main lcore. Default: every lcore but the main one.
   */
  lcores?: readonly number[];
  /**
   * Passed to every lcore's `main` as `ctx.args` (DPDK's `void *arg`):
   * structured-cloned, so a SharedArrayBuffer in it is shared with the lcores.
   */
  args?: A;
}

/** What one lcore's `main` returned (structured-cloned; rte_eal_wait_lcore's return value). */
export interface LcoreResult<R = unknown> {
  /** The lcore that ran `main`. */
  lcoreId: number;
  /** What its `main` returned. */
  value: R;
}

/**
 * A launch failed: one or more lcores' `main` threw, or a worker died. Each
 * entry of `errors` is an LcoreError naming its lcore; when `main` threw,
 * its `cause` is the error `main` threw (name, message and stack kept).
 * The lcores' caches are flushed all the same (pools are full once the
 * ports close); what a worker that died held (its cache, its bursts) goes
 * back when `Eal.close` reclaims it (`Mempool.reclaim`).
 */
export class LaunchError extends DpkitError {
  constructor(
    /** One per lcore that failed. */
    readonly errors: readonly LcoreError[],
  ) {
    super('ELCORE', errors.map((e) => e.message).join('; '));
  }
}

/** A launch on the lcores. Control plane: use it from the thread that launched. */
export class Launch<R = unknown> {
  private results: Promise<LcoreResult<R>[]> | undefined;

  /** @internal Made by Eal.launch. */
  constructor(
    private readonly lc: Lcores,
    /** The lcores running the module, in launch order. */
    readonly lcores: readonly number[],
    private readonly onEnd: () => void,
  ) {}

  /**
   * Asks every lcore to stop (`ctx.stopping()` turns true) and waits for all
   * of them, as `wait()` does. Safe to call more than once.
   * @throws LaunchError naming each lcore whose `main` threw or whose worker died.
   */
  stop(): Promise<LcoreResult<R>[]> {
    this.lc.requestStop();
    return this.wait();
  }

  /**
   * Kills lcore `lcore`'s worker where it stands (worker.terminate()), as a
   * crash would: the launch fails with "lcore N: killed", the other lcores
   * are asked to stop, and `wait()` rejects with a LaunchError. What the
   * dead worker held goes back to its pools at `Eal.close`.
   * @throws ArgError when `lcore` runs no worker of this launch.
   */
  kill(lcore: number): Promise<void> {
    return this.lc.kill(lcore);
  }

  /** Lcores of this launch whose worker ended without returning cleanly (threw, exited, was killed). */
  get dead(): readonly number[] {
    return [...this.lc.dead];
  }

  /**
   * Waits until every lcore's `main` has returned and its caches are flushed
   * (rte_eal_mp_wait_lcore), without asking them to stop.
   * @returns each lcore's result, in launch order.
   * @throws LaunchError naming each lcore whose `main` threw or whose worker died.
   */
  wait(): Promise<LcoreResult<R>[]> {
    this.results ??= this.collect();
    return this.results;
  }

  private async collect(): Promise<LcoreResult<R>[]> {
    let done: LcoreDone[];
    try {
      done = (await this.lc.wait()) as LcoreDone[];
    } catch (e) {
      throw new LaunchError([e instanceof LcoreError ? e : new LcoreError(-1, String(e))]);
    } finally {
      this.onEnd();
    }
    const errors = done.filter((d) => d.error).map((d) => remoteError(d.lcoreId, d.error!));
    if (errors.length > 0) throw new LaunchError(errors);
    return done.map((d) => ({ lcoreId: d.lcoreId, value: d.value as R }));
  }
}

function remoteError(lcoreId: number, e: NonNullable<LcoreDone['error']>): LcoreError {
  const cause = new Error(e.message);
  cause.name = e.name;
  if (e.stack !== undefined) cause.stack = e.stack;
  const err = new LcoreError(lcoreId, `main threw ${e.name}: ${e.message}`);
  err.cause = cause;
  return err;
}

/**
 * The user's module as a file URL. A `.js` name that does not exist but has a
 * `.ts` beside it names the `.ts` (TypeScript sources import `./x.js` for
 * `./x.ts`; under tsx the lcores load the source). `what` starts the error
 * messages (the call or option that named the module).
 * @throws ArgError naming the file when neither exists.
 */
export function lcoreModuleUrl(module: string | URL, what = 'launch'): URL {
  const url = module instanceof URL ? module : module.startsWith('file:') ? new URL(module) : pathToFileURL(module);
  if (url.protocol !== 'file:') throw new ArgError(`${what}: ${url.href}: lcore modules must be files`);
  if (existsSync(url)) return url;
  const ts = new URL(url.href.replace(/\.js$/, '.ts'));
  if (url.href.endsWith('.js') && existsSync(ts)) return ts;
  throw new ArgError(`${what}: ${fileURLToPath(url)}: no such file`);
}
