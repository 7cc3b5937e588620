/**
 * One clock for every lcore: `nowNs()` is CLOCK_MONOTONIC in nanoseconds, the
 * same number on every thread and in every process of the machine, so a
 * timestamp written into a packet on one lcore can be subtracted from one
 * read on another (DPDK uses the TSC for this; rte_get_tsc_cycles()).
 *
 * With the native shim a reading is one call that writes clock_gettime's
 * CLOCK_MONOTONIC into this thread's Float64Array slot, and nothing is
 * allocated. Node 20 has no such reading of its own: `performance.now()` and
 * `Date.now()` return each reading boxed in a new 16-byte heap number, so an
 * lcore that polls the clock between bursts (the generator) fills the young
 * generation and stalls in scavenges (about 16 per million reads, measured on
 * Node 20.20; docs/architecture.md, "The clock allocates").
 *
 * Without the shim: `performance.now()` is monotonic, but each thread counts
 * from its own origin (a worker's starts when the worker does). Node
 * computes it from libuv's uv_hrtime(), which is CLOCK_MONOTONIC, and
 * `process.hrtime.bigint()` reads the same clock without an origin. So each
 * thread finds its origin once, the first time it asks: the offset between
 * the two readings, taken where one hrtime call sits tightest between two
 * performance.now() calls. After that a reading is one performance.now() and
 * one add; no BigInt, one heap number.
 *
 * Precision: a double holds integer nanoseconds exactly up to 2^53 ns (104
 * days of uptime); past that the clock counts in steps of 2 ns. Probes keep
 * the low 48 bits (78 hours) and subtract modulo 2^48 (gen/probe.ts).
 */

import { native } from '../native/native.js';

/** Calibration attempts; the tightest bracket wins. */
const TRIES = 64;
/** Nanoseconds per millisecond (performance.now() counts milliseconds). */
const NS_PER_MS = 1e6;

let offsetNs = Number.NaN;
let bracketNs = Number.NaN;
/** This thread's native reading lands here; one slot per thread (module state is per thread). */
const slot = new Float64Array(1);
/** The shim's reader bound to `slot`, or undefined: performance.now() plus the offset. */
let read: (() => void) | undefined;

/** Binds this thread's native reader, or finds its offset from performance.now() to CLOCK_MONOTONIC. */
function calibrate(): void {
  const bind = native()?.clockBind;
  if (bind !== undefined) {
    read = bind(slot);
    offsetNs = 0;
    bracketNs = 0; // clock_gettime itself: nothing to bracket
    return;
  }
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < TRIES; i++) {
    const a = performance.now();
    const h = process.hrtime.bigint();
    const b = performance.now();
    const width = (b - a) * NS_PER_MS;
    if (width < best) {
      best = width;
      // hrtime was read somewhere in [a, b]: take the middle.
      offset = Number(h) - ((a + b) / 2) * NS_PER_MS;
    }
  }
  offsetNs = offset;
  bracketNs = best;
}

/**
 * CLOCK_MONOTONIC in nanoseconds (a double; exact integers for 104 days of
 * uptime): comparable across lcore threads and processes. Thread-safe. The
 * thread's first call binds the native reader (or calibrates: about 64 clock
 * reads); after it, nothing is allocated with the native shim, one heap
 * number a reading without it.
 */
export function nowNs(): number {
  if (offsetNs !== offsetNs) calibrate();
  if (read !== undefined) {
    read();
    return slot[0]!;
  }
  return Math.round(performance.now() * NS_PER_MS + offsetNs);
}

/** Whether this thread reads the clock through the native shim (allocating nothing). */
export function clockIsNative(): boolean {
  if (offsetNs !== offsetNs) calibrate();
  return read !== undefined;
}

/**
 * How closely this thread's clock is tied to CLOCK_MONOTONIC: 0 when the
 * native shim reads it, else the width in nanoseconds of the tightest bracket
 * its calibration found (two readings of this thread's clock on either side
 * of one CLOCK_MONOTONIC read). Readings taken on two threads agree within
 * the sum of their uncertainties.
 */
export function clockUncertaintyNs(): number {
  if (offsetNs !== offsetNs) calibrate();
  return bracketNs;
}
