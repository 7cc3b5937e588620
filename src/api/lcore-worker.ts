/**
 * An API lcore (the worker side of `Eal.launch`): opens the heap as its
 * lcore, loads the user's module and checks it exports `main`, reports ready
 * and waits for the launch, then runs `main(ctx)`. If `main` throws, it asks
 * every other lcore to stop and reports the error; either way it flushes its
 * tx queues and pool caches before its last message, so the pools are full
 * once the ports are closed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { drivers } from '../drivers/index.js';
import { pinThisThread } from '../eal/affinity.js';
import { CTL_STOP, lcoreReady } from '../eal/launcher.js';
import { Heap } from '../eal/heap.js';
import { LcoreEnv, type ApiLcoreJob, type LcoreContext } from './lcore.js';

/** What the worker posts last: main's return value, or what it threw. */
export interface LcoreDone {
  lcoreId: number;
  done: true;
  value?: unknown;
  error?: { name: string; message: string; stack?: string };
}

type LcoreMain = (ctx: LcoreContext) => unknown;

const { ctl, lcoreId, job, cpus } = workerData as { ctl: Int32Array; lcoreId: number; job: ApiLcoreJob; cpus?: number[] };
const file = fileURLToPath(job.module);
const cpu = pinThisThread(cpus);
const heap = Heap.attach(job.heap, lcoreId, job.datapath);
const env = new LcoreEnv(lcoreId, heap, job, ctl, drivers);

let mod: { main?: unknown; default?: unknown };
try {
  mod = (await import(job.module)) as typeof mod;
} catch (e) {
  throw new Error(`${file}: failed to load: ${e instanceof Error ? e.message : String(e)}`);
}
const main = (typeof mod.main === 'function' ? mod.main : mod.default) as LcoreMain | undefined;
if (typeof main !== 'function') throw new Error(`${file}: exports no function main (write \`export function main(ctx: LcoreContext)\`)`);

lcoreReady(ctl, cpu);
const done: LcoreDone = { lcoreId, done: true };
// Stopped before the launch (another lcore failed its set-up): main never runs.
if (!env.stopping()) {
  try {
    done.value = await main(env);
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    done.error = { name: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) };
    Atomics.store(ctl, CTL_STOP, 1); // the others stop too: the launch has failed
  }
}
env.close();
try {
  parentPort!.postMessage(done);
} catch (e) {
  parentPort!.postMessage({ lcoreId, done: true, error: { name: 'DataCloneError', message: `main returned a value that cannot be sent to the main thread: ${(e as Error).message}` } } satisfies LcoreDone);
}
