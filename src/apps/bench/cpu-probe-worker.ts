/**
 * One of the CPU probe's two threads (cpu-probe.ts): pinned to its CPU, it
 * sleeps until the main thread starts a probe, then plays its side of the
 * cache-line ping-pong and times its own spin loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pinThisThread } from '../../eal/affinity.js';
import { DONE, GO, PING, PONG, PROBE_BATCHES, PROBE_TIMEOUT_MS, ROUNDS_PER_BATCH, SPIN_ITERATIONS, type ProbeWorkerData } from './cpu-probe.js';

const { sab, results, cpu, role } = workerData as ProbeWorkerData;
const ctrl = new Int32Array(sab);
const out = new Float64Array(results);
pinThisThread([cpu]);
parentPort!.postMessage('ready');

/** Spins until `ctrl[at]` holds `value`; false when PROBE_TIMEOUT_MS passes first (the partner is gone). */
function await32(at: number, value: number, deadline: number): boolean {
  for (let n = 1; Atomics.load(ctrl, at) !== value; n++) {
    if ((n & 0xfff) === 0 && Date.now() > deadline) return false;
  }
  return true;
}

/** ns per iteration of a dependent xorshift: the CPU's clock level, not its memory. */
function spin(): number {
  let x = 0x9e3779b9 | 0;
  const t0 = performance.now();
  for (let i = 0; i < SPIN_ITERATIONS; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
  }
  const ns = ((performance.now() - t0) * 1e6) / SPIN_ITERATIONS;
  return x === 0 ? -ns : ns; // x is never 0; using it keeps the loop
}

function pingPong(deadline: number): number {
  const batches: number[] = [];
  let i = 0;
  for (let b = 0; b < PROBE_BATCHES; b++) {
    const t0 = performance.now();
    for (let r = 0; r < ROUNDS_PER_BATCH; r++) {
      i++;
      if (role === 0) {
        Atomics.store(ctrl, PING, i);
        if (!await32(PONG, i, deadline)) return NaN;
      } else {
        if (!await32(PING, i, deadline)) return NaN;
        Atomics.store(ctrl, PONG, i);
      }
    }
    batches.push(((performance.now() - t0) * 1e6) / ROUNDS_PER_BATCH);
  }
  batches.sort((a, b) => a - b);
  return batches[batches.length >> 1]!;
}

for (let seen = 0; ;) {
  Atomics.wait(ctrl, GO, seen);
  seen = Atomics.load(ctrl, GO);
  if (seen < 0) break;
  const rt = pingPong(Date.now() + PROBE_TIMEOUT_MS);
  spin(); // the first pass compiles the loop
  out[1 + role] = spin();
  if (role === 0) out[0] = rt;
  Atomics.add(ctrl, DONE, 1);
}
