import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { init } from '../../src/api/eal.js';
import { generate, type GenPeriodReport } from '../../src/gen/generate.js';
import { assertFull, portUp } from '../helpers.js';
import { fakeClock } from './clock.js';

async function withEal(vdev: string, fn: (eal: ReturnType<typeof init>) => Promise<void>): Promise<void> {
  const eal = init({ lcores: [0], vdevs: [vdev], mbufs: 4095, memory: 8 << 20 });
  try {
    portUp(eal.ethdev, eal.pool, 0);
    await fn(eal);
  } finally {
    await eal.close(); // throws LeakError when an mbuf was not returned
  }
}

describe('gen: honesty counters', () => {
  it('a ring nobody drains fills: the refused packets are freed, counted, and the rate is reported not kept', async () => {
    await withEal('net_ring0', async (eal) => {
      const r = await generate(eal, { streams: [{ name: 'flood' }], rate: '10Mpps', count: 3000, clock: fakeClock(10) });
      const s = r.streams[0]!;
      assert.equal(s.sent, 1023, 'the ring holds 1023');
      assert.equal(s.txDropped, 3000 - 1023);
      assert.equal(r.kept, false);
      assert.match(r.verdict, /^rate NOT kept: stream 'flood': 1977 refused by the tx queue \(ring full\)/);
      const burst = eal.burst(64);
      for (let n; (n = eal.ethdev.rxBurst(0, 0, burst, 64)) > 0; ) eal.mbufs.freeBulk(burst, n);
    });
  });

  it('a sender slower than the schedule is late, stretches, and says so', async () => {
    await withEal('net_null0', async (eal) => {
      // Every clock read costs 200 us: the 1 Mpps schedule falls behind by more than the 100 us allowed.
      const r = await generate(eal, { streams: [{}], rate: '1Mpps', count: 2000, burst: 8, clock: fakeClock(200_000) });
      const s = r.streams[0]!;
      assert.equal(s.sent, 2000);
      assert.ok(s.late > 0 && s.maxLateNs > 100_000, `late ${s.late}, max ${s.maxLateNs} ns`);
      assert.ok(s.achievedPps < s.askedPps * 0.999);
      assert.equal(r.kept, false);
      assert.match(r.verdict, /^rate NOT kept: stream 'stream0': achieved [\d.]+ kpps of 1\.000 Mpps/);
    });
  });

  it('a rate far past what the sender can do still ends at the duration (the sender returns between bursts)', async () => {
    await withEal('net_null0', async (eal) => {
      // 5 million packets due in 1 ms of a clock that moves 100 ns a read: at most a few thousand bursts fit.
      const r = await generate(eal, { streams: [{}, { name: 'second' }], rate: '5000Mpps', duration: 0.001, clock: fakeClock(100) });
      assert.equal(r.kept, false);
      assert.ok(r.elapsedNs < 2e6, `ran ${r.elapsedNs} ns of a 1 ms duration`);
      for (const s of r.streams) {
        assert.equal(s.planned, 5e6);
        assert.ok(s.sent > 0 && s.sent < 5e6, `${s.name}: sent ${s.sent}`);
      }
      assert.match(r.verdict, /^rate NOT kept: stream 'stream0': achieved /);
    });
  });

  it('a duration ends the schedule: what was due is what is asked, and a kept run says so', async () => {
    await withEal('net_null0', async (eal) => {
      const r = await generate(eal, { streams: [{ rate: 1e5 }, { rate: '256kbps', size: 64 }], duration: 0.01, clock: fakeClock(100) });
      assert.deepEqual(r.streams.map((s) => [s.planned, s.sent, s.txDropped, s.noMbuf]), [[1000, 1000, 0, 0], [5, 5, 0, 0]]);
      assert.ok(r.kept, r.verdict);
      assert.match(r.verdict, /^rate kept: /);
    });
  });

  it('an empty pool is counted as packets not made', async () => {
    await withEal('net_ring0', async (eal) => {
      const held = eal.burst(4095);
      const got = eal.pool.allocBulk(held, 4095 - 40);
      assert.equal(got, 4095 - 40);
      const r = await generate(eal, { streams: [{}], count: 64, burst: 32, clock: fakeClock(10) });
      assert.ok(r.streams[0]!.noMbuf > 0);
      assert.match(r.verdict, /not made \(pool empty\)/);
      eal.mbufs.freeBulk(held, got);
      const burst = eal.burst(64);
      for (let n; (n = eal.ethdev.rxBurst(0, 0, burst, 64)) > 0; ) eal.mbufs.freeBulk(burst, n);
    });
  });

  it('bad specs get one line naming the stream and the field', async () => {
    await withEal('net_null0', async (eal) => {
      const bad: [object, RegExp][] = [
        [{ streams: [{}] }, /^gen: give a duration, a count or both$/],
        [{ streams: [{ ipv4: { src: '1.2.3' } }], count: 1 }, /^stream 'stream0': ipv4.src: '1.2.3' is not an IPv4 address$/],
        [{ streams: [{ name: 'x', size: 20 }], count: 1 }, /^stream 'x': size 20 is shorter than the 42-byte headers$/],
        [{ streams: [{ vary: [{ field: 'tcp.src' }] }], count: 1 }, /^stream 'stream0': vary\[0\]: field 'tcp.src' is not in this stream \(it has eth.dst, eth.src/],
        [{ streams: [{ vary: [{ field: { offset: 24, width: 2 } }] }], count: 1 }, /vary\[0\]: bytes 24..25 cover a checksum/],
        [{ streams: [{ vary: [{ field: 'udp.src', count: 70000 }] }], count: 1 }, /vary\[0\]: count: 70000 must be an integer in \[1, 65536\]/],
        [{ streams: [{ size: 9000 }], count: 1 }, /^gen: stream 'stream0': 9000-byte packets do not fit the pool's 2048-byte mbufs$/],
        [{ streams: [{ colour: 'red' }], count: 1 }, /^stream 'stream0': unknown key 'colour'/],
        [{ streams: [{ rate: '3 parsecs' }], count: 1 }, /^gen: stream 'stream0': rate: '3 parsecs' is not a rate/],
        [{ streams: [{ raw: 'abc' }], count: 1 }, /^stream 'stream0': raw: not an even number of hex digits$/],
      ];
      for (const [opts, re] of bad) {
        await assert.rejects(generate(eal, opts as Parameters<typeof generate>[1]), (e: Error) => e.name === 'ArgError' && re.test(e.message) && !e.message.includes('\n'), `${JSON.stringify(opts)}`);
      }
    });
  });
});

describe('gen --latency: a probe in every packet', () => {
  it('over a ring loopback every packet comes back once, in order, with a latency each', async () => {
    await withEal('net_ring0', async (eal) => {
      const r = await generate(eal, { streams: [{ name: 'a', rate: 1e5 }, { name: 'b', rate: 5e4, size: 128 }], duration: 0.01, burst: 8, latency: true, clock: fakeClock(100) });
      assert.ok(r.kept, r.verdict);
      for (const s of r.streams) {
        const l = s.latency!;
        assert.equal(l.received, s.sent, `${s.name}: every packet checked`);
        assert.deepEqual([l.lost, l.duplicates, l.reordered], [0, 0, 0]);
        assert.equal(l.latency.count, s.sent);
        assert.ok(l.latency.min >= 0 && l.latency.max >= l.latency.min);
      }
      assert.deepEqual(r.streams.map((s) => s.sent), [1000, 500]);
    });
  });
});

describe('generate: live reports every period', () => {
  it('each period reports the packets sent by then against the schedule by then, and they add up to the final report', async () => {
    const eal = init({ lcores: [0], vdevs: ['net_null0'], mbufs: 2047, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0);
      const departures: number[] = [];
      const periods: GenPeriodReport[] = [];
      const report = await generate(eal, {
        streams: [{ rate: '1Mpps' }],
        duration: 1e-3,
        burst: 8,
        period: 2.5e-4,
        clock: fakeClock(),
        onBurst: (_s, _first, n, _d, departNs) => {
          for (let i = 0; i < n; i++) departures.push(departNs);
        },
        onPeriod: (p) => periods.push(p),
      });
      assert.deepEqual(
        periods.map((p) => p.period),
        [1, 2, 3],
        'a report at 0.25, 0.5 and 0.75 ms; the run ends at 1 ms with the final report',
      );
      let last = 0;
      for (const p of periods) {
        const st = p.streams[0]!;
        assert.ok(p.elapsedNs >= p.period * 2.5e5 && p.elapsedNs < (p.period + 1) * 2.5e5, `period ${p.period} read at ${p.elapsedNs} ns`);
        assert.equal(st.sent, departures.filter((d) => d <= p.elapsedNs).length, `period ${p.period}: sent by then`);
        assert.equal(st.planned, Math.ceil(p.elapsedNs / 1000), `period ${p.period}: the schedule by then`);
        assert.ok(st.sent >= last);
        last = st.sent;
      }
      assert.equal(report.streams[0]!.sent, 1000);
      assert.ok(last < 1000);
      await assert.rejects(generate(eal, { streams: [{}], count: 1, period: 0 }), /gen: period 0 must be a positive number of seconds/);
      assertFull(eal.pool);
    } finally {
      await eal.close();
    }
  });
});
