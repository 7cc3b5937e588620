/**
 * The generator on one lcore (launched by generate-lcores.ts): this lcore's share
 * of every stream (split.ts) on its own tx queue, paced to the deadlines all
 * lcores share from one t0, its account in genTxStats blocks the main thread
 * reserved and reads live; with latency, its rx queue of the same number is
 * checked between bursts.
 */
import type { LcoreContext } from './lcore.js';
import { nowNs } from '../eal/clock.js';
import { GenSender, makeSources, planStreams, type GenStreamSpec } from '../gen/generate.js';
import { ProbeRx, ProbeTx } from '../gen/probe.js';

/**
 * Where the main thread and the lcores meet, a SharedArrayBuffer of GO_BYTES:
 * Int32 slots GO_READY (lcores set up) and GO_START (t0 written), then t0
 * (nowNs()) as a Float64 at byte 8.
 */
export const GO_READY = 0;
export const GO_START = 1;
export const GO_BYTES = 16;

/** One lcore's share, as the main thread hands it over. */
export interface GenLcorePart {
  /** Tx queue (and with latency rx queue) of this lcore. */
  queue: number;
  /** Each stream's genTxStats block (Float64 slot) for this share. */
  stats: number[];
  /** With latency: each stream's stamper block (heap offset), and the checker's. */
  stampers?: number[];
  checker?: number;
}

/** ctx.args of a generator lcore: plain data. */
export interface GenLcoreArgs {
  streams: GenStreamSpec[];
  rate?: string | number;
  count?: number;
  durationNs: number;
  port: number;
  rxPort: number;
  mac: Uint8Array;
  /** The tx port's link speed (for N% rates), Mbps; 0 unknown. */
  linkMbps: number;
  burst: number;
  lateNs: number;
  /** One per lcore, in `ctx.lcores` order. */
  parts: GenLcorePart[];
  /** GO_BYTES of shared memory: the ready count, the start flag and t0. */
  go: SharedArrayBuffer;
}

/** With latency, the run ends once nothing came back for this long. */
const DRAIN_IDLE_NS = 10e6;

export function main(ctx: LcoreContext<GenLcoreArgs>): void {
  const a = ctx.args;
  const index = ctx.lcores.indexOf(ctx.lcoreId);
  const part = a.parts[index]!;
  const { heap, pool, mbufs } = ctx;
  const planned = planStreams(a.streams, a.rate, a.mac, pool.bufLen - pool.headroom, a.count, a.durationNs, 0, { port: a.port, mbps: a.linkMbps });
  const share = { index, parts: a.parts.length, burst: a.burst };
  const sources = makeSources(heap, planned, share);
  const txq = ctx.txQueue(a.port, part.queue);
  const checker = part.checker !== undefined ? ProbeRx.attach(heap, part.checker) : null;
  const rxq = checker !== null ? ctx.rxQueue(a.rxPort, part.queue) : null;
  const rxb = ctx.burst(a.burst);
  const poll = (): number => checker!.receive(rxq!, rxb, a.burst, mbufs);
  const sender = new GenSender({ heap, mbufs }, pool, txq, sources, {
    burst: a.burst,
    lateNs: a.lateNs,
    stats: part.stats,
    part: share,
    ...(part.stampers !== undefined ? { stampers: part.stampers.map((b) => ProbeTx.attach(heap, b)), afterBurst: poll } : {}),
  });

  // Every lcore ready, then one t0 for all: the shares keep the stream's deadlines only from a common start.
  const go = new Int32Array(a.go, 0, 2);
  const t0At = new Float64Array(a.go, 8, 1);
  Atomics.add(go, GO_READY, 1);
  while (Atomics.load(go, GO_START) === 0) if (ctx.stopping()) return;
  const t0 = t0At[0]!;
  while (nowNs() < t0) if (ctx.stopping()) return;
  sender.start(t0);
  for (;;) {
    if (ctx.stopping() || nowNs() - t0 >= a.durationNs) break;
    const next = sender.step(nowNs);
    if (checker !== null) poll();
    if (next === Infinity) break;
  }
  if (checker !== null) {
    for (let idleSince = nowNs(); nowNs() - idleSince < DRAIN_IDLE_NS && !ctx.stopping(); ) if (poll() > 0) idleSince = nowNs();
  }
}
