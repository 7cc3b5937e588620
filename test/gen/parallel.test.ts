import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { init, type Eal } from '../../src/api/eal.js';
import { ArgError } from '../../src/errors.js';
import { generate, makeSources, planStreams, type GenStreamSpec } from '../../src/gen/generate.js';
import { generateOnLcores } from '../../src/api/generate-lcores.js';
import { makePacer } from '../../src/gen/pacer.js';
import { partPacer, partPlanned, partToStream, type StreamPart } from '../../src/gen/split.js';
import { portUp } from '../helpers.js';

/** A stream with one variable of every kind that can skip, a length list, and a random one. */
const VARIED: GenStreamSpec = {
  name: 'varied',
  eth: { src: '02:00:00:00:00:01', dst: '02:00:00:00:00:02' },
  ipv4: { src: '10.0.0.1', dst: '10.0.1.1' },
  size: [64, 100, 70, 1000, 65],
  vary: [
    { field: 'ipv4.src', mode: 'inc', count: 7, step: 3 },
    { field: 'udp.dst', mode: 'dec', min: 100, max: 150, step: 4 },
    { field: 'udp.src', mode: 'list', values: [1, 2, 3] },
  ],
};

function drain(eal: Eal, port: number, queue: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  const b = eal.burst(64);
  for (let n; (n = eal.ethdev.rxBurst(port, queue, b, 64)) > 0; ) {
    for (let i = 0; i < n; i++) out.push(eal.mbufs.read(b[i]!));
    eal.mbufs.freeBulk(b, n);
  }
  return out;
}

describe('gen split over lcores: the parts are the stream', () => {
  it('the parts send every packet of the schedule once, at its deadline', () => {
    const pacer = makePacer(1e6, { kind: 'poisson', seed: 7 }, 64, 't');
    for (const [parts, burst, planned] of [[2, 32, 1000], [3, 8, 24], [3, 8, 25], [4, 1, 3], [2, 32, 0]] as const) {
      const seen = new Array<number>(planned).fill(0);
      let total = 0;
      for (let index = 0; index < parts; index++) {
        const p: StreamPart = { index, parts, burst };
        const mine = partPlanned(planned, p);
        total += mine;
        const pp = partPacer(pacer, p);
        for (let j = 0; j < mine; j++) {
          const g = partToStream(p, j);
          assert.ok(g < planned, `${parts}x${burst}: part ${index} packet ${j} is the stream's ${g}`);
          seen[g]!++;
          assert.equal(pp.deadline(j), pacer.deadline(g));
        }
      }
      assert.equal(total, planned);
      assert.ok(seen.every((c) => c === 1), `${parts}x${burst}x${planned}: each packet once`);
    }
    assert.equal(partPlanned(Infinity, { index: 1, parts: 2, burst: 32 }), Infinity);
  });

  it("the parts' packets, put back in burst order, are byte for byte one sender's", () => {
    const eal = init({ lcores: [0], mbufs: 1023, memory: 8 << 20 });
    try {
      const room = eal.pool.bufLen - eal.pool.headroom;
      const planned = planStreams([VARIED], 1e6, new Uint8Array(6), room, 300, Infinity);
      const burst = 8;
      const whole = makeSources(eal.heap, planned)[0]!;
      const parts = [0, 1, 2].map((index) => makeSources(eal.heap, planned, { index, parts: 3, burst })[0]!);
      assert.equal(parts.reduce((a, s) => a + s.planned, 0), 300);
      const b = eal.burst(burst);
      const fill = (src: typeof whole, first: number, n: number): Uint8Array[] => {
        assert.equal(eal.pool.allocBulk(b, n), n);
        src.fill(b, first, n);
        const out = Array.from({ length: n }, (_, i) => eal.mbufs.read(b[i]!));
        eal.mbufs.freeBulk(b, n);
        return out;
      };
      const next = [0, 0, 0];
      for (let g = 0; g < 300; g += burst) {
        const n = Math.min(burst, 300 - g);
        const k = (g / burst) % 3;
        const got = fill(parts[k]!, next[k]!, n);
        next[k]! += n;
        const want = fill(whole, g, n);
        got.forEach((pkt, i) => assert.deepEqual(pkt, want[i], `packet ${g + i}`));
      }
    } finally {
      void eal.close();
    }
  });
});

describe('gen on lcores', () => {
  it('two lcores send one stream on two queues: the same packets as one sender, every one accounted for, pools full', async () => {
    // Two lcores on the main lcore's CPUs: the test needs no spare core (counts, not rates, are asserted).
    const eal = init({ lcores: [0, 1, 2], vdevs: ['net_ring0', 'net_ring1'], mbufs: 4095, memory: 16 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0, 2);
      portUp(eal.ethdev, eal.pool, 1, 1);
      const r = await generateOnLcores(eal, { streams: [VARIED], rate: '200kpps', count: 900, burst: 16, port: 0, lcores: [1, 2] });
      const s = r.streams[0]!;
      assert.deepEqual([s.planned, s.sent, s.txDropped, s.noMbuf], [900, 900, 0, 0], r.verdict);
      const q0 = drain(eal, 0, 0);
      const q1 = drain(eal, 0, 1);
      // Burst b of the stream went out on queue b mod 2.
      // 57 bursts of 16 (the last of 4): 29 on queue 0, 28 on queue 1.
      assert.deepEqual([q0.length, q1.length], [28 * 16 + 4, 28 * 16]);
      const merged: Uint8Array[] = [];
      for (let b = 0; b * 16 < 900; b++) merged.push(...(b % 2 === 0 ? q0 : q1).splice(0, 16));
      assert.equal(merged.length, 900);
      await generate(eal, { streams: [VARIED], rate: '1Mpps', count: 900, burst: 16, port: 1 });
      const one = drain(eal, 1, 0);
      assert.equal(one.length, 900);
      merged.forEach((pkt, i) => assert.deepEqual(pkt, one[i], `packet ${i}`));
    } finally {
      await eal.close(); // throws LeakError when an mbuf was not returned
    }
  });

  it('latency on every packet through a 2-queue ring: nothing lost, duplicated or reordered', async () => {
    const eal = init({ lcores: [0, 1, 2], vdevs: ['net_ring0'], mbufs: 4095, memory: 16 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0, 2);
      const r = await generateOnLcores(eal, { streams: [{ name: 'a' }, { name: 'b', size: 128 }], rate: '50kpps', count: 3000, latency: true });
      for (const s of r.streams) {
        assert.equal(s.sent, 3000);
        const l = s.latency!;
        assert.deepEqual([l.received, l.lost, l.duplicates, l.reordered], [3000, 0, 0, 0], s.name);
        assert.equal(l.firstSeq, 0);
        assert.equal(l.lastSeq, 2999);
      }
    } finally {
      await eal.close();
    }
  });

  it('refuses a port without a queue per lcore, and options that cannot cross threads, in one line', async () => {
    const eal = init({ lcores: [0, 1, 2], vdevs: ['net_null0'], mbufs: 1023, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0, 1);
      await assert.rejects(generateOnLcores(eal, { streams: [{}], count: 10 }), (e: unknown) => e instanceof ArgError && e.message === 'gen: port 0 has 1 tx queues: 2 lcores send on tx queues 0..1');
      await assert.rejects(generateOnLcores(eal, { streams: [{}], count: 10, lcores: [] }), (e: unknown) => e instanceof ArgError && /no worker lcore/.test(e.message));
      await assert.rejects(generateOnLcores(eal, { streams: [{}], count: 10, pool: eal.pool, lcores: [1] }), (e: unknown) => e instanceof ArgError && /drop pool/.test(e.message));
      await assert.rejects(generateOnLcores(eal, { streams: [{ size: 99999 }], count: 10, lcores: [1] }), (e: unknown) => e instanceof ArgError && /stream 'stream0'/.test(e.message));
    } finally {
      await eal.close();
    }
  });

  it('a stop signal ends every lcore: the report says interrupted and covers what was sent', async () => {
    const eal = init({ lcores: [0, 1, 2], vdevs: ['net_null0'], mbufs: 2047, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0, 2);
      const stop = new AbortController();
      const periods: number[] = [];
      const run = generateOnLcores(eal, { streams: [{}], rate: '100kpps', duration: 600, signal: stop.signal, period: 0.05, onPeriod: (p) => (periods.push(p.streams[0]!.sent), stop.abort()) });
      const r = await run;
      assert.equal(r.interrupted, true);
      assert.match(r.verdict, /^interrupted: /);
      assert.ok(periods.length >= 1);
      assert.ok(r.streams[0]!.sent >= periods[0]!);
    } finally {
      await eal.close();
    }
  });
});
