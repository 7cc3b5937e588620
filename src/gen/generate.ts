/**
 * The traffic generator's sender: streams paced to absolute deadlines on one
 * tx queue, bursts filled by genFill and genCsum, and an honest account of
 * what was sent against what was asked. It runs in the calling thread: per
 * burst, the stream whose deadline came is filled and sent; between
 * deadlines the thread spins (or sleeps when the next one is far). Nothing is
 * allocated per burst; a run that cannot keep its rate says so in its report
 * instead of stretching silently.
 */
import { setImmediate as yieldNow, setTimeout as sleepMs } from 'node:timers/promises';
import { ArgError } from '../errors.js';
import { nowNs } from '../eal/clock.js';
import type { Burst, Heap } from '../eal/heap.js';
import type { TxQueue } from '../ethdev/driver.js';
import type { Ethdev } from '../ethdev/ethdev.js';
import type { Mbufs } from '../mem/mbuf.js';
import type { Mempool } from '../mem/mempool.js';
import { genOps, type GenOps } from './gen.twin.js';
import { ProbeRx, ProbeTx, probeStreamStats, type ProbeStreamStats } from './probe.js';
import { countBefore, makePacer, parseRate, type Pacer, type PatternSpec, type RateLink } from './pacer.js';
import { buildStream, writeStream, type BuiltStream, type StreamSpec } from './stream.js';
import { partPacer, partPlanned, partToStream, seedPart, skipVars, type StreamPart } from './split.js';
import {
  GEN_TX_STATS_SIZE,
  GENT_D_BYTES,
  GENT_D_LAST_DEPART_NS,
  GENT_D_LATE,
  GENT_D_MAX_LATE_NS,
  GENT_D_NEXT,
  GENT_D_NO_MBUF,
  GENT_D_SENT,
  GENT_D_T0,
  GENT_D_TX_DROPPED,
} from './gen-layout.js';

/** A stream with its rate and pattern. */
export interface GenStreamSpec extends StreamSpec {
  /**
   * Packets per second (a number) or `N<unit>`: pps, kpps, Mpps; kbps, Mbps,
   * Gbps (bits of the packet without FCS, as obytes counts them), `-l2` (with
   * the FCS, TRex's L2) or `-l1` (on the wire: preamble, gap, FCS); or `N%` of
   * the tx port's link speed in L1 bits. Default: the run's `rate`.
   */
  rate?: string | number;
  /** How the rate varies over the run. Default constant. */
  pattern?: PatternSpec;
}

/** The clock a run paces by: nanoseconds on one monotonic timeline, and a way to wait. */
export interface GenClock {
  /** Nanoseconds on a monotonic clock (any origin). */
  now(): number;
  /** Waits about `ns` nanoseconds, yielding to the event loop. */
  sleep(ns: number): Promise<void>;
}

/** What a run needs of dpkit: an `Eal` from `init()` has all of it. */
export interface GenTarget {
  /** The heap the stream blocks and bursts go into. */
  readonly heap: Heap;
  /** The ports; the tx port must be started. */
  readonly ethdev: Ethdev;
  /** Mbuf operations (frees what a tx queue refused). */
  readonly mbufs: Mbufs;
  /** The pool packets come from, unless `GenerateOptions.pool` names another. */
  readonly pool: Mempool;
}

/** One burst as it left, for tests and traces. */
export type GenBurstHook = (stream: number, first: number, n: number, deadlineNs: number, departNs: number) => void;

/** What `generate` takes. */
export interface GenerateOptions {
  /** The streams, sent interleaved on one tx queue. */
  streams: readonly GenStreamSpec[];
  /** Tx port. Default 0. */
  port?: number;
  /** Tx queue. Default 0. */
  queue?: number;
  /** The rate of streams that name none (as `GenStreamSpec.rate`; `N%` is of `port`'s link). Default 1 Mpps. */
  rate?: string | number;
  /** Seconds to run; the schedule past it is not sent. */
  duration?: number;
  /** Packets per stream; with `duration` too, whichever comes first. */
  count?: number;
  /** Packets sent together at the deadline of the first. Default 32. */
  burst?: number;
  /** Pool of the packets. Default the target's. */
  pool?: Mempool;
  /** Relative shortfall of the achieved rate still counted as kept. Default 0.001 (0.1 %). */
  tolerance?: number;
  /** A burst leaving later than this after its deadline counts its packets late. Default 100 000 ns. */
  lateNs?: number;
  /** The clock. Default `monotonicClock` (nowNs()). */
  clock?: GenClock;
  /** Stops the run early (the report covers the schedule up to the stop). */
  signal?: AbortSignal;
  /** Called after every burst sent (tests, traces). */
  onBurst?: GenBurstHook;
  /**
   * Latency, loss and order on every packet: each packet carries a probe (its
   * last 16 bytes: stream, sequence number, tx time; checksums stay valid),
   * and `rxPort` is polled between bursts and checked. Default false.
   */
  latency?: boolean;
  /** With `latency`: the port whose rx queue 0 the packets come back on. Default the tx port (a loopback such as net_ring). */
  rxPort?: number;
  /** Seconds between live reports to `onPeriod`. Default none. */
  period?: number;
  /** Called every `period` with the account so far (the schedule up to now): `--json` prints each as a line. */
  onPeriod?: (r: GenPeriodReport) => void;
}

/** A live account: each stream's report over the schedule up to `elapsedNs`. */
export interface GenPeriodReport {
  /** 1, 2, … */
  period: number;
  /** Nanoseconds since the run's start. */
  elapsedNs: number;
  /** Per stream, in the order given (no latency: that is summed up at the end). */
  streams: GenStreamReport[];
}

/** One stream's account. */
export interface GenStreamReport {
  /** The stream's name. */
  name: string;
  /** Packets the schedule asked for. */
  planned: number;
  /** Packets the tx queue accepted. */
  sent: number;
  /** Bytes of the packets sent. */
  bytes: number;
  /** Packets the tx queue refused (ring full), freed. */
  txDropped: number;
  /** Packets not made because the pool was empty. */
  noMbuf: number;
  /** Packets that left more than `lateNs` after their burst's deadline. */
  late: number;
  /** The latest a burst left after its deadline, ns. */
  maxLateNs: number;
  /** The rate asked, packets per second (planned over the schedule's span). */
  askedPps: number;
  /** The rate achieved: sent over the span, or over the time the last burst left when that was later. */
  achievedPps: number;
  /** Bits per second achieved (frame bytes without FCS). */
  achievedBps: number;
  /** Whether the asked rate was kept (nothing dropped, achieved within the tolerance). */
  kept: boolean;
  /** With `latency`: what came back, lost, duplicated, reordered, and the latency distribution. */
  latency?: ProbeStreamStats;
}

/** A run's account. */
export interface GenReport {
  /** Per stream, in the order given. */
  streams: GenStreamReport[];
  /** Nanoseconds from the start to the end of the run. */
  elapsedNs: number;
  /** Whether every stream kept its rate. */
  kept: boolean;
  /** Whether `signal` stopped the run. */
  interrupted: boolean;
  /** One line: the rates, and what went wrong when they were not kept. */
  verdict: string;
}

/** nowNs() (the one clock of every lcore and of the probes' timestamps), and timers for long waits. */
export const monotonicClock: GenClock = {
  now: nowNs,
  sleep: async (ns) => {
    await (ns > 0 ? sleepMs(ns / 1e6) : yieldNow());
  },
};

/** Waits longer than this sleep (less a margin), shorter ones spin: a timer wakes ~1 ms late. */
const SLEEP_ABOVE_NS = 2e6;
const SLEEP_MARGIN_NS = 1e6;
/** A spinning run yields to the event loop this often, so signals and timers run. */
const YIELD_EVERY_NS = 20e6;
/** With latency, the run ends once nothing came back for this long. */
const DRAIN_IDLE_NS = 10e6;

/** runPaced's state between awaits (Float64Array slots) and what its spinning returns. */
const PACE_T0 = 0;
const PACE_T = 1;
const PACE_LAST_YIELD = 2;
const PACE_NEXT_PERIOD = 3;
const PACE_WAIT = 4;
const PACE_STATE_SIZE = 5;
const PACE_ENDED = 0;
const PACE_STOPPED = 1;
const PACE_WAITING = 2;

/** One source of packets for the paced loop: its schedule and how a burst of it is made. */
export interface PacedSource {
  /** The name in reports. */
  name: string;
  /** Its deadlines. */
  pacer: Pacer;
  /** Packets to send (Infinity: until the duration). */
  planned: number;
  /** Fills the `n` fresh mbufs of `burst`, packets `first`.. of the source. @returns their bytes */
  fill(burst: Burst, first: number, n: number): number;
}

/** What the paced loop takes beyond its sources (checked by its callers). */
export type PacedOptions = Pick<GenerateOptions, 'port' | 'queue' | 'duration' | 'burst' | 'pool' | 'tolerance' | 'lateNs' | 'clock' | 'signal' | 'onBurst' | 'latency' | 'rxPort' | 'period' | 'onPeriod'>;

/** Checks what every run takes. @throws ArgError naming the option */
export function checkRunOptions(opts: PacedOptions & { count?: number }): void {
  const burstSize = opts.burst ?? 32;
  if (!Number.isInteger(burstSize) || burstSize < 1 || burstSize > 512) throw new ArgError(`gen: burst ${burstSize} must be an integer in [1, 512]`);
  if (opts.duration !== undefined && !(opts.duration > 0 && Number.isFinite(opts.duration))) throw new ArgError(`gen: duration ${opts.duration} must be a positive number of seconds`);
  if (opts.count !== undefined && !(Number.isInteger(opts.count) && opts.count > 0)) throw new ArgError(`gen: count ${opts.count} must be a positive integer`);
  if (opts.period !== undefined && !(opts.period > 0 && Number.isFinite(opts.period))) throw new ArgError(`gen: period ${opts.period} must be a positive number of seconds`);
}

/**
 * Sends `opts.streams` on a started port, paced to absolute deadlines, for
 * `duration` seconds and/or `count` packets a stream, and accounts for every
 * packet: sent, refused by the queue (freed, counted), not made (pool empty),
 * late. Runs in the calling thread until the schedule ends.
 * @returns the report; `kept` is false when a stream did not keep its rate.
 * @throws ArgError (one line naming the stream and field) on a bad spec, a
 *   packet larger than the pool's mbufs, or neither duration nor count.
 */
export async function generate(target: GenTarget, opts: GenerateOptions): Promise<GenReport> {
  const { heap, ethdev } = target;
  const pool = opts.pool ?? target.pool;
  checkRunOptions(opts);
  if (opts.duration === undefined && opts.count === undefined) throw new ArgError('gen: give a duration, a count or both');
  if (!Array.isArray(opts.streams) || opts.streams.length === 0) throw new ArgError('gen: no stream');
  const durationNs = opts.duration === undefined ? Infinity : opts.duration * 1e9;
  const room = pool.bufLen - pool.headroom;
  const mac = ethdev.macAddr(opts.port ?? 0);
  // Every spec is checked before anything is written into the heap.
  const built = planStreams(opts.streams, opts.rate, mac, room, opts.count, durationNs, 0, rateLink(ethdev, opts.port ?? 0));
  const sources = makeSources(heap, built);
  return runPaced(target, sources, opts);
}

/** A stream checked and built, with its schedule. */
export interface PlannedStream {
  /** The stream as genFill reads it. */
  b: BuiltStream;
  /** Its rate in packets per second, as parseRate read it (the pattern varies it over the run). */
  pps: number;
  /** Its deadlines. */
  pacer: Pacer;
  /** Packets to send (Infinity: until stopped). */
  planned: number;
}

/**
 * The link a `N%` rate on `port` is a share of (rte_eth_link_get): its speed
 * while the link is up, else 0 (unknown). @throws ArgError for a missing port.
 */
export function rateLink(ethdev: Ethdev, port: number): RateLink {
  return { port, mbps: ethdev.linkUp(port) ? ethdev.linkSpeed(port) : 0 };
}

/**
 * Checks `specs` (every one before anything is written into the heap) and
 * makes each one's schedule. `count` and `durationNs` bound what is planned;
 * `link` is the tx port's, for `N%` rates (absent: such a rate is refused).
 * @throws ArgError (one line naming the stream and field) on a bad spec or a packet longer than `room`.
 */
export function planStreams(specs: readonly GenStreamSpec[], rate: string | number | undefined, mac: Uint8Array, room: number, count: number | undefined, durationNs: number, first = 0, link?: RateLink): PlannedStream[] {
  return specs.map((spec, i) => {
    const b = buildStream(spec, first + i, mac);
    if (b.maxLen > room) throw new ArgError(`gen: stream '${b.name}': ${b.maxLen}-byte packets do not fit the pool's ${room}-byte mbufs`);
    const pps = parseRate(spec.rate ?? rate ?? '1Mpps', b.meanLen, `gen: stream '${b.name}': rate`, link);
    const pacer = makePacer(pps, spec.pattern, b.meanLen, `gen: stream '${b.name}'`, link);
    const planned = Math.min(count ?? Infinity, durationNs === Infinity ? Infinity : countBefore(pacer, durationNs));
    return { b, pps, pacer, planned };
  });
}

/**
 * Writes each planned stream's block into the heap. With `part`, each source
 * is that share of its stream (split.ts): its deadlines, its packets, its
 * variables skipping the other parts' values.
 * @returns the sources the paced loop sends (genFill, then genCsum, per burst)
 */
export function makeSources(heap: Heap, planned: readonly PlannedStream[], part?: StreamPart): PacedSource[] {
  const ops: GenOps = genOps(heap);
  const lc = heap.lcore;
  const skip = part === undefined ? 0 : (part.parts - 1) * part.burst;
  return planned.map(({ b, pacer, planned }) => {
    const s = writeStream(heap, b);
    if (part !== undefined) {
      seedPart(heap, s, part.index);
      // Part i's first burst is the stream's burst i.
      skipVars(heap, s, part.index * part.burst);
    }
    return {
      name: b.name,
      pacer: part === undefined ? pacer : partPacer(pacer, part),
      planned: part === undefined ? planned : partPlanned(planned, part),
      fill: (burst: Burst, _first: number, n: number) => {
        const bytes = ops.fill(s, lc, burst.heapOffset, n);
        ops.csum(s, lc, burst.heapOffset, n);
        if (skip > 0) skipVars(heap, s, skip);
        return bytes;
      },
    };
  });
}

/** Reserves a zeroed genTxStats block. @returns its first Float64 slot */
export function newGenTxStats(heap: Heap): number {
  const at = heap.reserve(GEN_TX_STATS_SIZE, 64, 'gen tx stats') >>> 3;
  heap.f64.fill(0, at, at + GEN_TX_STATS_SIZE / 8);
  return at;
}

/** What a sender needs beyond its sources and queue. */
export interface SenderOptions {
  /** Packets a burst. */
  burst: number;
  /** A burst leaving later than this after its deadline counts its packets late. */
  lateNs: number;
  /** Each source's genTxStats block (first Float64 slot), zeroed. */
  stats: readonly number[];
  /** Each source's probe stamper, to stamp every packet (latency), or none. */
  stampers?: readonly ProbeTx[];
  /** Called after every burst sent (tests, traces). */
  onBurst?: GenBurstHook;
  /** Called after every burst sent, before the next: a loopback's rx is drained here. */
  afterBurst?: () => void;
  /** The share of each source's stream this sender sends (its sources made with it): probes carry the stream's numbers. */
  part?: StreamPart;
  /**
   * Float64 slots to count the packets sent and refused into as well, besides
   * the sources' blocks (testpmd's forwarding-stream TX-packets and TX-dropped).
   */
  alsoCount?: { sent: number; dropped: number };
}

/** Bursts of one source a GenSender.step sends at most before it returns (a few hundred µs at 64 B). */
const STEP_BURSTS = 256;

/**
 * One tx queue's sender: its sources' bursts at their deadlines, and the
 * account of every packet in each source's genTxStats block (heap, so the
 * control plane reads it live). The paced loop of generate() and testpmd's
 * gen forward mode both drive one; it allocates nothing per burst.
 */
export class GenSender {
  private readonly f64: Float64Array;
  private readonly burst: Burst;
  private t0 = 0;

  constructor(
    private readonly target: Pick<GenTarget, 'heap' | 'mbufs'>,
    private readonly pool: Mempool,
    private readonly txq: Pick<TxQueue, 'txBurst'>,
    private readonly sources: readonly PacedSource[],
    private readonly opts: SenderOptions,
  ) {
    this.f64 = target.heap.f64;
    this.burst = target.heap.burst(opts.burst);
  }

  /** Starts the schedule at `t0` (nowNs()-like, the clock `step` is given). */
  start(t0: number): void {
    this.t0 = t0;
    for (const c of this.opts.stats) this.f64[c + GENT_D_T0] = t0;
  }

  /**
   * Sends the bursts due by `clock.now()`, re-reading the clock after each
   * (a sender catching up takes time too, and each departure is its own),
   * at most STEP_BURSTS of each source: a sender behind a rate it cannot
   * keep returns to its caller, which checks its duration and stop signal,
   * and one source behind does not starve the others.
   * @returns the next deadline, ns after t0 (already past: behind, call again;
   *   Infinity: every source planned all it had)
   */
  step(now: () => number): number {
    const f64 = this.f64;
    const srcs = this.sources;
    const stats = this.opts.stats;
    let t = now() - this.t0;
    let nextDeadline = Infinity;
    for (let k = 0; k < srcs.length; k++) {
      const src = srcs[k]!;
      const c = stats[k]!;
      let budget = STEP_BURSTS;
      while (f64[c + GENT_D_NEXT]! < src.planned) {
        const d = src.pacer.deadline(f64[c + GENT_D_NEXT]!);
        if (d > t || budget === 0) {
          if (d < nextDeadline) nextDeadline = d;
          break;
        }
        // The burst's deadline and departure go by a Float64Array: as arguments of a call the
        // optimizer does not inline, doubles are boxed, two HeapNumbers a burst.
        this.times[0] = d;
        this.times[1] = t;
        this.send(k, src, c);
        budget--;
        t = now() - this.t0;
      }
    }
    return nextDeadline;
  }

  /** The burst's deadline and departure, ns after t0, as send reads them. */
  private readonly times = new Float64Array(2);

  private send(k: number, src: PacedSource, c: number): void {
    const { f64, burst, pool, txq } = this;
    const deadline = this.times[0]!;
    const now = this.times[1]!;
    const mbufs = this.target.mbufs;
    const first = f64[c + GENT_D_NEXT]!;
    const n = Math.min(this.opts.burst, src.planned - first);
    f64[c + GENT_D_NEXT] = first + n;
    if (pool.allocBulk(burst, n) === 0) {
      f64[c + GENT_D_NO_MBUF] += n;
      return;
    }
    let bytes = src.fill(burst, first, n);
    const stampers = this.opts.stampers;
    if (stampers !== undefined) {
      const part = this.opts.part;
      if (part !== undefined) stampers[k]!.seek(partToStream(part, first));
      stampers[k]!.stamp(burst, n);
    }
    const sent = txq.txBurst(burst, n);
    if (sent < n) {
      for (let i = sent; i < n; i++) bytes -= mbufs.pktLen(burst[i]!);
      mbufs.freeBulk(burst, n - sent, sent);
      f64[c + GENT_D_TX_DROPPED] += n - sent;
    }
    f64[c + GENT_D_SENT] += sent;
    f64[c + GENT_D_BYTES] += bytes;
    const also = this.opts.alsoCount;
    if (also !== undefined) {
      f64[also.sent] += sent;
      f64[also.dropped] += n - sent;
    }
    const lateBy = now - deadline;
    if (lateBy > this.opts.lateNs) f64[c + GENT_D_LATE] += n;
    if (lateBy > f64[c + GENT_D_MAX_LATE_NS]!) f64[c + GENT_D_MAX_LATE_NS] = lateBy;
    f64[c + GENT_D_LAST_DEPART_NS] = now;
    this.opts.onBurst?.(k, first, n, deadline, now);
    this.opts.afterBurst?.();
  }
}

/**
 * The paced loop under `generate` and `replay`: each source's bursts at
 * their deadlines on one tx queue, and the account of every packet.
 */
export async function runPaced(target: GenTarget, sources: readonly PacedSource[], opts: PacedOptions): Promise<GenReport> {
  const { heap, ethdev, mbufs } = target;
  const pool = opts.pool ?? target.pool;
  const burstSize = opts.burst ?? 32;
  const tolerance = opts.tolerance ?? 0.001;
  const lateNs = opts.lateNs ?? 100_000;
  const clock = opts.clock ?? monotonicClock;
  const durationNs = opts.duration === undefined ? Infinity : opts.duration * 1e9;
  const txq = ethdev.txQueue(opts.port ?? 0, opts.queue ?? 0);
  const stats = sources.map(() => newGenTxStats(heap));
  // Latency: a stamper per stream, one checker polled between bursts on the rx port.
  const stampers = opts.latency ? sources.map((_, k) => ProbeTx.create(heap, k)) : undefined;
  const checker = opts.latency ? ProbeRx.create(heap, { streams: sources.length }) : null;
  const rxq = checker ? ethdev.rxQueue(opts.rxPort ?? opts.port ?? 0, 0) : null;
  const rxb: Burst = heap.burst(burstSize);
  /** Receives and checks one burst. @returns how many came */
  const poll = (): number => checker!.receive(rxq!, rxb, burstSize, mbufs);
  const sender = new GenSender(target, pool, txq, sources, {
    burst: burstSize,
    lateNs,
    stats,
    ...(stampers ? { stampers, afterBurst: poll } : {}),
    ...(opts.onBurst ? { onBurst: opts.onBurst } : {}),
  });
  // The real clock is read at a call site of its own: a site that has also seen another clock
  // (a test's) is polymorphic, is not inlined, and boxes every reading it returns.
  const real = clock === monotonicClock;
  const now = (): number => (real ? nowNs() : clock.now());

  const periodNs = opts.onPeriod && opts.period !== undefined ? opts.period * 1e9 : Infinity;
  // The spinning is a synchronous function and the clock readings it keeps
  // between awaits live in a Float64Array: an async function keeps its locals
  // in a heap context, where every double assigned is a new HeapNumber (at
  // 1 Mpps that was 60 MB a second, a dozen scavenges, each one late burst).
  const st = new Float64Array(PACE_STATE_SIZE);
  st[PACE_NEXT_PERIOD] = periodNs;
  let periods = 0;
  /** Sends what is due until the run ends or must wait. @returns PACE_* (the wait in st[PACE_WAIT]) */
  const spin = (): number => {
    const t0 = st[PACE_T0]!;
    for (;;) {
      let t = now() - t0;
      st[PACE_T] = t;
      if (opts.signal?.aborted) return PACE_STOPPED;
      if (t >= durationNs) return PACE_ENDED;
      const nextDeadline = sender.step(now);
      t = now() - t0;
      st[PACE_T] = t;
      if (checker) poll();
      let nextPeriod = st[PACE_NEXT_PERIOD]!;
      if (t >= nextPeriod) {
        // The account as read now (counters and schedule both up to t); the next report stays on the period's grid.
        opts.onPeriod!({ period: ++periods, elapsedNs: t, streams: sources.map((src, k) => streamReport(heap.f64, stats[k]!, src, t, tolerance)) });
        nextPeriod = (Math.floor(t / periodNs) + 1) * periodNs;
        st[PACE_NEXT_PERIOD] = nextPeriod;
      }
      if (nextDeadline === Infinity) return PACE_ENDED;
      // A sleep wakes for the next period's report too.
      const wait = Math.min(nextDeadline, nextPeriod) - (now() - t0);
      if (wait > SLEEP_ABOVE_NS) {
        st[PACE_WAIT] = wait - SLEEP_MARGIN_NS;
        return PACE_WAITING;
      }
      if (t - st[PACE_LAST_YIELD]! > YIELD_EVERY_NS) {
        st[PACE_WAIT] = 0;
        return PACE_WAITING;
      }
    }
  };
  const t0 = clock.now();
  st[PACE_T0] = t0;
  sender.start(t0);
  let interrupted = false;
  for (;;) {
    const why = spin();
    if (why === PACE_STOPPED) interrupted = true;
    if (why !== PACE_WAITING) break;
    await clock.sleep(st[PACE_WAIT]!);
    st[PACE_LAST_YIELD] = clock.now() - t0;
  }
  const t = st[PACE_T]!;
  const endNs = clock.now() - t0;
  if (checker) {
    // What is still in flight: poll until nothing came for DRAIN_IDLE_NS.
    for (let idleSince = clock.now(); clock.now() - idleSince < DRAIN_IDLE_NS; ) {
      if (poll() > 0) idleSince = clock.now();
      else await clock.sleep(0);
    }
  }
  const reports = sources.map((src, k) => streamReport(heap.f64, stats[k]!, src, interrupted ? Math.min(t, durationNs) : durationNs, tolerance));
  if (checker) reports.forEach((r, k) => (r.latency = probeStreamStats([checker], k, stampers![k]!.sent)));
  return runReport(reports, endNs, interrupted, lateNs);
}

/** The run's account from its streams'. */
export function runReport(reports: GenStreamReport[], elapsedNs: number, interrupted: boolean, lateNs: number): GenReport {
  const kept = !interrupted && reports.every((r) => r.kept);
  return { streams: reports, elapsedNs, kept, interrupted, verdict: verdict(reports, kept, interrupted, lateNs) };
}

/**
 * One stream's report from its genTxStats block at `c` (Float64 slot):
 * asked against achieved over the schedule up to `stopNs` (ns after the
 * sender's start; Infinity: the schedule's end), and whether it was kept.
 */
export function streamReport(f64: Float64Array, c: number, src: Pick<PacedSource, 'name' | 'pacer' | 'planned'>, stopNs: number, tolerance: number): GenStreamReport {
  const st = {
    name: src.name,
    pacer: src.pacer,
    sent: f64[c + GENT_D_SENT]!,
    bytes: f64[c + GENT_D_BYTES]!,
    txDropped: f64[c + GENT_D_TX_DROPPED]!,
    noMbuf: f64[c + GENT_D_NO_MBUF]!,
    late: f64[c + GENT_D_LATE]!,
    maxLateNs: f64[c + GENT_D_MAX_LATE_NS]!,
    lastDepartNs: f64[c + GENT_D_LAST_DEPART_NS]!,
  };
  // The schedule's span: up to the stop (duration or interrupt), or to the deadline after the last packet of a count.
  let planned = src.planned;
  let spanNs: number;
  if (stopNs !== Infinity && countBefore(st.pacer, stopNs) <= planned) {
    planned = countBefore(st.pacer, stopNs);
    spanNs = stopNs;
  } else {
    spanNs = st.pacer.deadline(planned);
  }
  const actualNs = Math.max(spanNs, st.lastDepartNs);
  const askedPps = spanNs > 0 ? (planned * 1e9) / spanNs : 0;
  const achievedPps = actualNs > 0 ? (st.sent * 1e9) / actualNs : 0;
  const kept = st.txDropped === 0 && st.noMbuf === 0 && st.sent >= planned * (1 - tolerance) && achievedPps >= askedPps * (1 - tolerance);
  return {
    name: st.name,
    planned,
    sent: st.sent,
    bytes: st.bytes,
    txDropped: st.txDropped,
    noMbuf: st.noMbuf,
    late: st.late,
    maxLateNs: st.maxLateNs,
    askedPps,
    achievedPps,
    achievedBps: actualNs > 0 ? (st.bytes * 8e9) / actualNs : 0,
    kept,
  };
}

/** A rate as people write it: 1.25 Mpps. */
export function fmtPps(pps: number): string {
  return pps >= 1e6 ? `${(pps / 1e6).toFixed(3)} Mpps` : pps >= 1e3 ? `${(pps / 1e3).toFixed(3)} kpps` : `${pps.toFixed(1)} pps`;
}

function verdict(rs: GenStreamReport[], kept: boolean, interrupted: boolean, lateNs: number): string {
  const asked = rs.reduce((a, r) => a + r.askedPps, 0);
  const got = rs.reduce((a, r) => a + r.achievedPps, 0);
  const sent = rs.reduce((a, r) => a + r.sent, 0);
  const planned = rs.reduce((a, r) => a + r.planned, 0);
  const late = rs.reduce((a, r) => a + r.late, 0);
  const maxLate = Math.max(...rs.map((r) => r.maxLateNs));
  const head = `${fmtPps(got)} of ${fmtPps(asked)} asked, ${sent} of ${planned} packets sent, ${late} late (> ${lateNs / 1e3} us; max ${(maxLate / 1e3).toFixed(1)} us)`;
  if (interrupted) return `interrupted: ${head}`;
  if (kept) return `rate kept: ${head}`;
  const bad = rs.find((r) => !r.kept)!;
  const why = [
    bad.txDropped ? `${bad.txDropped} refused by the tx queue (ring full)` : '',
    bad.noMbuf ? `${bad.noMbuf} not made (pool empty)` : '',
    `achieved ${fmtPps(bad.achievedPps)} of ${fmtPps(bad.askedPps)}`,
  ].filter((x) => x !== '');
  return `rate NOT kept: stream '${bad.name}': ${why.join(', ')}; in all ${sent} of ${planned} packets sent, ${late} late (max ${(maxLate / 1e3).toFixed(1)} us)`;
}
