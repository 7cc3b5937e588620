// testpmd watched while it runs: streamed JSON statistics and Prometheus /metrics.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testpmd } from './run.js';

const SMALL = '--total-num-mbufs=8192';

describe('testpmd --stats-period --json', () => {
  it('prints one JSON object per period as a line, then the final one as a line', () => {
    const r = testpmd(['-l', '0-1', '--no-telemetry', '--', '--stats-period=1', '--duration=2.5', '--json', SMALL]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const periods = lines.slice(0, -1) as unknown as { period: true; interval: number; forwarding: boolean; ports: { port: number; ipackets: number; rxPps: number; txBps: number }[] }[];
    const final = lines.at(-1) as { ports: { port: number; nic: { ipackets: number } }[]; total: { rxPackets: number } };
    assert.ok(periods.length >= 1, `period lines in:\n${r.stdout}`);
    for (const [i, p] of periods.entries()) {
      assert.equal(p.period, true);
      assert.equal(p.forwarding, true);
      assert.deepEqual(p.ports.map((x) => x.port), [0, 1]);
      assert.ok(p.interval > 0 && p.ports[0]!.rxPps > 0 && p.ports[0]!.txBps > 0, JSON.stringify(p));
      if (i > 0) assert.ok(p.ports[0]!.ipackets >= periods[i - 1]!.ports[0]!.ipackets, 'counters only grow');
    }
    assert.ok(final.ports[0]!.nic.ipackets >= periods.at(-1)!.ports[0]!.ipackets, 'the final object comes last, with the totals');
    assert.ok(final.total.rxPackets > 0);
  });
});
