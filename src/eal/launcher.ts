/**
 * The lcore launcher (rte_eal_remote_launch / rte_eal_mp_wait_lcore): one
 * worker thread per forwarding lcore, polling until a shared stop flag is
 * set. The main thread sleeps in the event loop meanwhile (2 cores here).
 *
 * Launch is a barrier, as EAL's workers sit ready in their loop before
 * `rte_eal_mp_remote_launch`: each worker does its set-up (attach the heap,
 * open its queues, make its engine), reports ready through `lcoreReady()`
 * and sleeps on the control block; once every worker is ready the main
 * thread releases them all at once (`launched()`). A worker may take most
 * of a second to start on a loaded machine; none of that counts as
 * forwarding time.
 *
 * A worker that throws, exits or is killed (`kill()`) stops the whole run,
 * as a crashed lcore ends a DPDK process: the others are told to stop (and
 * released, so none sleeps forever), `launched()` and `wait()` reject with
 * an LcoreError naming the lcore and the cause. It never hangs on a dead
 * worker: one that does not stop within STOP_GRACE_MS of a failure (a
 * killed worker may have left a multi-consumer ring half updated, which
 * its peers wait on) is terminated too. Every lcore that did not end
 * cleanly is in `dead`: what it held goes back by `Mempool.reclaim(dead)`
 * once the ports are closed.
 */
import { parentPort, type Worker } from 'node:worker_threads';
import { ArgError, DpkitError } from '../errors.js';
import { startWorker } from './spawn.js';

/** Control block words (Int32, shared with every worker of a launch). */
export const CTL_STOP = 0;
/** 0 until the main thread releases the ready workers (or stops them). */
export const CTL_GO = 1;
export const CTL_WORDS = 16;

/**
 * How long the other lcores have to leave their loops after one failed
 * before they are terminated. They check the stop flag every few dozen
 * bursts; only one spinning on a ring a killed worker left half updated
 * takes longer, and it would wait forever.
 */
export const STOP_GRACE_MS = 10_000;

/** What failed on one lcore: its `main` threw, or its worker died. */
export class LcoreError extends DpkitError {
  constructor(
    /** The lcore that failed. */
    readonly lcoreId: number,
    message: string,
  ) {
    super('ELCORE', `lcore ${lcoreId}: ${message}`);
  }
}

export interface LcoreLaunch {
  lcoreId: number;
  /** Passed to the worker as workerData.job. */
  job: unknown;
  /** CPUs the worker pins itself to (workerData.cpus, see affinity.ts); floats when absent. */
  cpus?: number[];
}

/**
 * Worker side of the launch: reports this lcore ready (with the CPU it runs
 * on) and blocks until the main thread releases every lcore, or stops them.
 * Call it once, after all set-up and before the first poll.
 */
export function lcoreReady(ctl: Int32Array, cpu: number | undefined): void {
  parentPort!.postMessage({ ready: true, cpu });
  Atomics.wait(ctl, CTL_GO, 0);
}

export class Lcores {
  readonly ctl = new Int32Array(new SharedArrayBuffer(CTL_WORDS * 4));
  private readonly done: Promise<unknown>[] = [];
  private failure: LcoreError | undefined;
  private readonly release: Promise<void>;
  /** performance.now() when every lcore was released into its loop. */
  startedAt: number | undefined;
  /** The CPU each lcore reported running on when it was ready (absent: floating). */
  readonly cpuOf = new Map<number, number>();
  /** Lcores whose worker ended without its clean exit (threw, exited, was killed): their caches and bursts are the pools' to reclaim. */
  readonly dead = new Set<number>();
  private readonly workers = new Map<number, Worker>();
  private readonly killed = new Map<number, string>();
  private alive = 0;
  private grace: NodeJS.Timeout | undefined;

  /**
   * Starts one worker per launch, running `script` (a module beside `base`).
   * Each worker gets workerData { ctl, lcoreId, job, cpus }, calls
   * `lcoreReady(ctl, cpu)` when set up, and posts one last message when
   * its loop has ended and its lcore caches are flushed. `tsx` starts the
   * workers with tsx registered (see spawn.ts), for a worker that imports `.ts`.
   */
  constructor(script: string, base: string, launches: LcoreLaunch[], tsx = base.endsWith('.ts')) {
    let ready = 0;
    let released!: () => void;
    let refused!: (e: LcoreError) => void;
    this.release = new Promise<void>((resolve, reject) => {
      released = resolve;
      refused = reject;
    });
    const fail = (lcoreId: number, message: string): LcoreError => {
      this.dead.add(lcoreId);
      this.failure ??= new LcoreError(lcoreId, message);
      this.requestStop();
      refused(this.failure);
      this.grace ??= setTimeout(() => this.terminateRest(), STOP_GRACE_MS).unref();
      return this.failure;
    };
    this.alive = launches.length;
    for (const l of launches) {
      const w = startWorker(script, base, { workerData: { ctl: this.ctl, lcoreId: l.lcoreId, job: l.job, cpus: l.cpus } }, tsx);
      this.workers.set(l.lcoreId, w);
      this.done.push(
        new Promise((resolve, reject) => {
          let result: unknown;
          w.on('message', (m: { ready?: boolean; cpu?: number }) => {
            if (!m?.ready) return void (result = m);
            if (m.cpu !== undefined) this.cpuOf.set(l.lcoreId, m.cpu);
            if (++ready === launches.length && !this.failure) {
              this.startedAt = performance.now();
              this.go();
              released();
            }
          });
          w.once('error', (e: Error) => reject(fail(l.lcoreId, e.message)));
          w.once('exit', (code) => {
            this.workers.delete(l.lcoreId);
            if (--this.alive === 0) clearTimeout(this.grace);
            const killed = this.killed.get(l.lcoreId);
            if (killed !== undefined) return reject(fail(l.lcoreId, killed));
            if (code === 0 && result !== undefined) return resolve(result);
            reject(fail(l.lcoreId, `worker exited with code ${code}${result === undefined ? ' before finishing' : ''}`));
          });
        }),
      );
    }
    if (launches.length === 0) released();
    // A failure is reported through launched() and wait(); never as an unhandled rejection.
    for (const p of [...this.done, this.release]) p.catch(() => {});
  }

  /**
   * Kills lcore `lcoreId`'s worker where it stands (worker.terminate()), as
   * a fault would: the run fails with "lcore N: killed" and stops.
   * @throws ArgError when no worker of this launch runs on that lcore.
   */
  async kill(lcoreId: number): Promise<void> {
    const w = this.workers.get(lcoreId);
    if (!w) throw new ArgError(`lcore ${lcoreId}: no worker runs on it (lcores ${[...this.workers.keys()].join(',') || 'none'})`);
    this.killed.set(lcoreId, 'killed (its worker was terminated)');
    await w.terminate();
  }

  /** After a failure, the workers that did not stop within STOP_GRACE_MS. */
  private terminateRest(): void {
    for (const [id, w] of this.workers) {
      this.killed.set(id, `did not stop within ${STOP_GRACE_MS / 1000} s of the failure; terminated`);
      void w.terminate();
    }
  }

  private go(): void {
    Atomics.store(this.ctl, CTL_GO, 1);
    Atomics.notify(this.ctl, CTL_GO);
  }

  /**
   * Resolves when every lcore has been released into its loop (`startedAt`
   * is then set); rejects with the LcoreError of a worker that failed
   * during its set-up.
   */
  launched(): Promise<void> {
    return this.release;
  }

  /** Sets the stop flag; workers leave their loop at their next check (ready ones are woken to see it). */
  requestStop(): void {
    Atomics.store(this.ctl, CTL_STOP, 1);
    this.go();
  }

  /** The first failure so far, if any (the run is already stopping). */
  get error(): LcoreError | undefined {
    return this.failure;
  }

  /** Resolves with every worker's final message once all have exited; rejects with the first LcoreError. */
  async wait(): Promise<unknown[]> {
    const results = await Promise.allSettled(this.done);
    if (this.failure) throw this.failure;
    return results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  }

  /** A promise that rejects as soon as any lcore fails (for racing against a run's duration). */
  failed(): Promise<never> {
    return Promise.all(this.done).then(() => new Promise<never>(() => {}));
  }
}
