/**
 * A testpmd forwarding lcore (run_pkt_fwd_on_lcore): re-opens its streams'
 * queues from their descriptors and makes its engine, reports ready and
 * waits for the launch (every lcore starts polling at once), then runs the
 * engine over every stream in turn until the stop flag is set. Optionally
 * first sends `txFirst` bursts of txonly packets on every stream (`start
 * tx_first`). On exit it returns its mempool cache to the shared ring, so
 * the pool is full once ports drain; when the loop threw (a user engine, a
 * broken capture), it does so too and then rethrows, which stops every lcore.
 * It reports how many garbage collections ran while it forwarded, and
 * hands over their pauses whenever the main thread asks (gc.ts).
 */
import { writeSync } from 'node:fs';
import { GCProfiler } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { drivers } from '../../drivers/index.js';
import type { QueueDescriptor } from '../../ethdev/driver.js';
import type { Datapath } from '../../eal/kernels.js';
import { pinThisThread } from '../../eal/affinity.js';
import { CTL_STOP, lcoreReady } from '../../eal/launcher.js';
import { Heap, type HeapDescriptor } from '../../eal/heap.js';
import { Mbufs } from '../../mem/mbuf.js';
import { Mempool } from '../../mem/mempool.js';
import type { FwdConfig, FwdContext, FwdStream } from '../../fwd/engine.js';
import { MAX_PKT_BURST } from '../../fwd/engine.js';
import { engines } from '../../fwd/index.js';
import { loadUserEngine, userEngine } from '../../api/user-engine.js';
import { txonly } from '../../fwd/txonly.js';
import { dumpingRxQueue, retryingTxQueue } from './rxtx-hooks.js';
import { LCC_BUSY_NS, LCC_BUSY_POLLS, LCC_IDLE_POLLS, LCC_TOTAL_NS, spreadRxQueue, spreadTxQueue } from './cycles.js';
import { FS_RX_PACKETS, FS_TX_PACKETS } from '../../fwd/engine.js';
import { LcoreGcAnswer } from './gc.js';

/** One stream as the main thread describes it to the lcore. */
export interface StreamJob {
  rxPort: number;
  rxQueue: number;
  txPort: number;
  txQueue: number;
  rxq: QueueDescriptor;
  txq: QueueDescriptor;
  stats: number;
  txMac: Uint8Array;
  peerMac: Uint8Array;
  /** The stream's number among all forwarding streams. */
  index: number;
  /** --record-burst-stats: first Float64 slots of the stream's rx and tx burstSpread blocks. */
  rxSpread?: number;
  txSpread?: number;
}

export interface LcoreJob {
  heap: HeapDescriptor;
  datapath: Datapath;
  pool: number;
  engine: string;
  /** A user engine's module (a file URL): then `engine` only names it. */
  engineModule?: string;
  config: FwdConfig;
  streams: StreamJob[];
  txFirst: number;
  /** `set verbose`: 1 and more print every received burst. */
  verbose: number;
  /** `set fwd MODE retry`: how tx retries a partly refused burst; absent, it does not. */
  txRetry?: { delayUs: number; retries: number };
  /** Counts lcores past their first pass over their streams (shared). */
  polled: Int32Array;
  /** Where the dumps of `set verbose` go: stdout, or stderr when stdout carries --json. */
  dumpTo: 'stdout' | 'stderr';
  /** Cycles recorded (--record-core-cycles, metrics, dashboard): first Float64 slot of this lcore's lcoreCycles block. */
  cycles?: number;
  /** Byte offset of this lcore's lcoreGc block, where it answers the main thread's asks for its collections. */
  gc: number;
}

/** The lcore's last message: it stopped cleanly, after `gc` garbage collections while forwarding. */
export interface LcoreDone {
  lcoreId: number;
  done: true;
  gc: number;
}

/** How often (in passes over all streams) the loop looks at the stop flag. */
const STOP_CHECK_EVERY = 64;

/**
 * Every how many polls one is timed when cycles are recorded. A clock read
 * costs about a fifth of a 32-packet io burst here (timing every poll, as
 * testpmd's get_start_cycles / get_end_cycles do with the TSC, took 36 % of
 * io's rate), so one poll in SAMPLE_EVERY is timed and stands for
 * SAMPLE_EVERY polls of its kind. Prime, so that with several streams per
 * lcore the timed poll walks over all of them.
 */
const SAMPLE_EVERY = 17;

const { ctl, lcoreId, job, cpus } = workerData as { ctl: Int32Array; lcoreId: number; job: LcoreJob; cpus?: number[] };
const cpu = pinThisThread(cpus);
const heap = Heap.attach(job.heap, lcoreId, job.datapath);
const pool = Mempool.attach(heap, { offset: job.pool });
const spec = (d: QueueDescriptor) => {
  const s = drivers.get(d.driver);
  if (!s) throw new Error(`no driver ${d.driver} to open a queue`);
  return s;
};
// Written from this thread at once, as DPDK's lcores printf: a worker's process.stdout only
// flushes when its event loop turns, which a polling lcore's never does.
const dumpFd = job.dumpTo === 'stderr' ? 2 : 1;
const dump = (text: string) => writeSync(dumpFd, text);
const rxqOf = (s: StreamJob) => {
  const q = spec(s.rxq).openRxQueue(heap, s.rxq);
  const d = job.verbose > 0 ? dumpingRxQueue(q, heap, s.rxPort, s.rxQueue, dump) : q;
  return s.rxSpread === undefined ? d : spreadRxQueue(d, heap, s.rxSpread);
};
const txqOf = (s: StreamJob) => {
  const q = spec(s.txq).openTxQueue(heap, s.txq);
  const r = job.txRetry ? retryingTxQueue(q, heap, job.txRetry.delayUs, job.txRetry.retries) : q;
  return s.txSpread === undefined ? r : spreadTxQueue(r, heap, s.txSpread);
};
const streams: FwdStream[] = job.streams.map((s) => ({
  rxPort: s.rxPort,
  rxQueue: s.rxQueue,
  txPort: s.txPort,
  txQueue: s.txQueue,
  rxq: rxqOf(s),
  txq: txqOf(s),
  stats: s.stats,
  txMac: s.txMac,
  peerMac: s.peerMac,
  index: s.index,
}));
const ctx: FwdContext = { heap, mb: new Mbufs(heap), pool, burst: heap.burst(MAX_PKT_BURST), config: job.config };
const makeEngine = async () => {
  if (job.engineModule) return userEngine(ctx, job.engineModule, await loadUserEngine(job.engineModule), streams);
  const factory = engines.get(job.engine);
  if (!factory) throw new Error(`unknown forwarding mode ${job.engine}`);
  return factory(ctx);
};
const engine = await makeEngine();

const first = job.txFirst > 0 ? txonly(ctx) : null;
const nb = streams.length;

lcoreReady(ctl, cpu);
// Counts collections over the forwarding loop: an allocation-free data path makes none.
const profiler = new GCProfiler();
const gc = new LcoreGcAnswer(heap, job.gc, profiler);
let failed = false;
let failure: unknown;
// Stopped before the launch (another lcore failed its set-up): no burst goes out.
if (Atomics.load(ctl, CTL_STOP) === 0) {
  profiler.start();
  try {
    if (first) for (let k = 0; k < job.txFirst; k++) for (const fs of streams) first.fwd(fs);
    // One pass over every stream before start() returns: statistics read right after show it.
    for (let i = 0; i < nb; i++) engine.fwd(streams[i]!);
    Atomics.add(job.polled, 0, 1);
    Atomics.notify(job.polled, 0);
    if (job.cycles === undefined) {
      for (let pass = 1; ; pass++) {
        for (let i = 0; i < nb; i++) engine.fwd(streams[i]!);
        if (pass % STOP_CHECK_EVERY === 0) {
          if (Atomics.load(ctl, CTL_STOP) !== 0) break;
          gc.check();
        }
      }
    } else {
      timedLoop(job.cycles);
    }
  } catch (e) {
    failed = true;
    failure = e;
    Atomics.store(ctl, CTL_STOP, 1); // the others stop at once, not when the main thread hears of it
  }
}

/**
 * The loop with core cycles recorded: one poll in SAMPLE_EVERY is timed and
 * counted busy when its stream's rx or tx counter moved, idle otherwise, and
 * stands for SAMPLE_EVERY polls of its kind (busy time and the poll counts are
 * estimates; the other polls carry no bookkeeping, which alone cost 10 % of
 * io's rate). The lcore's total time is read from the clock and published
 * every STOP_CHECK_EVERY passes and at the end.
 */
function timedLoop(c: number): void {
  const f64 = heap.f64;
  const t0 = performance.now();
  let untimed = SAMPLE_EVERY;
  for (let pass = 1; ; pass++) {
    for (let i = 0; i < nb; i++) {
      const fs = streams[i]!;
      if (--untimed !== 0) {
        engine.fwd(fs);
        continue;
      }
      untimed = SAMPLE_EVERY;
      const before = f64[fs.stats + FS_RX_PACKETS]! + f64[fs.stats + FS_TX_PACKETS]!;
      const t = performance.now();
      engine.fwd(fs);
      const ns = (performance.now() - t) * 1e6;
      if (f64[fs.stats + FS_RX_PACKETS]! + f64[fs.stats + FS_TX_PACKETS]! !== before) {
        f64[c + LCC_BUSY_NS] = f64[c + LCC_BUSY_NS]! + ns * SAMPLE_EVERY;
        f64[c + LCC_BUSY_POLLS] = f64[c + LCC_BUSY_POLLS]! + SAMPLE_EVERY;
      } else {
        f64[c + LCC_IDLE_POLLS] = f64[c + LCC_IDLE_POLLS]! + SAMPLE_EVERY;
      }
    }
    if (pass % STOP_CHECK_EVERY === 0) {
      f64[c + LCC_TOTAL_NS] = (performance.now() - t0) * 1e6;
      if (Atomics.load(ctl, CTL_STOP) !== 0) break;
      gc.check();
    }
  }
  f64[c + LCC_TOTAL_NS] = (performance.now() - t0) * 1e6;
}

const gcCount = gc.finish();

/** Buffered output goes out and files this lcore opened close, then every pool it touched gets its cached mbufs back. */
function release(): void {
  for (const fs of streams) {
    fs.txq.flush?.();
    fs.rxq.release?.();
  }
  for (let id = 0; id < heap.nbPools; id++) Mempool.byId(heap, id)?.flushCache();
}
if (failed) {
  try {
    release();
  } catch {
    // The loop's failure is the news; a queue it left broken may refuse to flush.
  }
  throw failure;
}
release();
parentPort!.postMessage({ lcoreId, done: true, gc: gcCount } satisfies LcoreDone);
