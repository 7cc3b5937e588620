import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { init } from '../../src/api/eal.js';
import { searchRate, type SearchTrial } from '../../src/gen/search.js';
import { assertFull, portUp } from '../helpers.js';
import { fakeClock } from './clock.js';

/**
 * The device: net_faulty, whose delay line (4096 slots, one kept empty) holds LINE packets and refuses the rest of a burst
 * once full. The search drains the port only after each trial's traffic stopped, so a trial of
 * D seconds at r pps offers ceil(r·D) packets and gets back min(offered, LINE) less what the
 * port drops on purpose: a capacity of exactly LINE / D pps, which the search must find.
 */
const LINE = 4095;
const D = 1e-3;
const offeredAt = (pps: number) => Math.ceil(pps * D - 1e-9);

async function withFaulty<T>(devargs: string, f: (eal: ReturnType<typeof init>) => Promise<T>): Promise<T> {
  const eal = init({ lcores: [0], vdevs: [devargs], mbufs: 16383, memory: 32 << 20 });
  try {
    portUp(eal.ethdev, eal.pool, 0);
    const r = await f(eal);
    assertFull(eal.pool);
    return r;
  } finally {
    await eal.close();
  }
}

describe('RFC 2544 search (ndr / pdr) against net_faulty', () => {
  it('ndr finds the rate the line holds without loss, to the resolution; each trial counted after traffic stopped', async () => {
    const trials: SearchTrial[] = [];
    const r = await withFaulty('net_faulty0', (eal) =>
      searchRate(eal, { streams: [{}], search: 'ndr', maxRate: '10Mpps', resolution: '10kpps', trial: D, warmup: 0, clock: fakeClock(), onTrial: (t) => trials.push(t) }),
    );
    assert.equal(r.trials.length, trials.length);
    for (const t of r.trials) {
      assert.equal(t.offered, offeredAt(t.ratePps), `trial ${t.trial}: offered`);
      assert.equal(t.received, Math.min(t.offered, LINE), `trial ${t.trial}: what the line held came back`);
      assert.equal(t.lost, Math.max(0, t.offered - LINE));
      assert.equal(t.pass, t.offered <= LINE, `trial ${t.trial} at ${t.ratePps} pps`);
    }
    assert.ok(r.found, r.verdict);
    assert.ok(r.ratePps <= LINE / D && r.ratePps > LINE / D - 10e3, `found ${r.ratePps} pps; capacity ${LINE / D}`);
    assert.ok(r.failedPps - r.ratePps <= 10e3 && offeredAt(r.failedPps) > LINE, 'the bracket is within the resolution and its top failed');
    assert.equal(r.trials[0]!.ratePps, 10e6, 'the first trial is at the maximum');
    assert.match(r.verdict, /^NDR \(no loss\): 4\.0\d\d Mpps, 4\.\d+ Mpps failed, \d+ trials of 0\.001 s$/);
  });

  it('pdr with a port that drops 5 %: every trial\'s loss is the drops plus the refusals, and the result lies where 10 % loss is crossed', async () => {
    const r = await withFaulty('net_faulty0,drop=0.05,seed=7', async (eal) => {
      let dropped = 0;
      return searchRate(eal, {
        streams: [{}],
        search: 'pdr',
        lossRatio: 0.1,
        maxRate: '10Mpps',
        resolution: '10kpps',
        trial: D,
        warmup: 0,
        clock: fakeClock(),
        onTrial: (t) => {
          const now = eal.ethdev.xstats(0)['faulty_dropped']!;
          const refused = t.gen.streams[0]!.txDropped;
          assert.equal(t.lost, now - dropped + refused, `trial ${t.trial}: lost = dropped on purpose + refused by the full line`);
          assert.equal(t.pass, t.lossRatio <= 0.1);
          dropped = now;
        },
      });
    });
    assert.ok(r.found, r.verdict);
    // Below LINE / 0.95 packets nothing is refused and the loss is the 5 % drop (its spread over
    // thousands of packets is a third of a percent), far under 10 %; above LINE / (0.95 · 0.9) even
    // the drops alone leave more than 10 % lost.
    assert.ok(r.ratePps >= LINE / D && r.ratePps <= LINE / (0.95 * 0.9) / D, `found ${r.ratePps} pps`);
    assert.ok(r.failedPps - r.ratePps <= 10e3);
    assert.match(r.verdict, /^PDR \(loss ≤ 10\.0 %\): /);
  });

  it('ndr with a port that drops: no rate passes, down to the minimum, and the report says so', async () => {
    const r = await withFaulty('net_faulty0,drop=0.05,seed=7', (eal) =>
      searchRate(eal, { streams: [{}], search: 'ndr', maxRate: '8Mpps', minRate: '1Mpps', resolution: '10kpps', trial: D, warmup: 0, clock: fakeClock() }),
    );
    assert.equal(r.found, false);
    assert.equal(r.ratePps, 0);
    assert.ok(r.trials.every((t) => !t.pass && t.lost > 0));
    assert.deepEqual(
      r.trials.map((t) => t.ratePps),
      [8e6, 4e6, 2e6, 1e6],
    );
    assert.match(r.verdict, /^NDR \(no loss\): no rate passed, down to 1\.000 Mpps, 4 trials/);
  });

  it('bad search options are one line naming the option', async () => {
    await withFaulty('net_faulty0', async (eal) => {
      const base = { streams: [{}], maxRate: '1Mpps', clock: fakeClock() };
      await assert.rejects(searchRate(eal, { ...base, search: 'max' as 'ndr' }), /^ArgError: gen: --search max: must be ndr or pdr$/);
      await assert.rejects(searchRate(eal, { ...base, search: 'ndr', lossRatio: 0.1 }), /--loss-ratio goes with --search pdr/);
      await assert.rejects(searchRate(eal, { ...base, search: 'pdr', lossRatio: 1.5 }), /--loss-ratio 1.5: must be in \[0, 1\)/);
      await assert.rejects(searchRate(eal, { ...base, search: 'ndr', streams: [{ rate: 5 }] }), /a searched stream may not name its own/);
      await assert.rejects(searchRate(eal, { ...base, search: 'ndr', minRate: '2Mpps' }), /--search-min 2\.000 Mpps is above --search-max 1\.000 Mpps/);
    });
  });
});
