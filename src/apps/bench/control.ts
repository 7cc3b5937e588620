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
  /** Garbage collections that started while the main thread was measuring. */
  gc: number;
}

/**
 * Worker side: waits for RUN, then calls `iter` (which returns how many
 * packets it moved) until STOP, publishing its count. Counts the garbage
 * collections of the MEASURE window, which must be 0 for a hot path that
 * allocates nothing.
 */
export async function benchLoop(ctl: Int32Array, thread: number, iter: () => number): Promise<LoopReport> {
  const { PerformanceObserver, performance } = await import('node:perf_hooks');
  const gcStarts: number[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcStarts.push(e.startTime);
  });
  obs.observe({ entryTypes: ['gc'] });
  const { parentPort } = await import('node:worker_threads');
  parentPort?.postMessage({ ready: true });
  while (Atomics.load(ctl, PHASE) === SETUP) Atomics.wait(ctl, PHASE, SETUP, 50);
  const slot = COUNTERS + thread;
  let count = 0;
  let k = 0;
  let measureStart = Infinity;
  let measureEnd = Infinity;
  for (;;) {
    count = (count + iter()) | 0;
    if (++k === CHECK_EVERY) {
      k = 0;
      Atomics.store(ctl, slot, count);
      const phase = Atomics.load(ctl, PHASE);
      if (phase !== RUN) {
        if (phase === STOP) break;
        if (measureStart === Infinity) measureStart = performance.now();
      }
    }
  }
  measureEnd = performance.now();
  Atomics.store(ctl, slot, count);
  // GC entries arrive asynchronously: let the observer run before counting.
  await new Promise((r) => setTimeout(r, 20));
  obs.disconnect();
  return { gc: gcStarts.filter((t) => t >= measureStart && t <= measureEnd).length };
}
