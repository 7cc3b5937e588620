/**
 * `dpkit soak --minutes N [--out DIR] [--period S] [--ci]` (`npm run soak`):
 * forwarding for N minutes on every driver pair that needs no peer outside
 * this process (net_null, net_ring with packets circulating, net_pcap
 * replaying a capture with infinite_rx, net_vhost and virtio_user paired in
 * process, two cabled net_nicsim ports, a net_memif server and client over a
 * socket in DIR), each a testpmd with one forwarding lcore, while the main
 * thread samples RSS, V8 heap, mbufs in flight, open fds, packets received
 * and garbage-collection pauses (its own and the lcores') every few
 * seconds. Writes soak.json and soak.svg in DIR and fails (exit 1) when
 * memory grows past its bound (soak.ts), fds drift, traffic stops, the
 * rate falls, a forwarding lcore pauses past its bound, a pool is not full
 * once the ports close, or a socket file or fd outlives them.
 */
import { mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseTestpmdArgs } from '../testpmd/options.js';
import { Testpmd } from '../testpmd/testpmd.js';
import { ArgError } from '../../errors.js';
import { addGcSpan, emptyGcSpan, type GcSpan } from '../testpmd/gc.js';
import { closePairs, pairs } from './pairs.js';
import { DEFAULT_BOUNDS, judge, plot, type GcSummary, type SoakBounds, type SoakSample } from './soak.js';

const USAGE = `Usage: dpkit soak --minutes N [--out DIR] [--period S] [--floor MIB] [--pause MS] [--pairs LIST] [--ci]
  --minutes N   how long to forward (a number > 0)
  --out DIR     where soak.json and soak.svg go (default: soak)
  --period S    seconds between samples (default: 5, or 2 for runs under 10 minutes)
  --floor MIB   growth always allowed, whatever 2 % of the start is (default: 4 MiB);
                a run of seconds on a shared machine is a check of the harness, not of memory
  --pause MS    longest collection allowed on a forwarding lcore after the warm-up (default: 10)
  --pairs LIST  only these pairs, by name (default: all: null,ring,pcap,vhost,nicsim,memif)
  --ci          one line per verdict, no per-sample lines
`;

/** How long a pair's ports have to come up (memif connects over its socket through the event loop). */
const LINK_WAIT_MS = 10_000;

/** Resolves true once every port of `pmd` is up, false after LINK_WAIT_MS. */
async function linksUp(pmd: Testpmd): Promise<boolean> {
  const end = performance.now() + LINK_WAIT_MS;
  while (!pmd.ports.every((p) => pmd.ethdev.linkUp(p))) {
    if (performance.now() > end) return false;
    await sleep(10);
  }
  return true;
}

/** The main thread's garbage collections, from `gc` performance entries, taken a sample at a time. */
class MainGc {
  private span = emptyGcSpan();
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.add(e.duration);
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  private add(ms: number): void {
    this.span.count++;
    this.span.totalMs += ms;
    this.span.maxMs = Math.max(this.span.maxMs, ms);
    this.span.pausesMs.push(ms);
  }

  /** The collections since the last take. */
  take(): GcSpan {
    for (const e of this.observer.takeRecords()) this.add(e.duration);
    const s = this.span;
    this.span = emptyGcSpan();
    return s;
  }

  disconnect(): void {
    this.observer.disconnect();
  }
}

/** `soak: gc lcores: 0 collections …`: one kind of thread's pauses over the measured window. */
function gcLine(g: GcSummary, bounds: SoakBounds): string {
  const who = g.kind === 'main' ? 'main thread' : `forwarding lcores (bound ${bounds.lcorePauseMs} ms a pause)`;
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  return `soak: gc ${who}: ${g.count} collections, pause p50 ${ms(g.p50Ms)} p99 ${ms(g.p99Ms)} max ${ms(g.maxMs)}, ${(g.fraction * 100).toFixed(3)} % of the time`;
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Each open fd as `fd -> what it is` (`anon_inode:[eventfd]`, a path, `socket:[...]`): what a leak line names. */
function fdTargets(): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed since the listing (the listing's own fd among them)
    }
    out.add(`${fd} -> ${target}`);
  }
  return out;
}

export async function soakMain(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { minutes: { type: 'string' }, out: { type: 'string', default: 'soak' }, period: { type: 'string' }, floor: { type: 'string' }, pause: { type: 'string' }, pairs: { type: 'string' }, ci: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const minutes = Number(values.minutes);
  if (values.minutes === undefined || !Number.isFinite(minutes) || minutes <= 0) throw new ArgError(`soak: --minutes ${values.minutes ?? '(missing)'}: expected a number of minutes > 0`);
  const seconds = minutes * 60;
  const period = values.period === undefined ? (minutes < 10 ? 2 : 5) : Number(values.period);
  if (!Number.isFinite(period) || period <= 0 || period > seconds) throw new ArgError(`soak: --period ${values.period}: expected seconds in (0, ${seconds}]`);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  // Short runs (CI's minute) leave a third to warm up rather than the whole minute.
  const floorMiB = values.floor === undefined ? DEFAULT_BOUNDS.floorBytes / 2 ** 20 : Number(values.floor);
  if (!Number.isFinite(floorMiB) || floorMiB < 0) throw new ArgError(`soak: --floor ${values.floor}: expected MiB >= 0`);
  const pauseMs = values.pause === undefined ? DEFAULT_BOUNDS.lcorePauseMs : Number(values.pause);
  if (!Number.isFinite(pauseMs) || pauseMs <= 0) throw new ArgError(`soak: --pause ${values.pause}: expected ms > 0`);
  const bounds: SoakBounds = { ...DEFAULT_BOUNDS, warmup: Math.min(DEFAULT_BOUNDS.warmup, seconds / 3), floorBytes: floorMiB * 2 ** 20, lcorePauseMs: pauseMs };
  const say = (line: string) => process.stdout.write(line + '\n');

  // The first write to a piped stdout opens /dev/null (libuv): done before the count, it is no pair's.
  process.stdout.write('');
  const fdsBefore = openFds();
  const targetsBefore = fdTargets();
  const all = pairs(out, say);
  const only = values.pairs?.split(',');
  const unknown = only?.filter((n) => !all.some((p) => p.name === n)) ?? [];
  if (unknown.length || only?.length === 0) throw new ArgError(`soak: --pairs ${values.pairs}: expected names from ${all.map((p) => p.name).join(',')}`);
  const runs = all.filter((p) => !only || only.includes(p.name)).map((p) => ({ ...p, pmd: new Testpmd(parseTestpmdArgs(p.argv, [0, 1]), () => {}) }));
  const problems: string[] = [];
  const mainGc = new MainGc();
  const samples: SoakSample[] = [];
  // A soak that outlives its minutes by this much has hung (a port that never stops, a worker
  // that never answers): one line and exit, rather than holding CI until its limit.
  const overrun = 180;
  const watchdog = setTimeout(() => {
    say(`soak: FAIL: still running ${overrun} s after its ${minutes} min: hung after ${samples.length} samples${samples.length ? `, the last at ${samples[samples.length - 1]!.t.toFixed(0)} s` : ''}`);
    process.exit(1);
  }, (seconds + overrun) * 1000);
  watchdog.unref();

  try {
    for (const r of runs) {
      if (!(await linksUp(r.pmd))) problems.push(`${r.name}: a port's link still down ${LINK_WAIT_MS / 1000} s after it started`);
      await r.pmd.start(r.txFirst);
    }
    mainGc.take(); // the start-up's collections are no sample's
    const failed = Promise.race(runs.map((r) => r.pmd.failed().catch((e: Error) => `${r.name}: ${e.message}`)));
    let failure: string | undefined;
    void failed.then((m) => (failure = m));
    const t0 = performance.now();
    say(`soak: ${runs.map((r) => r.name).join(', ')} forwarding for ${minutes} min, a sample every ${period} s, warm-up ${bounds.warmup} s`);
    for (let k = 1; (performance.now() - t0) / 1000 < seconds && failure === undefined; k++) {
      await sleep(Math.max(0, t0 + k * period * 1000 - performance.now()));
      const lcores = emptyGcSpan();
      let nbLcores = 0;
      for (const answers of await Promise.all(runs.map((r) => r.pmd.lcoreGc()))) {
        for (const a of answers) addGcSpan(lcores, a.gc);
        nbLcores += answers.length;
      }
      const m = process.memoryUsage();
      const rxByPair = runs.map((r) => r.pmd.fwdStats().total.rxPackets);
      const s: SoakSample = {
        t: (performance.now() - t0) / 1000,
        rss: m.rss,
        heapUsed: m.heapUsed,
        inUse: runs.reduce((a, r) => a + r.pmd.pool.inUse(), 0),
        fds: openFds(),
        rxPackets: rxByPair.reduce((a, b) => a + b, 0),
        rxByPair,
        gc: { main: mainGc.take(), lcores, nbLcores },
      };
      samples.push(s);
      if (!values.ci) say(`soak: ${s.t.toFixed(0)} s rss ${(s.rss / 2 ** 20).toFixed(1)} MiB heap ${(s.heapUsed / 2 ** 20).toFixed(1)} MiB in flight ${s.inUse} fds ${s.fds} rx ${s.rxPackets} gc main ${s.gc.main.count} (max ${s.gc.main.maxMs.toFixed(1)} ms) lcores ${s.gc.lcores.count} (max ${s.gc.lcores.maxMs.toFixed(1)} ms)`);
    }
    if (failure !== undefined) problems.push(failure);
  } finally {
    problems.push(...(await closePairs(runs)));
    mainGc.disconnect();
  }
  // Every port closed, every lcore's worker gone: what they opened is closed too.
  const fdsAfter = openFds();
  if (fdsAfter > fdsBefore) {
    const added = [...fdTargets()].filter((t) => !targetsBefore.has(t));
    problems.push(`open fds went from ${fdsBefore} before the pairs started to ${fdsAfter} once they closed (new: ${added.join(', ') || 'none by target'})`);
  }
  const verdict = judge(samples, bounds, runs.map((r) => r.name));
  problems.push(...verdict.problems);
  const pass = problems.length === 0;
  // collections: on the pair's forwarding lcore over the whole run, start-up included (null when it did not stop cleanly).
  const pairsOut = runs.map((r, k) => ({ name: r.name, argv: r.argv, rxPackets: samples.length ? samples[samples.length - 1]!.rxByPair[k]! : 0, collections: r.pmd.gcOfLcore.size ? [...r.pmd.gcOfLcore.values()].reduce((a, b) => a + b, 0) : null }));
  const record = { minutes, period, bounds, pairs: pairsOut, samples, trends: verdict.trends, rate: verdict.rate, gc: verdict.gc, problems, pass };
  writeFileSync(join(out, 'soak.json'), JSON.stringify(record, null, 2) + '\n');
  writeFileSync(join(out, 'soak.svg'), plot(samples, `dpkit soak: ${runs.map((r) => r.name).join(', ')}, ${minutes} min`, bounds.warmup, bounds.lcorePauseMs));
  for (const t of verdict.trends) say(`soak: ${t.metric} ${t.ok ? 'flat' : 'GREW'}: ${(t.growth / 2 ** 20).toFixed(2)} MiB over the measured window (bound ${(t.bound / 2 ** 20).toFixed(2)} MiB)`);
  const r = verdict.rate;
  say(`soak: rate ${(r.p50 / 1e6).toFixed(1)} Mpps median over the sample intervals [${(r.min / 1e6).toFixed(1)}..${(r.max / 1e6).toFixed(1)}], fitted change over the measured window ${(r.change * 100).toFixed(1)} % (reported)`);
  const moved = r.quarters.map((c) => `${c.name} ${(c.head / 1e6).toFixed(2)} -> ${(c.tail / 1e6).toFixed(2)} (${(c.change * 100).toFixed(1)} %)`).join(', ');
  say(`soak: rate, first to last quarter, Mpps (summed: its ceiling; each pair: its median while the machine ran fast): ${moved}; ${r.judged ? `judged, bound ${(bounds.rateDrop * 100).toFixed(0)} %` : `not judged: a quarter of the window is under ${bounds.rateQuarter} s`}`);
  for (const g of verdict.gc) say(gcLine(g, bounds));
  for (const p of problems) say(`soak: FAIL: ${p}`);
  say(`soak: ${pass ? 'pass' : 'fail'}; ${join(out, 'soak.json')}, ${join(out, 'soak.svg')}`);
  clearTimeout(watchdog);
  return pass ? 0 : 1;
}
