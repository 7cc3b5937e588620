/**
 * `npm run bench -- vhost`: the vhost enqueue-by-size study's table (DPDK's
 * vhost enqueue rewrite, measured per packet size). The host runs testpmd's txonly
 * on a net_vhost port and the guest its rxonly on a virtio_user port, each
 * on its own lcore and CPU (host on CPU 0, guest on CPU 1, as DPDK's pair
 * below); counted at the receiver. Then the reverse direction (guest
 * txonly -> host rxonly), the study's A/B (the avail index read once per
 * burst, dpkit's way, against once per packet), and DPDK's pair measured
 * the same way in the same run when dpdk-testpmd is installed: two processes
 * over a vhost-user socket, rxonly's Rx-pps second by second.
 */
import { rmSync } from 'node:fs';
import Table from 'cli-table3';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import { compareByMode } from '../src/apps/bench/modes.js';
import { bootstrapRatio, summarize, verdict } from '../src/apps/bench/stats.js';
import { runVhostUserPair } from '../src/apps/bench/matrix-run.js';
import type { VhostUserSide } from '../src/apps/bench/matrix.js';
import { dpdkTestpmd } from '../src/apps/bench/testpmd-run.js';
import type { BenchOptions, Benchmark, BenchCase } from '../src/apps/bench/types.js';
import { drivers } from '../src/drivers/index.js';
import { Ethdev } from '../src/ethdev/ethdev.js';
import { startWorker } from '../src/eal/spawn.js';
import { Heap } from '../src/eal/heap.js';
import { MBUF_DEFAULT_DATAROOM } from '../src/mem/mbuf-layout.js';
import { Mempool } from '../src/mem/mempool.js';

const SIZES = [64, 128, 256, 512, 1024, 1400, 1518];

type Direction = 'host-to-guest' | 'guest-to-host';

/** --txpkts for a frame of `size` bytes: one segment up to the data room, as testpmd would be told. */
const txPkts = (size: number): number[] => (size <= MBUF_DEFAULT_DATAROOM ? [size] : [MBUF_DEFAULT_DATAROOM, size - MBUF_DEFAULT_DATAROOM]);

function threads(dir: Direction, size: number, availPerPacket: boolean): ThreadSpec[] {
  const heap = Heap.create({ size: 256 << 20 });
  const hostPool = Mempool.create(heap, { name: 'host_pool', n: 16384, cacheSize: 256 });
  const guestPool = Mempool.create(heap, { name: 'guest_pool', n: 16384, cacheSize: 256 });
  const ethdev = new Ethdev(heap, drivers);
  const sock = `/tmp/dpkit-bench-vhost-${process.pid}.sock`;
  // net_stats=1: per-packet counters on both ports, the work DPDK's pair below always does.
  const host = ethdev.create(`net_vhost0,iface=${sock},net_stats=1${availPerPacket ? ',avail_per_packet=1' : ''}`);
  const guest = ethdev.create(`virtio_user0,path=${sock},net_stats=1`);
  for (const [p, pool] of [
    [host, hostPool],
    [guest, guestPool],
  ] as const) {
    ethdev.configure(p, 1, 1);
    ethdev.rxQueueSetup(p, 0, 0, pool);
    ethdev.txQueueSetup(p, 0, 0);
  }
  ethdev.start(host);
  ethdev.start(guest);
  const side = (p: number, pool: Mempool, engine: 'txonly' | 'rxonly', lcore: number, cpu: number, counted: boolean): ThreadSpec => ({
    counted,
    start: (ctl, thread) =>
      startWorker('vhost.worker', import.meta.url, {
        workerData: { ctl, thread, lcore, cpu, heap: heap.descriptor(), pool: pool.offset, engine, rxq: ethdev.rxQueue(p, 0).descriptor(), txq: ethdev.txQueue(p, 0).descriptor(), txPkts: txPkts(size) },
      }),
  });
  // Once both lcores have stopped: closed, the ports give back the mbufs their rings hold (a stop
  // keeps them posted for a restart, as DPDK's virtio does), and every case ends with both pools
  // full, as a testpmd run does.
  const after = () => {
    for (const p of [guest, host]) ethdev.stop(p);
    for (const p of [guest, host]) ethdev.close(p);
    for (const pool of [hostPool, guestPool]) {
      pool.flushCache();
      pool.checkLeaks();
    }
  };
  return dir === 'host-to-guest'
    ? [side(host, hostPool, 'txonly', 1, 0, false), { ...side(guest, guestPool, 'rxonly', 2, 1, true), after }]
    : [side(guest, guestPool, 'txonly', 1, 1, false), { ...side(host, hostPool, 'rxonly', 2, 0, true), after }];
}

/**
 * DPDK's pair: vhost txonly on CPU 0, virtio-user rxonly on CPU 1 (or the reverse roles), two
 * dpdk-testpmd processes over one vhost-user socket, run as the vhost-user preset runs its pairs.
 */
async function dpdkPair(bin: string, dir: Direction, size: number, opts: BenchOptions, inOrder = true): Promise<{ mpps: number; gc: number }> {
  const sock = `/tmp/dpkit-bench-dpdk-${process.pid}.sock`;
  rmSync(sock, { force: true });
  const txArgs = ['--forward-mode=txonly', `--txpkts=${txPkts(size).join(',')}`];
  const rxArgs = ['--forward-mode=rxonly'];
  const toGuest = dir === 'host-to-guest';
  const host: VhostUserSide = { system: 'dpdk', eal: ['--lcores', '0@0,1@0', '--vdev', `net_vhost0,iface=${sock},queues=1`], app: toGuest ? txArgs : rxArgs, measured: !toGuest };
  const guest: VhostUserSide = { system: 'dpdk', eal: ['--lcores', '0@1,1@1', '--vdev', `virtio_user0,path=${sock}${inOrder ? '' : ',in_order=0'}`], app: toGuest ? rxArgs : txArgs, measured: toGuest };
  const seconds = Math.max(1, Math.round(opts.durationMs / 1000));
  const warmup = Math.max(1, Math.round(opts.warmupMs / 1000));
  try {
    return { mpps: await runVhostUserPair(host, guest, sock, { seconds, warmup, dpdk: bin }), gc: 0 };
  } finally {
    rmSync(sock, { force: true });
  }
}

export const benchmark: Benchmark = {
  name: 'vhost',
  title: 'vhost: txonly on one side of a vhost/virtio pair, rxonly on the other, each on its own lcore; counted at the receiver',
  defaults: { reps: 5, durationMs: 3000, warmupMs: 1000 },
  // The pair's two CPUs pass every ring index and buffer between them: its rate is bimodal here.
  probe: true,
  cases: (opts) => {
    const sizes = opts.quick ? [64, 1518] : SIZES;
    // `--dpdk PATH` (repeatable) names the DPDK builds to compare with; without it, the one on PATH.
    const onPath = dpdkTestpmd();
    const builds = opts.dpdk?.length ? opts.dpdk.map((b) => ({ name: b.name, path: b.path })) : onPath ? [{ name: 'DPDK', path: onPath }] : [];
    const cases: BenchCase[] = [];
    for (const dir of ['host-to-guest', 'guest-to-host'] as const) {
      for (const size of sizes) {
        cases.push({ name: `${dir} ${size} B dpkit`, params: { dir, size, system: 'dpkit', avail: 'burst' }, threads: () => threads(dir, size, false) });
        if (dir === 'host-to-guest') cases.push({ name: `${dir} ${size} B dpkit avail-per-packet`, params: { dir, size, system: 'dpkit', avail: 'packet' }, threads: () => threads(dir, size, true) });
        for (const b of builds) {
          cases.push({ name: `${dir} ${size} B ${b.name}`, params: { dir, size, system: 'dpdk', build: b.name }, measure: (o) => dpdkPair(b.path, dir, size, o) });
          // DPDK's virtio-user negotiates VIRTIO_F_IN_ORDER by default, as dpkit's does; the guest's
          // sends are where it shows, so that direction also gets DPDK without it, for scale.
          if (dir === 'guest-to-host') cases.push({ name: `${dir} ${size} B ${b.name} in_order=0`, params: { dir, size, system: 'dpdk-no-in-order', build: b.name }, measure: (o) => dpdkPair(b.path, dir, size, o, false) });
        }
      }
    }
    return cases;
  },
  summary: (results) => {
    const find = (dir: string, size: number, system: string, avail?: string, build?: string) =>
      results.find((r) => r.params.dir === dir && r.params.size === size && r.params.system === system && (avail === undefined || r.params.avail === avail) && (build === undefined || r.params.build === build));
    const fmt = (x: number) => x.toFixed(2);
    const lines: string[] = [];
    const builds = [...new Set(results.filter((r) => r.params.system === 'dpdk').map((r) => String(r.params.build)))];
    for (const dir of ['host-to-guest', 'guest-to-host']) {
      // Per DPDK build: its Mpps, dpkit / it with its interval and verdict (and, guest to host, the same without in_order).
      const groups = builds.flatMap((b) => [{ build: b, system: 'dpdk', label: b }, ...(dir === 'guest-to-host' && results.some((r) => r.params.system === 'dpdk-no-in-order' && r.params.build === b && r.samples.length > 0) ? [{ build: b, system: 'dpdk-no-in-order', label: `${b} in_order=0` }] : [])]);
      const head = ['size (B)', 'dpkit Mpps', 'Gbit/s', ...groups.flatMap((g) => [`${g.label} Mpps`, `dpkit / it (95 % CI)`, 'verdict'])];
      const t = new Table({ head, style: { head: [], border: [] } });
      const modes: string[] = [];
      for (const size of SIZES) {
        const a = find(dir, size, 'dpkit', 'burst');
        if (!a || a.samples.length === 0) continue;
        const m = summarize(a.samples).median;
        const gbps = (m * 1e6 * (size + 20) * 8) / 1e9; // on the wire: preamble and gap included
        const row: (string | number)[] = [size, fmt(m), fmt(gbps)];
        for (const g of groups) {
          const d = find(dir, size, g.system, undefined, g.build);
          if (!d || d.samples.length === 0) {
            row.push('-', '-', '-');
            continue;
          }
          const ci = bootstrapRatio(d.samples, a.samples);
          row.push(fmt(summarize(d.samples).median), `${fmt(ci.ratio)} (${fmt(ci.lo)}..${fmt(ci.hi)})`, a.samples.length < 5 ? 'too few runs' : verdict(ci));
        }
        t.push(row);
        for (const g of groups) {
          const d = find(dir, size, g.system, undefined, g.build);
          const byMode = d && compareByMode(d, a);
          if (byMode) modes.push(`  ~ ${dir} ${size} B, dpkit vs ${g.label} by mode: ${byMode.map((k) => `${k.mode} ${fmt(k.a)} : ${fmt(k.b)} (${fmt(k.ratio)}, ${fmt(k.lo)}..${fmt(k.hi)}, ${k.verdict})`).join('; ')}`);
        }
      }
      lines.push(`${dir === 'host-to-guest' ? 'Host txonly -> guest rxonly (the vhost enqueue study)' : 'Guest txonly -> host rxonly'}\n${t.toString()}${modes.map((m) => `\n${m}`).join('')}`);
    }
    const ab = new Table({ head: ['size (B)', 'avail idx per burst', 'per packet', 'per burst vs per packet', '95 % CI', 'verdict'], style: { head: [], border: [] } });
    for (const size of SIZES) {
      const a = find('host-to-guest', size, 'dpkit', 'packet');
      const b = find('host-to-guest', size, 'dpkit', 'burst');
      if (!a || !b || a.samples.length === 0) continue;
      const ci = bootstrapRatio(a.samples, b.samples);
      const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)} %`;
      ab.push([size, fmt(summarize(b.samples).median), fmt(summarize(a.samples).median), pct(ci.ratio), `${pct(ci.lo)}..${pct(ci.hi)}`, b.samples.length < 5 ? 'too few runs' : verdict(ci)]);
    }
    lines.push(`Avail index read once per burst (dpkit) against once per packet, host -> guest\n${ab.toString()}`);
    return lines.join('\n\n') + '\n';
  },
};
