/**
 * The lcore launcher (rte_eal_remote_launch / rte_eal_mp_wait_lcore): one
 * worker thread per forwarding lcore, polling until a shared stop flag is
 * set. The main thread sleeps in the event loop meanwhile (2 cores here).
 *
 * A worker that throws stops the whole run: the others are told to stop,
 * and `wait()` rejects with an LcoreError naming the lcore. It never hangs
 * on a dead worker.
 */
import { DpkitError } from '../errors.js';
import { startWorker } from './spawn.js';

/** Control block words (Int32, shared with every worker of a launch). */
export const CTL_STOP = 0;
export const CTL_WORDS = 16;

export class LcoreError extends DpkitError {
  constructor(
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

export class Lcores {
  readonly ctl = new Int32Array(new SharedArrayBuffer(CTL_WORDS * 4));
  private readonly done: Promise<unknown>[] = [];
  private failure: LcoreError | undefined;
  /** performance.now() when the first lcore reported its loop running (a `{ started: true }` message). */
  startedAt: number | undefined;
  /** The CPU each lcore reported running on when it started (absent: floating). */
  readonly cpuOf = new Map<number, number>();

  /**
   * Starts one worker per launch, running `script` (a module beside `base`).
   * Each worker gets workerData { ctl, lcoreId, job, cpus }, posts
   * `{ started: true, cpu }` when its loop runs, and one last message when
   * the loop has ended and its lcore caches are flushed.
   */
  constructor(script: string, base: string, launches: LcoreLaunch[]) {
    for (const l of launches) {
      const w = startWorker(script, base, { workerData: { ctl: this.ctl, lcoreId: l.lcoreId, job: l.job, cpus: l.cpus } });
      this.done.push(
        new Promise((resolve, reject) => {
          let result: unknown;
          w.on('message', (m: { started?: boolean; cpu?: number }) => {
            if (m?.started) {
              this.startedAt ??= performance.now();
              if (m.cpu !== undefined) this.cpuOf.set(l.lcoreId, m.cpu);
            } else result = m;
          });
          w.once('error', (e: Error) => {
            this.failure ??= new LcoreError(l.lcoreId, e.message);
            this.requestStop();
            reject(this.failure);
          });
          w.once('exit', (code) => {
            if (code === 0 && result !== undefined) return resolve(result);
            this.failure ??= new LcoreError(l.lcoreId, `worker exited with code ${code}${result === undefined ? ' before finishing' : ''}`);
            this.requestStop();
            reject(this.failure);
          });
        }),
      );
    }
    // A failure is reported through wait(); never as an unhandled rejection.
    for (const p of this.done) p.catch(() => {});
  }

  /** Sets the stop flag; workers leave their loop at their next check. */
  requestStop(): void {
    Atomics.store(this.ctl, CTL_STOP, 1);
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
