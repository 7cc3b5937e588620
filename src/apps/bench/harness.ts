/**
 * Runs one measurement: starts a worker per thread, lets them warm up, then
 * samples their packet counters over a fixed window while the main thread
 * sleeps (this machine has 2 cores; a busy main thread would steal one).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { COUNTERS, MEASURE, PHASE, RUN, STOP, newControl, type LoopReport } from './control.js';

export interface ThreadSpec {
  /** Starts the worker; `ctl` and `thread` must reach benchLoop() in it. */
  start(ctl: Int32Array, thread: number): Worker;
  /** Whether this thread's count is part of the result (e.g. the consumer of a ring). */
  counted: boolean;
  /**
   * Called once every thread has reported (each has freed what it held and
   * flushed its caches): checks what the threads shared, e.g. that their
   * pool is full again. Throwing fails the measurement.
   */
  after?(): void;
}

export interface Measurement {
  /** Million packets per second, summed over counted threads. */
  mpps: number;
  /** Garbage collections during the measured window, summed over threads. */
  gc: number;
}

export async function measure(threads: ThreadSpec[], warmupMs: number, durationMs: number): Promise<Measurement> {
  const ctl = newControl(threads.length);
  const workers = threads.map((t, i) => t.start(ctl, i));
  const ready: Promise<void>[] = [];
  const reports: Promise<LoopReport>[] = [];
  workers.forEach((w, i) => {
    ready.push(new Promise((resolve) => w.on('message', (m: { ready?: boolean }) => m.ready && resolve())));
    reports.push(
      new Promise((resolve, reject) => {
        w.on('message', (m: LoopReport & { ready?: boolean }) => m.ready || resolve(m));
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`bench thread ${i} exited (code ${code}) before reporting`)));
      }),
    );
  });
  // Rejects as soon as any thread fails; never resolves otherwise.
  const failed = Promise.race(reports.map((p) => p.then(() => new Promise<never>(() => {}))));
  failed.catch(() => {});
  try {
    await Promise.race([Promise.all(ready), failed]);
    Atomics.store(ctl, PHASE, RUN);
    Atomics.notify(ctl, PHASE);
    await Promise.race([sleep(warmupMs), failed]);
    const c0 = threads.map((_, i) => Atomics.load(ctl, COUNTERS + i));
    const t0 = process.hrtime.bigint();
    Atomics.store(ctl, PHASE, MEASURE);
    await Promise.race([sleep(durationMs), failed]);
    const c1 = threads.map((_, i) => Atomics.load(ctl, COUNTERS + i));
    const t1 = process.hrtime.bigint();
    Atomics.store(ctl, PHASE, STOP);
    const done = await Promise.all(reports);
    for (const t of threads) t.after?.();
    const seconds = Number(t1 - t0) / 1e9;
    let packets = 0;
    threads.forEach((t, i) => {
      if (t.counted) packets += (c1[i]! - c0[i]!) >>> 0;
    });
    // The window on the clock of LoopReport.gcAt (hrtime in ms).
    const from = Number(t0) / 1e6;
    const to = Number(t1) / 1e6;
    const gc = done.reduce((n, r) => n + r.gcAt.filter((t) => t >= from && t <= to).length, 0);
    return { mpps: packets / seconds / 1e6, gc };
  } finally {
    Atomics.store(ctl, PHASE, STOP);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
