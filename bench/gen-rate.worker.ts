/**
 * gen-rate's in-process measurements, one per worker (pinned to CPU 1, so
 * the bench's own thread on CPU 0 costs them nothing): the rate precision of
 * one stream, the latency through a pair of ports, the probes' own bias.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PerformanceObserver } from 'node:perf_hooks';
import { init } from '../src/api/eal.js';
import { pinThisThread } from '../src/eal/affinity.js';
import { nowNs } from '../src/eal/clock.js';
import { probeLoopbackBias } from '../src/gen/bias.js';
import { generate } from '../src/gen/generate.js';

export interface GenRateJob {
  kind: 'precision' | 'latency' | 'bias' | 'stalls';
  pair?: 'ring' | 'vhost' | 'memif';
  /** Seconds of traffic (warm-up included). */
  seconds: number;
  /** Seconds at the start left out of the figures. */
  warmupS: number;
  pps: number;
  burst: number;
}

export type GenRateResult = { mpps: number; gc: number; figures: Record<string, number> } | { failed: string };

const job = workerData as GenRateJob;

/** The q-quantile of `v[0..n)` (sorted in place). */
function quantile(v: Float64Array, q: number): number {
  return v[Math.min(v.length - 1, Math.floor(q * (v.length - 1)))]!;
}

/**
 * The machine's own floor under the precision figures: a loop that only reads
 * the clock, on the same pinned CPU, and every gap between two readings over
 * STALL_NS (the thread did not run: an interrupt, the hypervisor). A burst
 * due in such a gap leaves late by it, whatever sends it.
 */
const STALL_NS = 5000;
function stalls(seconds: number): Record<string, number> {
  const gaps = new Float64Array(1 << 20);
  let n = 0;
  let lost = 0;
  let last = nowNs();
  const start = last;
  const end = last + seconds * 1e9;
  while (last < end) {
    const t = nowNs();
    if (t - last > STALL_NS) {
      lost += t - last;
      if (n < gaps.length) gaps[n++] = t - last;
    }
    last = t;
  }
  const g = gaps.subarray(0, n).sort();
  const span = last - start;
  return {
    'stalls > 5 us per s': (n * 1e9) / span,
    'stall p50 us': n > 0 ? quantile(g, 0.5) / 1e3 : 0,
    'stall max us': n > 0 ? quantile(g, 1) / 1e3 : 0,
    'time stalled %': (100 * lost) / span,
  };
}

async function run(): Promise<GenRateResult> {
  pinThisThread([1]);
  if (job.kind === 'stalls') return { mpps: 0, gc: 0, figures: stalls(job.seconds) };
  let gc = 0;
  const obs = new PerformanceObserver((l) => (gc += l.getEntries().length));
  obs.observe({ entryTypes: ['gc'] });
  const sock = join(tmpdir(), `dpkit-bench-gen-${process.pid}.sock`);
  const vdevs =
    job.kind !== 'latency' || job.pair === 'ring'
      ? ['net_ring0']
      : job.pair === 'vhost'
      ? [`virtio_user0,path=${sock}`, `net_vhost0,iface=${sock}`]
      : [`net_memif0,role=server,socket=${sock}`, `net_memif1,role=client,socket=${sock}`];
  if (job.kind === 'precision') vdevs[0] = 'net_null0';
  // vhost and memif peers in one process: the server side first.
  const eal = init({ lcores: [0], vdevs: job.pair === 'vhost' ? [vdevs[1]!, vdevs[0]!] : vdevs, mbufs: 16383, memory: 64 << 20 });
  try {
    for (const p of eal.ethdev.portIds()) {
      eal.ethdev.configure(p, 1, 1);
      eal.ethdev.rxQueueSetup(p, 0, 0, eal.pool);
      eal.ethdev.txQueueSetup(p, 0, 0);
      eal.ethdev.start(p);
    }
    if (job.kind === 'bias') {
      const s = probeLoopbackBias(eal.heap, eal.pool, { bursts: 20000, burst: job.burst });
      return { mpps: 0, gc, figures: { 'bias p50 ns': s.p50, 'bias p99 ns': s.p99 } };
    }
    if (job.kind === 'latency') {
      // vhost: the guest (virtio_user, port 1 here) sends and the host receives; memif: client to server.
      const [tx, rx] = job.pair === 'ring' ? [0, 0] : [1, 0];
      for (let i = 0; i < 200 && !eal.ethdev.linkUp(tx); i++) await new Promise((r) => setTimeout(r, 10));
      const r = await generate(eal, { streams: [{ size: 64 }], rate: job.pps, duration: job.seconds, port: tx, rxPort: rx, latency: true });
      const l = r.streams[0]!.latency!;
      if (l.received === 0) return { failed: `${job.pair}: nothing came back (${r.verdict})` };
      return { mpps: r.streams[0]!.achievedPps / 1e6, gc, figures: { 'latency p50 us': l.latency.p50 / 1e3, 'latency p99 us': l.latency.p99 / 1e3, 'lost': l.lost } };
    }
    // Precision: every burst's deadline and departure, kept in arrays made before the run.
    const max = Math.ceil((job.seconds * job.pps) / job.burst) + 16;
    const deadlines = new Float64Array(max);
    const departs = new Float64Array(max);
    let nb = 0;
    const r = await generate(eal, {
      streams: [{ size: 64 }],
      rate: job.pps,
      duration: job.seconds,
      burst: job.burst,
      onBurst: (_s, _first, _n, deadline, depart) => {
        if (nb < max) {
          deadlines[nb] = deadline;
          departs[nb++] = depart;
        }
      },
    });
    const from = deadlines.findIndex((d, i) => i < nb && d >= job.warmupS * 1e9);
    const gaps = new Float64Array(nb - from - 1);
    const late = new Float64Array(nb - from);
    for (let i = from; i < nb; i++) {
      late[i - from] = departs[i]! - deadlines[i]!;
      if (i > from) gaps[i - from - 1] = Math.abs(departs[i]! - departs[i - 1]! - (deadlines[i]! - deadlines[i - 1]!));
    }
    gaps.sort();
    late.sort();
    // The long-run rate after the warm-up: packets over the departures' span against the schedule's.
    const sentAfter = (nb - 1 - from) * job.burst;
    const achieved = (sentAfter * 1e9) / (departs[nb - 1]! - departs[from]!);
    const asked = (sentAfter * 1e9) / (deadlines[nb - 1]! - deadlines[from]!);
    const s = r.streams[0]!;
    return {
      mpps: s.achievedPps / 1e6,
      gc,
      figures: {
        'rate error ppm (after warm-up)': (achieved / asked - 1) * 1e6,
        'rate error ppm (whole run)': (s.achievedPps / s.askedPps - 1) * 1e6,
        'inter-departure error p50 us': quantile(gaps, 0.5) / 1e3,
        'inter-departure error p99 us': quantile(gaps, 0.99) / 1e3,
        'inter-departure error max us': quantile(gaps, 1) / 1e3,
        'lateness p99 us': quantile(late, 0.99) / 1e3,
        'late bursts %': (100 * late.filter((x) => x > 100_000).length) / late.length,
      },
    };
  } finally {
    obs.disconnect();
    await eal.close();
    rmSync(sock, { force: true });
  }
}

parentPort!.postMessage(await run().catch((e: unknown) => ({ failed: (e as Error).message.split('\n')[0]! })));
