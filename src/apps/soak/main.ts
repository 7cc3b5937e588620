/**
 * `dpkit soak --minutes N [--out DIR] [--period S] [--ci]` (`npm run soak`):
 * forwarding for N minutes on every driver pair that needs no peer outside
 * this process (net_null, net_ring with packets circulating, net_pcap
 * replaying a capture with infinite_rx, net_vhost and virtio_user paired in
 * process, two cabled net_nicsim ports), each a testpmd with one forwarding
 * lcore, while the main thread samples RSS, V8 heap, mbufs in flight, open
 * fds and packets received every few seconds. Writes soak.json and soak.svg
 * in DIR and fails (exit 1) when memory grows past its bound (soak.ts), fds
 * drift, traffic stops, or a pool is not full once the ports close.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseTestpmdArgs } from '../testpmd/options.js';
import { Testpmd } from '../testpmd/testpmd.js';
import { ArgError } from '../../errors.js';
import { DEFAULT_BOUNDS, judge, plot, type SoakBounds, type SoakSample } from './soak.js';

const USAGE = `Usage: dpkit soak --minutes N [--out DIR] [--period S] [--floor MIB] [--ci]
  --minutes N   how long to forward (a number > 0)
  --out DIR     where soak.json and soak.svg go (default: soak)
  --period S    seconds between samples (default: 5, or 2 for runs under 10 minutes)
  --floor MIB   growth always allowed, whatever 2 % of the start is (default: 4 MiB);
                a run of seconds on a shared machine is a check of the harness, not of memory
  --ci          one line per verdict, no per-sample lines
`;

/** A 64-byte UDP frame, repeated: the capture net_pcap replays. */
function capture(): Uint8Array {
  const frames = 32;
  const out = new Uint8Array(24 + frames * (16 + 64));
  const v = new DataView(out.buffer);
  v.setUint32(0, 0xa1b2c3d4, true);
  v.setUint16(4, 2, true);
  v.setUint16(6, 4, true);
  v.setUint32(16, 65535, true);
  v.setUint32(20, 1, true); // Ethernet
  for (let i = 0; i < frames; i++) {
    const r = 24 + i * 80;
    v.setUint32(r + 8, 64, true);
    v.setUint32(r + 12, 64, true);
    const f = r + 16;
    out.set([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17], f);
    out.set([10, 0, 0, i, 10, 0, 1, i], f + 26);
  }
  return out;
}

/** The driver pairs the soak forwards on, as testpmd command lines. */
function pairs(dir: string): { name: string; argv: string[]; txFirst: number }[] {
  const pcap = join(dir, 'replay.pcap');
  writeFileSync(pcap, capture());
  const common = ['--', '--total-num-mbufs=8192', '--forward-mode=io'];
  return [
    { name: 'null', argv: ['-l', '0-1', '--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64', ...common], txFirst: 0 },
    { name: 'ring', argv: ['-l', '0-1', '--vdev', 'net_ring0', '--vdev', 'net_ring1', ...common], txFirst: 4 },
    { name: 'pcap', argv: ['-l', '0-1', '--vdev', `net_pcap0,rx_pcap=${pcap},infinite_rx=1,tx_pcap=/dev/null`, '--vdev', `net_pcap1,rx_pcap=${pcap},infinite_rx=1,tx_pcap=/dev/null`, ...common], txFirst: 0 },
    // Both ends of one vhost-user path in one testpmd pair in process (vhost/in-process.ts): no socket, no peer.
    { name: 'vhost', argv: ['-l', '0-1', '--vdev', `net_vhost0,iface=${join(dir, 'soak-vhost.sock')}`, '--vdev', `virtio_user0,path=${join(dir, 'soak-vhost.sock')}`, ...common], txFirst: 4 },
    // Two cabled NIC models: descriptor rings, lazy tx reclaim, and the model's hardware thread.
    { name: 'nicsim', argv: ['-l', '0-1', '--vdev', 'net_nicsim0,peer=net_nicsim1', '--vdev', 'net_nicsim1', ...common], txFirst: 4 },
  ];
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

export async function soakMain(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { minutes: { type: 'string' }, out: { type: 'string', default: 'soak' }, period: { type: 'string' }, floor: { type: 'string' }, ci: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } } });
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
  const bounds: SoakBounds = { ...DEFAULT_BOUNDS, warmup: Math.min(DEFAULT_BOUNDS.warmup, seconds / 3), floorBytes: floorMiB * 2 ** 20 };
  const say = (line: string) => process.stdout.write(line + '\n');

  const runs = pairs(out).map((p) => ({ ...p, pmd: new Testpmd(parseTestpmdArgs(p.argv, [0, 1]), () => {}) }));
  const problems: string[] = [];
  const samples: SoakSample[] = [];
  /** Each pair's packets received when the warm-up ended and at the last sample: every pair must forward, not just the sum. */
  const rxAtWarm = new Map<string, number>();
  const rxAtEnd = new Map<string, number>();
  // A soak that outlives its minutes by this much has hung (a port that never stops, a worker
  // that never answers): one line and exit, rather than holding CI until its limit.
  const overrun = 180;
  const watchdog = setTimeout(() => {
    say(`soak: FAIL: still running ${overrun} s after its ${minutes} min: hung after ${samples.length} samples${samples.length ? `, the last at ${samples[samples.length - 1]!.t.toFixed(0)} s` : ''}`);
    process.exit(1);
  }, (seconds + overrun) * 1000);
  watchdog.unref();

  try {
    for (const r of runs) await r.pmd.start(r.txFirst);
    const failed = Promise.race(runs.map((r) => r.pmd.failed().catch((e: Error) => `${r.name}: ${e.message}`)));
    let failure: string | undefined;
    void failed.then((m) => (failure = m));
    const t0 = performance.now();
    say(`soak: ${runs.map((r) => r.name).join(', ')} forwarding for ${minutes} min, a sample every ${period} s, warm-up ${bounds.warmup} s`);
    for (let k = 1; (performance.now() - t0) / 1000 < seconds && failure === undefined; k++) {
      await sleep(Math.max(0, t0 + k * period * 1000 - performance.now()));
      const m = process.memoryUsage();
      const s: SoakSample = {
        t: (performance.now() - t0) / 1000,
        rss: m.rss,
        heapUsed: m.heapUsed,
        inUse: runs.reduce((a, r) => a + r.pmd.pool.inUse(), 0),
        fds: openFds(),
        rxPackets: runs.reduce((a, r) => a + r.pmd.fwdStats().total.rxPackets, 0),
      };
      samples.push(s);
      for (const r of runs) {
        const rx = r.pmd.fwdStats().total.rxPackets;
        if (s.t < bounds.warmup || !rxAtWarm.has(r.name)) rxAtWarm.set(r.name, rx);
        rxAtEnd.set(r.name, rx);
      }
      if (!values.ci) say(`soak: ${s.t.toFixed(0)} s rss ${(s.rss / 2 ** 20).toFixed(1)} MiB heap ${(s.heapUsed / 2 ** 20).toFixed(1)} MiB in flight ${s.inUse} fds ${s.fds} rx ${s.rxPackets}`);
    }
    if (failure !== undefined) problems.push(failure);
    for (const r of runs) if ((rxAtEnd.get(r.name) ?? 0) <= (rxAtWarm.get(r.name) ?? 0)) problems.push(`${r.name}: no packet received after the warm-up`);
  } finally {
    for (const r of runs) {
      try {
        if (r.pmd.forwarding) await r.pmd.stop();
        r.pmd.close(); // LeakError when a pool is not full
      } catch (e) {
        problems.push(`${r.name}: ${(e as Error).message}`);
      }
    }
  }
  const verdict = judge(samples, bounds);
  problems.push(...verdict.problems);
  const pass = problems.length === 0;
  const record = { minutes, period, bounds, pairs: runs.map((r) => ({ name: r.name, argv: r.argv, rxPackets: rxAtEnd.get(r.name) ?? 0 })), samples, trends: verdict.trends, problems, pass };
  writeFileSync(join(out, 'soak.json'), JSON.stringify(record, null, 2) + '\n');
  writeFileSync(join(out, 'soak.svg'), plot(samples, `dpkit soak: ${runs.map((r) => r.name).join(', ')}, ${minutes} min`, bounds.warmup));
  for (const t of verdict.trends) say(`soak: ${t.metric} ${t.ok ? 'flat' : 'GREW'}: ${(t.growth / 2 ** 20).toFixed(2)} MiB over the measured window (bound ${(t.bound / 2 ** 20).toFixed(2)} MiB)`);
  for (const p of problems) say(`soak: FAIL: ${p}`);
  say(`soak: ${pass ? 'pass' : 'fail'}; ${join(out, 'soak.json')}, ${join(out, 'soak.svg')}`);
  clearTimeout(watchdog);
  return pass ? 0 : 1;
}
