/**
 * RFC 2544 throughput search (section 26.1) and its NDR / PDR variants: the
 * highest rate at which the device under test loses no more than a loss
 * ratio of what it was offered (NDR: none; PDR: `lossRatio`), by binary
 * search on the rate. Each trial sends the streams for `trial` seconds with
 * generate(), then traffic stops, what is still in flight is drained from the
 * rx port until it has been idle `drainNs`, and only then are the counts read
 * (a warm-up run, drained and not counted, goes first):
 * counters read while traffic flows count packets in flight as lost.
 *
 * A trial where the generator itself did not offer what the schedule asked
 * (it fell behind, the pool was empty) proves nothing about the device: it is reported as
 * such and counts as a failure, so the search never credits a rate that was
 * not offered.
 */
import { ArgError } from '../errors.js';
import type { Burst } from '../eal/heap.js';
import { fmtPps, generate, monotonicClock, rateLink, type GenerateOptions, type GenReport, type GenTarget } from './generate.js';
import { parseRate } from './pacer.js';

/** What a search takes: generate()'s options without the rate, count and duration it sets per trial. */
export interface SearchOptions extends Omit<GenerateOptions, 'rate' | 'count' | 'duration' | 'latency' | 'onBurst'> {
  /** 'ndr' (no loss) or 'pdr' (loss up to `lossRatio`). */
  search: 'ndr' | 'pdr';
  /** pdr: the largest loss ratio a passing trial may have. Default 0.005 (0.5 %). */
  lossRatio?: number;
  /** The highest rate tried (total over the streams, split evenly), as `--rate` is written. */
  maxRate: string | number;
  /** The lowest rate worth a trial. Default: the resolution. */
  minRate?: string | number;
  /** The search stops when the pass/fail bracket is this narrow. Default 1 % of maxRate. */
  resolution?: string | number;
  /** Seconds each trial sends. Default 1. */
  trial?: number;
  /** The port the device returns traffic on (rx queue 0). Default the tx port. */
  rxPort?: number;
  /** After traffic stops, the rx port is drained until nothing came for this long. Default 10 ms. */
  drainNs?: number;
  /** Packets of a warm-up run before the first trial, drained and not counted (a cold run's first bursts leave late). Default 4 bursts; 0: none. */
  warmup?: number;
  /** Called after each trial (live reports, NDJSON lines). */
  onTrial?: (t: SearchTrial) => void;
}

/** One trial's account. */
export interface SearchTrial {
  /** 1, 2, … in the order run. */
  trial: number;
  /** The total rate asked, packets per second. */
  ratePps: number;
  /** Packets offered to the device: accepted by its tx queue or refused by it. */
  offered: number;
  /** Packets that came back on the rx port. */
  received: number;
  /** offered − received. */
  lost: number;
  /** lost / offered. */
  lossRatio: number;
  /** Whether the generator offered what the trial's schedule asked (within the tolerance; the pool never empty): a trial it did not keep fails. */
  generatorKept: boolean;
  /** Whether the trial passed: generator kept, loss within the threshold. */
  pass: boolean;
  /** The generator's own report of the trial. */
  gen: GenReport;
}

/** A search's result. */
export interface SearchReport {
  /** 'ndr' or 'pdr'. */
  search: 'ndr' | 'pdr';
  /** The loss ratio a trial was allowed. */
  lossRatio: number;
  /** The highest passing rate, packets per second; 0 when no trial passed. */
  ratePps: number;
  /** Whether some trial passed. */
  found: boolean;
  /** The rate just above it that failed (maxRate's when the first trial passed). */
  failedPps: number;
  /** Every trial, in order. */
  trials: SearchTrial[];
  /** One line: the result, or why there is none. */
  verdict: string;
}

/**
 * Binary search for the highest rate that passes: a trial at maxRate first
 * (it passing ends the search), then halving the bracket [pass, fail] until
 * it is narrower than the resolution.
 * @returns the result and every trial. Traffic is stopped and drained between trials.
 * @throws ArgError naming the option on a bad search option; generate()'s errors on a bad stream.
 */
export async function searchRate(target: GenTarget, opts: SearchOptions): Promise<SearchReport> {
  if (opts.search !== 'ndr' && opts.search !== 'pdr') throw new ArgError(`gen: --search ${String(opts.search)}: must be ndr or pdr`);
  const lossRatio = opts.search === 'ndr' ? 0 : (opts.lossRatio ?? 0.005);
  if (!(lossRatio >= 0 && lossRatio < 1)) throw new ArgError(`gen: --loss-ratio ${lossRatio}: must be in [0, 1)`);
  if (opts.search === 'ndr' && opts.lossRatio !== undefined && opts.lossRatio !== 0) throw new ArgError('gen: --loss-ratio goes with --search pdr (ndr allows no loss)');
  if (!Array.isArray(opts.streams) || opts.streams.length === 0) throw new ArgError('gen: no stream');
  if (opts.streams.some((s) => s.rate !== undefined)) throw new ArgError('gen: --search sets the streams\' rates: a searched stream may not name its own');
  // Rates as pps; bit rates (and N% of the tx port's link) are read with a 64-byte packet only for the bounds' units (packets are the streams').
  const link = rateLink(target.ethdev, opts.port ?? 0);
  const maxPps = parseRate(opts.maxRate, 64, 'gen: --search-max', link);
  const resolution = opts.resolution === undefined ? maxPps / 100 : parseRate(opts.resolution, 64, 'gen: --resolution', link);
  const minPps = opts.minRate === undefined ? resolution : parseRate(opts.minRate, 64, 'gen: --search-min', link);
  if (minPps > maxPps) throw new ArgError(`gen: --search-min ${fmtPps(minPps)} is above --search-max ${fmtPps(maxPps)}`);
  const trialS = opts.trial ?? 1;
  if (!(trialS > 0 && Number.isFinite(trialS))) throw new ArgError(`gen: --trial ${trialS}: must be a positive number of seconds`);
  const clock = opts.clock ?? monotonicClock;
  const drainNs = opts.drainNs ?? 10e6;
  const { ethdev, mbufs, heap } = target;
  const rxq = ethdev.rxQueue(opts.rxPort ?? opts.port ?? 0, 0);
  const burstSize = opts.burst ?? 32;
  const rxb: Burst = heap.burst(burstSize);
  const warmup = opts.warmup ?? 4 * burstSize;
  if (!(Number.isInteger(warmup) && warmup >= 0)) throw new ArgError(`gen: warmup ${warmup}: must be a count of packets`);
  const { search: _s, lossRatio: _l, maxRate: _x, minRate: _m, resolution: _r, trial: _t, rxPort: _p, drainNs: _d, warmup: _w, onTrial, ...genOpts } = opts;

  /** Receives and frees everything the port returns until it was idle drainNs. @returns how many came */
  const drain = async (): Promise<number> => {
    let got = 0;
    for (let idleSince = clock.now(); clock.now() - idleSince < drainNs; ) {
      const n = rxq.rxBurst(rxb, burstSize);
      if (n > 0) {
        mbufs.freeBulk(rxb, n);
        got += n;
        idleSince = clock.now();
      } else {
        await clock.sleep(0);
      }
    }
    return got;
  };

  const trials: SearchTrial[] = [];
  const run = async (pps: number): Promise<SearchTrial> => {
    await drain(); // nothing of an earlier trial (or before the search) counts in this one
    const perStream = pps / opts.streams.length;
    const gen = await generate(target, { ...genOpts, streams: opts.streams.map((s) => ({ ...s, rate: perStream })), duration: trialS });
    // Traffic has stopped: now what is in flight comes back, and only then are the counts read.
    const received = await drain();
    const offered = gen.streams.reduce((a, s) => a + s.sent + s.txDropped, 0);
    const lost = offered - received;
    // Everything due in the trial must have been offered (within the tolerance): a sender that fell
    // behind leaves packets unsent at the trial's end, and an empty pool leaves them unmade. Late
    // bursts that still went out in the trial count as offered (the report keeps their lateness).
    const tol = opts.tolerance ?? 0.001;
    const generatorKept = !gen.interrupted && gen.streams.every((s) => s.noMbuf === 0 && s.sent + s.txDropped >= s.planned * (1 - tol));
    const ratio = offered > 0 ? lost / offered : 1;
    const t: SearchTrial = { trial: trials.length + 1, ratePps: pps, offered, received, lost, lossRatio: ratio, generatorKept, pass: generatorKept && offered > 0 && ratio <= lossRatio, gen };
    trials.push(t);
    onTrial?.(t);
    return t;
  };

  // A warm-up, not counted: a cold run's first bursts leave late (first calls into the kernels).
  if (warmup > 0) await generate(target, { ...genOpts, streams: opts.streams.map((s) => ({ ...s, rate: maxPps / opts.streams.length })), count: warmup });
  let pass = 0;
  let fail = maxPps;
  if ((await run(maxPps)).pass) pass = maxPps;
  else {
    let lo = 0;
    let hi = maxPps;
    while (hi - lo > resolution && !opts.signal?.aborted) {
      // Never below minRate: when minRate fails, no rate passes.
      const mid = Math.max(minPps, (lo + hi) / 2);
      const t = await run(mid);
      if (t.pass) lo = mid;
      else hi = mid;
      if (!t.pass && mid === minPps) break;
    }
    pass = lo;
    fail = hi;
  }
  const found = pass > 0;
  const what = opts.search === 'ndr' ? 'NDR (no loss)' : `PDR (loss ≤ ${(lossRatio * 100).toPrecision(3)} %)`;
  const verdict = found
    ? `${what}: ${fmtPps(pass)}${pass === maxPps ? ' (the search maximum passed)' : `, ${fmtPps(fail)} failed`}, ${trials.length} trials of ${trialS} s`
    : `${what}: no rate passed, down to ${fmtPps(Math.min(...trials.map((t) => t.ratePps)))}, ${trials.length} trials of ${trialS} s`;
  return { search: opts.search, lossRatio, ratePps: pass, found, failedPps: fail, trials, verdict };
}
