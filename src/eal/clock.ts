/**
 * One clock for every lcore: `nowNs()` is CLOCK_MONOTONIC in nanoseconds, the
 * same number on every thread and in every process of the machine, so a
 * timestamp written into a packet on one lcore can be subtracted from one
 * read on another (DPDK uses the TSC for this; rte_get_tsc_cycles()).
 *
 * `performance.now()` is fast (no allocation) and monotonic, but each thread
 * counts from its own origin (a worker's starts when the worker does).
 * Node computes it from libuv's uv_hrtime(), which is CLOCK_MONOTONIC, and
 * `process.hrtime.bigint()` reads the same clock without an origin. So each
 * thread finds its origin once, the first time it asks: the offset between
 * the two readings, taken where one hrtime call sits tightest between two
 * performance.now() calls. After that a reading is one performance.now() and
 * one add; no BigInt, nothing allocated.
 *
 * Precision: a double holds integer nanoseconds exactly up to 2^53 ns (104
 * days of uptime); past that the clock counts in steps of 2 ns. Probes keep
 * the low 48 bits (78 hours) and subtract modulo 2^48 (gen/probe.ts).
 */

/** Calibration attempts; the tightest bracket wins. */
const TRIES = 64;
/** Nanoseconds per millisecond (performance.now() counts milliseconds). */
const NS_PER_MS = 1e6;

let offsetNs = Number.NaN;
let bracketNs = Number.NaN;

/** Finds this thread's offset from performance.now() to CLOCK_MONOTONIC. */
function calibrate(): void {
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
 * uptime): comparable across lcore threads and processes. Thread-safe, no
 * allocation after the thread's first call, which calibrates (about 64
 * clock reads).
 */
export function nowNs(): number {
  if (offsetNs !== offsetNs) calibrate();
  return Math.round(performance.now() * NS_PER_MS + offsetNs);
}

/**
 * How closely this thread's clock is tied to CLOCK_MONOTONIC: the width in
 * nanoseconds of the tightest bracket its calibration found (two readings of
 * this thread's clock on either side of one CLOCK_MONOTONIC read). Readings
 * taken on two threads agree within the sum of their uncertainties.
 */
export function clockUncertaintyNs(): number {
  if (offsetNs !== offsetNs) calibrate();
  return bracketNs;
}
