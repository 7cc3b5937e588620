/**
 * gen: the traffic generator (gen/generate.ts) as a forward mode. The
 * configured streams are split over the forwarding streams (gen stream k on
 * forwarding stream k mod their number), so several lcores each pace their
 * share to absolute deadlines on their own tx queues. Each gen stream's
 * account lives in a genTxStats block the control plane reserved, read live;
 * with latency each lcore's probe checker (on its streams' rx queues) is
 * published in the stream counters as rxprobe's is, and testpmd merges them.
 */
import { nowNs } from '../eal/clock.js';
import { GenSender, makeSources, newGenTxStats, planStreams, type PlannedStream } from '../gen/generate.js';
import type { RateLink } from '../gen/pacer.js';
import { ProbeRx, ProbeTx } from '../gen/probe.js';
import type { Mempool } from '../mem/mempool.js';
import { ArgError } from '../errors.js';
import { receive } from './common.js';
import { RXPROBE_STREAMS } from './rxprobe.js';
import type { FwdConfig, FwdContext, FwdEngine, FwdStream, GenFwdConfig } from './engine.js';
import { FS_FWD_DROPPED, FS_PROBE, FS_TX_PACKETS } from './fwd-layout.js';

const NO_MAC = new Uint8Array(6);
/**
 * genCheck runs before the streams have tx ports (and at testpmd's option
 * check, before any port exists): a `N%` rate is checked for its syntax
 * against any known speed here, and against its tx port's link by testpmd at
 * start (a link down is refused there, naming the port).
 */
const ANY_LINK: RateLink = { port: 0, mbps: 10_000 };

/** The link of `port` as testpmd recorded it at start, for `N%` rates (unrecorded: unknown, refused). */
export function genLink(g: GenFwdConfig, port: number): RateLink {
  return { port, mbps: g.linkMbps?.[port] ?? 0 };
}

/**
 * The gen streams forwarding stream `index` of `g.fwdStreams` sends, planned
 * (checked, scheduled) with `mac` as the default source address and
 * `txPort`'s link (`g.linkMbps`) for `N%` rates.
 * @returns each with its number among all gen streams
 */
export function genShare(g: GenFwdConfig, index: number, mac: Uint8Array, pool: Mempool, txPort = 0): { k: number; p: PlannedStream }[] {
  const room = pool.bufLen - pool.headroom;
  const out: { k: number; p: PlannedStream }[] = [];
  if (index >= g.fwdStreams) return out;
  for (let k = index; k < g.streams.length; k += g.fwdStreams) {
    out.push({ k, p: planStreams([g.streams[k]!], g.rate, mac, room, g.count, Infinity, k, genLink(g, txPort))[0]! });
  }
  return out;
}

/** Checks every gen stream before an lcore starts: a bad spec is one line at `start`. @throws ArgError */
export function genCheck(config: FwdConfig, pool: Mempool): void {
  const g = config.gen;
  if (g.streams.length === 0) throw new ArgError('gen: no stream');
  planStreams(g.streams, g.rate, NO_MAC, pool.bufLen - pool.headroom, g.count, Infinity, 0, ANY_LINK);
}

export function gen(ctx: FwdContext): FwdEngine {
  const { heap, pool, config } = ctx;
  const g = config.gen;
  const f64 = heap.f64;
  // Run outside testpmd (which reserves them on its main thread so it can read them), the blocks are this lcore's own.
  const stats = g.stats.length >= g.streams.length ? g.stats : g.streams.map(() => newGenTxStats(heap));
  // At least rxprobe's count, so a gen run and an rxprobe one read alike; testpmd's forward
  // statistics look up every id a checker tracks.
  const rx = g.latency ? ProbeRx.create(heap, { streams: Math.max(RXPROBE_STREAMS, g.streams.length) }) : null;
  // A sender per forwarding stream, made on its first pass (null: no gen stream falls to it).
  const senders = new WeakMap<FwdStream, GenSender | null>();
  const senderOf = (fs: FwdStream): GenSender | null => {
    const share = genShare(g, fs.index ?? 0, fs.txMac, pool, fs.txPort);
    if (share.length === 0) return null;
    // A loopback's ring must not fill while a late sender catches up: what came back is checked between bursts.
    const drain = (): void => {
      check(fs);
    };
    const sender = new GenSender({ heap, mbufs: ctx.mb }, pool, fs.txq, makeSources(heap, share.map((s) => s.p)), {
      burst: config.burst,
      lateNs: g.lateNs,
      stats: share.map((s) => stats[s.k]!),
      alsoCount: { sent: fs.stats + FS_TX_PACKETS, dropped: fs.stats + FS_FWD_DROPPED },
      ...(rx ? { stampers: share.map((s) => ProbeTx.create(heap, s.k)), afterBurst: drain } : {}),
    });
    sender.start(nowNs());
    return sender;
  };
  /** Receives a burst on the stream's rx queue and checks its probes. */
  const check = (fs: FwdStream): void => {
    f64[fs.stats + FS_PROBE] = rx!.block;
    const n = receive(ctx, fs);
    if (n === 0) return;
    rx!.check(ctx.burst, n);
    ctx.mb.freeBulk(ctx.burst, n);
  };
  return {
    name: 'gen',
    fwd(fs: FwdStream): void {
      let sender = senders.get(fs);
      if (sender === undefined) senders.set(fs, (sender = senderOf(fs)));
      sender?.step(nowNs);
      if (rx !== null) check(fs);
    },
  };
}
