/**
 * `npm run bench -- gen-rate`: the traffic generator as a user runs it.
 *
 * - Throughput: `dpkit gen` at a rate no core keeps (1000 Mpps) on a
 *   net_null port, 64 B, on one lcore and on two (each stream dealt over the
 *   lcores by bursts), against DPDK testpmd's txonly on one and two lcores
 *   (`--txonly-multi-flow`: its one field variable, the IPv4 source), all in
 *   child processes; the rate is what left between the first live report
 *   after the warm-up and the last.
 * - Precision: 1 Mpps of one stream for the run's duration on a net_null
 *   port (`generate()` on a pinned worker): the long-run rate error in ppm,
 *   and each burst's departure against its deadline (inter-departure error
 *   p50/p99/max, lateness p99), the bursts of the warm-up left out.
 * - Stalls: the same pinned CPU running a loop that only reads the clock,
 *   and every gap over 5 us between readings: the machine's floor under the
 *   precision figures (on a VM, the hypervisor's).
 * - Latency floor: 100 kpps with a probe in every packet through pairs of
 *   ports in one thread (net_ring's loopback, a net_vhost + virtio_user
 *   pair, a net_memif server + client), and the stamp + ring + check cost
 *   alone (probeLoopbackBias): the bias every latency figure includes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { dpdkTestpmd, dpkitEntry, runTestpmd } from '../src/apps/bench/testpmd-run.js';
import { summarize } from '../src/apps/bench/stats.js';
import type { BenchCase, BenchOptions, Benchmark } from '../src/apps/bench/types.js';
import { startWorker } from '../src/eal/spawn.js';
import type { GenRateJob, GenRateResult } from './gen-rate.worker.js';

const ONE_VAR = { vary: [{ field: 'ipv4.src', mode: 'inc', count: 1 << 16 }] };

/** Runs `dpkit gen` in a child; the rate between the first live report after the warm-up and the last. */
function dpkitGen(lcores: string, oneVar: boolean, opts: BenchOptions): Promise<{ mpps: number; gc: number } | { failed: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-gen-'));
  const stream = join(dir, 'stream.json');
  writeFileSync(stream, JSON.stringify({ size: 64, ...(oneVar ? ONE_VAR : {}) }));
  const warm = Math.ceil(opts.warmupMs / 1000);
  const seconds = Math.max(1, Math.round(opts.durationMs / 1000));
  const args = [...dpkitEntry(), 'gen', '--lcores', lcores, '--vdev', 'net_null0', '--', '--stream', stream, '--rate', '1000Mpps', '--duration', String(warm + seconds + 0.5), '--period', '1', '--json'];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('close', () => {
      rmSync(dir, { recursive: true, force: true });
      const periods = out
        .split('\n')
        .filter((l) => l.startsWith('{"type":"period"'))
        .map((l) => JSON.parse(l) as { elapsedNs: number; streams: { sent: number }[] });
      const from = periods[warm - 1];
      const to = periods[periods.length - 1];
      if (!from || !to || to === from) return resolve({ failed: `dpkit gen printed ${periods.length} live reports (${err.trim().split('\n').pop() ?? ''})` });
      const sent = (p: typeof from) => p.streams.reduce((a, s) => a + s.sent, 0);
      resolve({ mpps: (sent(to) - sent(from)) / (to.elapsedNs - from.elapsedNs) * 1e3, gc: 0 });
    });
  });
}

/** DPDK testpmd's txonly on one net_null port (its queue per lcore), Tx-pps. */
async function dpdkTxonly(path: string, lcores: number, opts: BenchOptions): Promise<{ mpps: number; gc: number } | { failed: string }> {
  const placement = ['0@0', ...Array.from({ length: lcores }, (_, i) => `${i + 1}@${(i + 1) % 2}`)].join(',');
  try {
    const mpps = await runTestpmd({
      system: 'dpdk',
      dpdk: path,
      eal: ['--lcores', placement, '--vdev', 'net_null0,size=64'],
      app: ['--forward-mode=txonly', '--txonly-multi-flow', '--txpkts=64', '--burst=32', '--port-topology=loop', `--nb-cores=${lcores}`, `--rxq=${lcores}`, `--txq=${lcores}`],
      seconds: Math.max(1, Math.round(opts.durationMs / 1000)),
      warmup: Math.ceil(opts.warmupMs / 1000),
      countTx: true,
    });
    return { mpps, gc: 0 };
  } catch (e) {
    return { failed: (e as Error).message.split('\n')[0]! };
  }
}

/** One in-process measurement on a worker (precision or latency). */
function onWorker(job: GenRateJob): Promise<{ mpps: number; gc: number; figures: Record<string, number> } | { failed: string }> {
  return new Promise((resolve) => {
    const w = startWorker('gen-rate.worker', import.meta.url, { workerData: job });
    w.once('message', (r: GenRateResult) => resolve('failed' in r ? r : { mpps: r.mpps, gc: r.gc, figures: r.figures }));
    w.once('error', (e) => resolve({ failed: e.message }));
  });
}

export const benchmark: Benchmark = {
  name: 'gen-rate',
  title: 'gen as a user runs it: Mpps through a net_null port against DPDK txonly, rate precision at 1 Mpps, latency floor by pair',
  defaults: { reps: 5, durationMs: 4000, warmupMs: 1000 },
  cases: (opts): BenchCase[] => {
    const dpdk = opts.dpdk?.length ? opts.dpdk.map((b) => ({ name: b.name, path: b.path })) : dpdkTestpmd() ? [{ name: 'DPDK', path: dpdkTestpmd()! }] : [];
    const seconds = (opts.warmupMs + opts.durationMs) / 1000;
    return [
      { name: 'dpkit gen 64 B, 1 lcore, no variable', params: { system: 'dpkit', lcores: 1, vars: 0 }, measure: (o) => dpkitGen('0@1', false, o) },
      { name: 'dpkit gen 64 B, 1 lcore, 1 variable', params: { system: 'dpkit', lcores: 1, vars: 1 }, measure: (o) => dpkitGen('0@1', true, o) },
      { name: 'dpkit gen 64 B, 2 lcores, 1 variable', params: { system: 'dpkit', lcores: 2, vars: 1 }, measure: (o) => dpkitGen('0@0,1@0,2@1', true, o) },
      ...dpdk.flatMap((b) =>
        [1, 2].map((l) => ({ name: `${b.name} txonly 64 B, ${l} lcore${l > 1 ? 's' : ''}, 1 variable`, params: { system: b.name, lcores: l, vars: 1 }, measure: (o: BenchOptions) => dpdkTxonly(b.path, l, o) })),
      ),
      { name: 'stalls: a loop reading the clock, CPU 1', params: { kind: 'stalls' }, measure: () => onWorker({ kind: 'stalls', seconds: Math.min(3, seconds), warmupS: 0, pps: 0, burst: 0 }) },
      { name: 'precision: 1 Mpps, burst 32, net_null', params: { kind: 'precision', rate: 1e6, burst: 32 }, measure: () => onWorker({ kind: 'precision', seconds, warmupS: opts.warmupMs / 1000, pps: 1e6, burst: 32 }) },
      ...(['ring', 'vhost', 'memif'] as const).map((pair) => ({
        name: `latency: 100 kpps through ${pair}`,
        params: { kind: 'latency', pair },
        measure: () => onWorker({ kind: 'latency', pair, seconds: Math.min(2, seconds), warmupS: 0, pps: 1e5, burst: 32 }),
      })),
      { name: 'bias: stamp + ring + check, one thread', params: { kind: 'bias' }, measure: () => onWorker({ kind: 'bias', seconds: 0, warmupS: 0, pps: 0, burst: 32 }) },
    ];
  },
  summary: (results) => {
    const t = new Table({ head: ['case', 'figure', 'median', 'min', 'max'], style: { head: [], border: [] } });
    for (const r of results as { name: string; figures?: Record<string, number[]> }[]) {
      for (const [k, v] of Object.entries(r.figures ?? {})) {
        const s = summarize(v);
        t.push([r.name, k, s.median.toFixed(2), s.min.toFixed(2), s.max.toFixed(2)]);
      }
    }
    return t.length === 0 ? '' : `Figures beside the rate (median of the repetitions):\n${t.toString()}`;
  },
};
