/**
 * What a two-process cell's rate may follow, probed right before each run:
 * how long one cache line takes to go from one CPU to the other and back
 * (two pinned threads playing ping-pong on it), and how fast each CPU runs a
 * fixed loop on its own. A memif or vhost-user pair moves every burst's ring
 * indices and descriptors between the two CPUs, so that round trip may bound
 * its rate; a VM whose two vCPUs the hypervisor places on other
 * physical cores, or runs at another clock, changes one or the other without
 * anything inside the VM changing. Recorded beside each sample (`probes` in
 * the report), the two say which of those a fast or slow run went with.
 *
 * The threads idle in Atomics.wait between probes; a probe takes about 30 ms
 * of both CPUs and runs only between runs, never during one.
 */
import type { Worker } from 'node:worker_threads';
import { native } from '../../native/native.js';
import { allowedCpus } from '../../eal/affinity.js';
import { startWorker } from '../../eal/spawn.js';

export interface CpuProbeResult {
  /** CPUs the two threads were pinned to (the initiator's first). */
  cpus: [number, number];
  /** Median round trip of one cache line between the two CPUs, in ns (over PROBE_BATCHES batches). */
  roundTripNs: number;
  /** Each CPU's time for SPIN_ITERATIONS of a dependent integer loop, in ns per iteration (the clock level). */
  spinNs: [number, number];
}

/** Shared words, each on a cache line of its own: the ping line, the pong line, and the control words. */
export const PROBE_WORDS = 64;
export const PING = 0;
export const PONG = 16;
/** Both threads wait here for a probe; the main thread bumps it and notifies. */
export const GO = 32;
/** Threads that finished the current probe; its figures are in the separate results buffer (float64: round trip, spin of role 0, spin of role 1). */
export const DONE = 48;
export const PROBE_BATCHES = 9;
export const ROUNDS_PER_BATCH = 2000;
export const SPIN_ITERATIONS = 1 << 21;
/** A thread that has not seen its partner within this time gives up on the probe (NaN). */
export const PROBE_TIMEOUT_MS = 2000;

export interface ProbeWorkerData {
  sab: SharedArrayBuffer;
  results: SharedArrayBuffer;
  cpu: number;
  /** 0: the initiator (times the round trips), 1: the responder. */
  role: 0 | 1;
}

/**
 * Two probe threads pinned to two CPUs. `start` returns null where a probe
 * cannot mean anything: no native shim (the threads would float) or fewer
 * than two CPUs.
 */
export class CpuProbe {
  private readonly ctrl: Int32Array;
  private readonly out: Float64Array;
  private seq = 0;

  private constructor(
    private readonly workers: Worker[],
    private readonly cpus: [number, number],
    sab: SharedArrayBuffer,
    results: SharedArrayBuffer,
  ) {
    this.ctrl = new Int32Array(sab);
    this.out = new Float64Array(results);
  }

  static async start(cpus?: [number, number]): Promise<CpuProbe | null> {
    const allowed = allowedCpus();
    if (!native() || !allowed || allowed.length < 2) return null;
    const pair: [number, number] = cpus ?? [allowed[0]!, allowed[1]!];
    const sab = new SharedArrayBuffer(PROBE_WORDS * 4);
    const results = new SharedArrayBuffer(8 * 4);
    const workers = pair.map((cpu, role) => startWorker('cpu-probe-worker', import.meta.url, { workerData: { sab, results, cpu, role: role === 0 ? 0 : 1 } satisfies ProbeWorkerData }));
    try {
      await Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
        w.once('message', () => resolve());
        w.once('error', reject);
      })));
    } catch (e) {
      // One thread that cannot start must not leave the other holding the process open.
      await Promise.all(workers.map((w) => w.terminate()));
      throw e;
    }
    for (const w of workers) w.unref();
    return new CpuProbe(workers, pair, sab, results);
  }

  /** One probe: both threads run it, the caller waits (about 30 ms; at most PROBE_TIMEOUT_MS). */
  async probe(): Promise<CpuProbeResult> {
    const seq = ++this.seq;
    Atomics.store(this.ctrl, DONE, 0);
    Atomics.store(this.ctrl, PING, 0);
    Atomics.store(this.ctrl, PONG, 0);
    Atomics.store(this.ctrl, GO, seq);
    Atomics.notify(this.ctrl, GO);
    const deadline = Date.now() + 2 * PROBE_TIMEOUT_MS + 1000;
    while (Atomics.load(this.ctrl, DONE) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const done = Atomics.load(this.ctrl, DONE) >= 2;
    const read = (i: number, digits: number): number => (done ? Math.round(this.out[i]! * 10 ** digits) / 10 ** digits : NaN);
    return { cpus: this.cpus, roundTripNs: read(0, 1), spinNs: [read(1, 3), read(2, 3)] };
  }

  async close(): Promise<void> {
    Atomics.store(this.ctrl, GO, -1);
    Atomics.notify(this.ctrl, GO);
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
