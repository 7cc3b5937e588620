// testpmd watched while it runs: streamed JSON statistics and Prometheus /metrics.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { startTestpmd, testpmd, until } from './run.js';

const hasPromtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim() !== '';
if (process.env['DPKIT_REQUIRE_TOOLS'] === '1' && !hasPromtool) throw new Error('DPKIT_REQUIRE_TOOLS=1 but promtool is not installed (apt-get install prometheus; .ci/run does)');
/** false when promtool is here; without it pages are still parsed, not validated. */
const noPromtool = !hasPromtool;

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

/** The Prometheus page of a running testpmd, validated by promtool when it is installed. */
async function scrape(url: string): Promise<Map<string, number>> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  if (!noPromtool) {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
  }
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) samples.set(m[1]!, Number(m[2]));
  }
  return samples;
}

describe('testpmd --metrics', () => {
  it('serves /metrics that promtool accepts, counters that only grow while forwarding and match the port statistics', async () => {
    const t = startTestpmd(['-l', '0-1', '--no-telemetry', '--', '-i', '--metrics=127.0.0.1:0', SMALL]);
    try {
      let err = '';
      t.child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      await until(() => /metrics on (http:\S+)/.test(err), () => `no metrics address in:\n${err}`);
      const url = /metrics on (http:\S+)/.exec(err)![1]!;
      assert.equal((await fetch(url.replace('/metrics', '/other'))).status, 404);
      const idle = await scrape(url);
      assert.equal(idle.get('dpkit_forwarding'), 0);
      assert.equal(idle.get('dpkit_port_link_up{port="0",name="net_null0"}'), 1);
      assert.equal(idle.get('dpkit_mempool_size{pool="mb_pool_0"}'), 8192);
      t.child.stdin.write('start\n');
      await t.waitFor('testpmd> ');
      const a = await scrape(url);
      // The lcore publishes its time every few passes: scrape until it has once.
      let b = await scrape(url);
      const bound = performance.now() + 60_000;
      while (!(b.get('dpkit_lcore_seconds_total{lcore="1"}')! > 0) && performance.now() < bound) b = await scrape(url);
      assert.equal(b.get('dpkit_forwarding'), 1);
      for (const [k, v] of a) if (k.includes('_total')) assert.ok(b.get(k)! >= v, `${k}: ${v} then ${b.get(k)}`);
      assert.ok(b.get('dpkit_lcore_seconds_total{lcore="1"}')! > 0);
      const ratio = b.get('dpkit_lcore_busy_ratio{lcore="1"}')!;
      assert.ok(ratio > 0 && ratio <= 1, `busy ratio ${ratio}`);
      t.child.stdin.write('stop\n');
      await t.waitFor('Done.');
      const from = t.out().length;
      t.child.stdin.write('show port stats 0\n');
      await until(() => t.out().slice(from).includes('Tx-bps'), () => t.out().slice(from));
      const shown = t.out().slice(from);
      const after = await scrape(url);
      assert.equal(after.get('dpkit_port_rx_packets_total{port="0",name="net_null0"}'), Number(/RX-packets:\s+(\d+)/.exec(shown)![1]));
      assert.equal(after.get('dpkit_port_tx_bytes_total{port="0",name="net_null0"}'), Number(/TX-bytes:\s+(\d+)/.exec(shown)![1]));
      assert.equal(after.get('dpkit_queue_rx_packets_total{port="0",queue="0"}'), after.get('dpkit_port_rx_packets_total{port="0",name="net_null0"}'));
      t.child.stdin.write('quit\n');
      assert.equal(await t.exit, 0);
    } finally {
      t.child.kill('SIGKILL');
    }
  });

  it('refuses an address it cannot listen on in one line', () => {
    const r = testpmd(['-l', '0-1', '--no-telemetry', '--', '--metrics=192.0.2.1:9', '--duration=0.1', SMALL]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^dpkit: --metrics=192\.0\.2\.1:9: cannot listen: .*EADDRNOTAVAIL/m);
    assert.throws(() => parseTestpmdArgs(['--', '--metrics=host:99999'], [0, 1]), /--metrics: expected an integer in \[0, 65535\]|--metrics=99999/);
  });
});
