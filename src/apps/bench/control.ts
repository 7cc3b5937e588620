/**
 * The control block shared by a benchmark's main thread and its worker
 * threads: a phase word and one packet counter per thread, in a small
 * SharedArrayBuffer of its own (not the packet heap).
 *
 * Phases: SETUP → RUN (warm-up) → MEASURE → STOP. Workers count packets
 * from the start of RUN; the main thread samples the counters at the start
 * and the end of MEASURE, so warm-up is never measured. Counters are 32-bit
 * and wrap: deltas are taken modulo 2^32 (43 s at 100 Mpps, far above a cell).
 */
export const PHASE = 0;
export const SETUP = 0;
export const RUN = 1;
export const MEASURE = 2;
export const STOP = 3;
/** Counter of thread t is word COUNTERS + t. */
export const COUNTERS = 16;

export function newControl(threads: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer((COUNTERS + threads) * 4));
}

/** Bursts between two publications of the counter and two looks at the phase. */
const CHECK_EVERY = 64;

/** What a worker reports when its loop ends (after a `{ ready: true }` message when set up). */
export interface LoopReport {
  /**
   * When each of the thread's garbage collections started, in milliseconds of
   * the monotonic clock every thread shares (process.hrtime): the main thread,
   * which knows the measured window, counts those inside it.
   */
  gcAt: number[];
}

/** Now on the monotonic clock of LoopReport.gcAt, in milliseconds. */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * Worker side: waits for RUN, then calls `iter` (which returns how many
 * packets it moved) until STOP, publishing its count. The loop does not look
 * for MEASURE: a branch first taken there would deoptimise it inside the
 * window, and the closure, inlined until then, would run unoptimised (boxing
 * its doubles: garbage, and GCs counted against the hot path). A hot path that
 * allocates nothing collects none in the window.
 */
export async function benchLoop(ctl: Int32Array, thread: number, iter: () => number): Promise<LoopReport> {
  const { PerformanceObserver, performance } = await import('node:perf_hooks');
  // performance.now() is this thread's clock; its offset to the shared one, taken once.
  const offset = monoMs() - performance.now();
  const gcAt: number[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcAt.push(e.startTime + offset);
  });
  obs.observe({ entryTypes: ['gc'] });
  const { parentPort } = await import('node:worker_threads');
  parentPort?.postMessage({ ready: true });
  while (Atomics.load(ctl, PHASE) === SETUP) Atomics.wait(ctl, PHASE, SETUP, 50);
  const slot = COUNTERS + thread;
  let count = 0;
  let k = 0;
  for (;;) {
    count = (count + iter()) | 0;
    if (++k === CHECK_EVERY) {
      k = 0;
      Atomics.store(ctl, slot, count);
      if (Atomics.load(ctl, PHASE) === STOP) break;
    }
  }
  Atomics.store(ctl, slot, count);
  // GC entries arrive asynchronously: let the observer run before reporting.
  await new Promise((r) => setTimeout(r, 20));
  obs.disconnect();
  return { gcAt };
}
