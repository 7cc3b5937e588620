// Rates as people write them: packets, L2 bits with or without the FCS, L1 bits on the wire, and a
// share of the link. dpkit's packet lengths exclude the FCS (as DPDK's), so a 64-byte frame on the
// wire is a 60-byte packet here: the classic line-rate figures are checked at 60 and 1514 bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { init } from '../../src/api/eal.js';
import { generate, planStreams, rateLink } from '../../src/gen/generate.js';
import { makePacer, parseRate, parseRateSpec, type RateLink } from '../../src/gen/pacer.js';
import { assertFull, portUp } from '../helpers.js';
import { fakeClock } from './clock.js';

const TEN_G: RateLink = { port: 0, mbps: 10_000 };
const NO_MAC = new Uint8Array(6);

/** Equal to 1e-9 relative: the same arithmetic, written from the definition. */
function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= expected * 1e-9, `${what}: ${actual} pps, expected ${expected}`);
}

/** Asserts `f` throws an ArgError whose message is exactly one line matching `re`. */
function refuses(f: () => unknown, re: RegExp): void {
  assert.throws(f, (e: Error) => e.name === 'ArgError' && !e.message.includes('\n') && re.test(e.message), re.source);
}

describe('gen rates: L1, L2 and % of the link', () => {
  it('10Gbps-l1 is line rate: 14 880 952 pps of 64-byte frames (60-byte packets), 812 744 of 1518-byte frames', () => {
    assert.equal(Math.round(parseRate('10Gbps-l1', 60, 'r')), 14_880_952);
    assert.equal(Math.round(parseRate('10Gbps-l1', 1514, 'r')), 812_744);
    // A 64-byte packet is a 68-byte frame: 88 B of wire time with preamble and gap.
    near(parseRate('10Gbps-l1', 64, 'r'), 1e10 / (88 * 8), '64-byte packets');
    near(parseRate('10Gbps-l1', 1518, 'r'), 1e10 / (1542 * 8), '1518-byte packets');
  });

  it('-l2 counts the FCS (TRex\'s bps_L2), plain bps the packet as obytes does', () => {
    assert.equal(parseRate('10Gbps-l2', 60, 'r'), 19_531_250);
    near(parseRate('10Gbps-l2', 1514, 'r'), 1e10 / (1518 * 8), '1514-byte packets');
    near(parseRate('10Gbps-l2', 64, 'r'), 1e10 / (68 * 8), '64-byte packets');
    assert.equal(parseRate('10Gbps', 64, 'r'), 19_531_250);
    near(parseRate('10Gbps', 1518, 'r'), 1e10 / (1518 * 8), '1518-byte packets');
    // Units are case-insensitive, the dash optional (TRex writes 10gbpsl1), kbps and Mbps scale.
    assert.equal(parseRate('10gbpsl1', 60, 'r'), parseRate('10Gbps-l1', 60, 'r'));
    assert.equal(parseRate('10GBPS-L1', 60, 'r'), parseRate('10Gbps-l1', 60, 'r'));
    assert.equal(parseRate('672kbps-l1', 60, 'r'), 1000);
    assert.equal(parseRate('5.12Mbps-l2', 60, 'r'), 10_000);
    assert.deepEqual(parseRateSpec('2.5Mpps', 'r'), { value: 2.5e6, kind: 'pps' });
    assert.deepEqual(parseRateSpec('40Gbps-l1', 'r'), { value: 4e10, kind: 'bps-l1' });
    assert.deepEqual(parseRateSpec('12.5%', 'r'), { value: 12.5, kind: 'percent' });
  });

  it('a mixed-size stream pays the per-packet overhead on its mean: IMIX at 10Gbps-l1', () => {
    // dpkit's IMIX: 64, 570 and 1518 bytes in 7:4:1, a mean of 4246 / 12 bytes.
    const [imix] = planStreams([{ size: 'imix', rate: '10Gbps-l1' }], undefined, NO_MAC, 2048, undefined, Infinity);
    near(imix!.b.meanLen, 4246 / 12, 'mean length');
    near(imix!.pps, 1e10 / ((4246 / 12 + 24) * 8), 'IMIX');
    assert.equal(Math.round(imix!.pps), 3_308_337);
    // The mean, not the sizes one by one: the overhead is per packet.
    const [range] = planStreams([{ size: { min: 60, max: 1514 }, rate: '50%' }], undefined, NO_MAC, 2048, undefined, Infinity, 0, TEN_G);
    near(range!.pps, 5e9 / ((787 + 24) * 8), '60-1514 range at 50 %');
  });

  it('N% is a share of the link\'s L1 bit rate', () => {
    assert.equal(Math.round(parseRate('100%', 60, 'r', TEN_G)), 14_880_952);
    assert.equal(Math.round(parseRate('100%', 1514, 'r', TEN_G)), 812_744);
    near(parseRate('50%', 60, 'r', TEN_G), 5e9 / (84 * 8), '50 % of 10G');
    near(parseRate('12.5%', 64, 'r', { port: 3, mbps: 25_000 }), 25e9 / 8 / (88 * 8), '12.5 % of 25G');
    // A pattern's own rates are read against the same link: a ramp from 10 % to 20 %.
    const p = makePacer(parseRate('20%', 60, 'r', TEN_G), { kind: 'ramp', from: '10%', over: 1e-3 }, 60, 'r', TEN_G);
    const from = 1e9 / (84 * 8);
    const to = 2e9 / (84 * 8);
    // Packets over the ramp: the mean rate times its length.
    assert.ok(Math.abs(p.deadline(((from + to) / 2) * 1e-3) - 1e6) < 1e-3, 'the ramp ends after 1 ms');
    refuses(() => makePacer(1, { kind: 'schedule', steps: [{ for: 1, rate: '10%' }] }, 60, 'gen'), /^gen: pattern\.steps\[0\]\.rate: '10%' is a share of a link's speed, and no port's link is known here$/);
  });

  it('refuses, in one line each: a unit it does not know, a share outside (0, 100], a share of an unknown link', () => {
    refuses(() => parseRate('10Gbps-l3', 64, 'gen: rate'), /^gen: rate: '10Gbps-l3' is not a rate \(a number with pps, .*-l1.*N% of the link\)$/);
    refuses(() => parseRate('10Mpps-l1', 64, 'gen: rate'), /^gen: rate: '10Mpps-l1' is not a rate/);
    refuses(() => parseRate('10Gbit', 64, 'gen: rate'), /^gen: rate: '10Gbit' is not a rate/);
    refuses(() => parseRate('50%-l1', 64, 'gen: rate', TEN_G), /^gen: rate: '50%-l1' is not a rate/);
    refuses(() => parseRate('-5%', 64, 'gen: rate', TEN_G), /^gen: rate: '-5%' is not a rate/);
    refuses(() => parseRate('101%', 64, 'gen: rate', TEN_G), /^gen: rate: '101%' must be a share of the link in \(0, 100\] %$/);
    refuses(() => parseRate('0%', 64, 'gen: rate', TEN_G), /^gen: rate: '0%' must be a share of the link in \(0, 100\] %$/);
    refuses(() => parseRateSpec('150%', 'set gen rate'), /^set gen rate: '150%' must be a share/);
    refuses(() => parseRate('50%', 64, 'gen: rate', { port: 2, mbps: 0 }), /^gen: rate: '50%' is a share of port 2's link speed, and port 2's link is down or its speed unknown$/);
    refuses(() => parseRate('50%', 64, 'gen: rate'), /^gen: rate: '50%' is a share of a link's speed, and no port's link is known here$/);
    refuses(() => parseRate('0Gbps-l1', 64, 'gen: rate'), /^gen: rate: "0Gbps-l1" must be a positive rate$/);
  });

  it('generate(): N% of the tx port\'s link (net_null: 10 Gbps), a spec\'s L1 rate, and a link down refused naming the port', async () => {
    const eal = init({ lcores: [0], vdevs: ['net_null0'], mbufs: 2047, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0);
      assert.deepEqual(rateLink(eal.ethdev, 0), { port: 0, mbps: 10_000 });
      const report = await generate(eal, {
        streams: [{ name: 'half', size: 60 }, { name: 'imix', size: 'imix', rate: '1Gbps-l1' }],
        rate: '50%',
        count: 256,
        clock: fakeClock(),
      });
      const [half, imix] = report.streams;
      // A count's schedule spans deadline(count): asked is the pacer's rate.
      near(half!.askedPps, 5e9 / (84 * 8), 'asked of 50 %');
      near(imix!.askedPps, 1e9 / ((4246 / 12 + 24) * 8), 'asked of 1Gbps-l1 IMIX');
      assert.deepEqual([half!.sent, imix!.sent], [256, 256]);
      eal.ethdev.setLinkDown(0);
      assert.equal(rateLink(eal.ethdev, 0).mbps, 0);
      await assert.rejects(generate(eal, { streams: [{}], rate: '50%', count: 1, clock: fakeClock() }), /^ArgError: gen: stream 'stream0': rate: '50%' is a share of port 0's link speed, and port 0's link is down or its speed unknown$/);
      eal.ethdev.setLinkUp(0);
      assertFull(eal.pool);
    } finally {
      await eal.close();
    }
  });
});
