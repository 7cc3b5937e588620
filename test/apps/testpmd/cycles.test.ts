// --record-core-cycles and --record-burst-stats: DPDK's lines, from counts the lcores kept.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { burstStatsLine, cyclesLines } from '../../../src/apps/testpmd/cycles.js';
import { testpmd } from './run.js';

const spread = (entries: [number, number][]) => {
  const a = new Float64Array(513);
  for (const [size, n] of entries) a[size] = n;
  return a;
};

describe('burst and cycle lines', () => {
  it("summarises a spread as pkt_burst_stats_display: empty bursts, then the two most frequent sizes, then 'other'", () => {
    assert.equal(burstStatsLine('RX', spread([])), '');
    assert.equal(burstStatsLine('RX', spread([[32, 698]])), '  RX-bursts : 698 [0% of 0 pkts + 100% of 32 pkts]');
    assert.equal(burstStatsLine('TX', spread([[0, 1], [32, 6], [5, 3]])), '  TX-bursts : 10 [10% of 0 pkts + 60% of 32 pkts + 30% of 5 pkts]');
    assert.equal(burstStatsLine('RX', spread([[0, 50], [1, 20], [2, 20], [3, 10]])), '  RX-bursts : 100 [50% of 0 pkts + 20% of 1 pkts + 20% of 2 pkts + 10% of other]');
    assert.equal(burstStatsLine('RX', spread([[0, 3]])), '  RX-bursts : 3 [100% of 0 pkts]');
  });

  it('prints cycles per packet at a 1000 MHz clock (ns), and nothing when no packet moved', () => {
    assert.equal(cyclesLines('io', 1000, 0), '');
    assert.match(cyclesLines('io', 4290, 100), /^\n {2}CPU cycles\/packet=42\.90 \(total cycles=4290 \/ total io packets=100\) at 1000 MHz Clock\n.*no TSC/);
  });
});

describe('testpmd --record-core-cycles --record-burst-stats', () => {
  it('shows each port\'s bursts and the busy time per packet in the forward statistics', () => {
    const r = testpmd(['-l', '0-1', '--no-telemetry', '--', '--record-core-cycles', '--record-burst-stats', '--duration=0.5', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    for (const port of [0, 1]) {
      const block = r.stdout.slice(r.stdout.indexOf(`Forward statistics for port ${port}`));
      const rx = Number(/RX-packets: (\d+)/.exec(block)![1]);
      const m = /RX-bursts : (\d+) \[(\d+)% of 0 pkts \+ (\d+)% of 32 pkts\]\n {2}TX-bursts : (\d+) /.exec(block);
      assert.ok(m, block.slice(0, 600));
      // Null ports always fill a burst: every non-empty rx burst carried 32.
      assert.ok(Number(m[1]) >= rx / 32 && rx % 32 === 0, `${rx} packets in ${m[1]} bursts`);
    }
    const total = Number(/Accumulated[\s\S]*?RX-packets: (\d+)/.exec(r.stdout)![1]);
    const c = /CPU cycles\/packet=([\d.]+) \(total cycles=(\d+) \/ total io packets=(\d+)\) at 1000 MHz Clock/.exec(r.stdout);
    assert.ok(c, r.stdout.slice(-800));
    assert.equal(Number(c[3]), total);
    assert.ok(Math.abs(Number(c[1]) - Number(c[2]) / total) < 0.01 && Number(c[2]) > 0);
  });

  it('prints neither without the options', () => {
    const r = testpmd(['-l', '0-1', '--no-telemetry', '--', '--duration=0.2', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /bursts :|CPU cycles/);
  });
});

describe('set record-core-cycles|record-burst-stats on|off', () => {
  it("act at the next start, as testpmd's: the statistics of a run follow what its lcores recorded", () => {
    const commands = ['start', 'set record-core-cycles on', 'set record-burst-stats on', 'show fwd stats all', 'stop', 'start', 'set record-core-cycles off', 'set record-burst-stats off', 'stop', 'start', 'stop', 'set record-core-cycles bogus'];
    const r = testpmd(['-l', '0-1', '--no-telemetry', '--', '-i', '--total-num-mbufs=8192'], commands.join('\n') + '\nquit\n');
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('testpmd> ').slice(1, commands.length + 1);
    const [, on, bursts, shown, stop1, , off, , stop2, , stop3, bogus] = out;
    // Silent, as testpmd's.
    assert.equal(on, '');
    assert.equal(bursts, '');
    assert.equal(off, '');
    // Turned on while forwarding: the running lcores record nothing, and nothing is claimed.
    for (const text of [shown!, stop1!]) {
      assert.match(text, /Accumulated forward statistics/);
      assert.doesNotMatch(text, /bursts :|CPU cycles/);
    }
    // The next start records both, though they were turned off again while it ran.
    assert.match(stop2!, /RX-bursts : \d+ \[/);
    assert.match(stop2!, /CPU cycles\/packet=[\d.]+ \(total cycles=\d+ \/ total io packets=\d+\) at 1000 MHz Clock/);
    assert.doesNotMatch(stop3!, /bursts :|CPU cycles/);
    assert.match(bogus!, /Bad arguments/);
  });
});
