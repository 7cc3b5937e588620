import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-gen-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const root = new URL('../../../', import.meta.url).pathname;

/** Runs `dpkit ...args` in a child process (tsx over the sources). */
function dpkit(args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/dpkit.ts'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe('dpkit gen', () => {
  it('--help lists the options', async () => {
    const r = dpkit(['gen', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /--rate R/);
    assert.match(r.out, /--replay FILE\.pcap/);
    assert.equal(await main(['gen', '-h']), 0);
  });

  it('a rate the port cannot keep exits 3 and says so in one line', async () => {
    const r = dpkit(['gen', '-l', '0', '--vdev', 'net_null0', '--', '--rate', '5000Mpps', '--count', '20000', '--json']);
    assert.equal(r.code, 3, r.err);
    const report = JSON.parse(r.out);
    assert.equal(report.kept, false);
    assert.equal(report.streams[0].sent, 20000);
    assert.equal(report.streams[0].askedPps, 5e9);
    const lines = r.err.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^dpkit gen: rate NOT kept: stream 'stream0': achieved .* of 5000\.000 Mpps/);
  });

  it('--rate N%: a share of the port\'s link (net_null: 10 Gbps) in L1 bits; the units are in --help', () => {
    const r = dpkit(['gen', '-l', '0', '--vdev', 'net_null0', '--', '--rate', '1%', '--size', '60', '--count', '64', '--json']);
    const report = JSON.parse(r.out);
    assert.equal(report.streams[0].sent, 64);
    // 1 % of 10 Gbps over 60-byte packets, 84 B each on the wire; a count's schedule asks exactly the pacer's rate.
    assert.ok(Math.abs(report.streams[0].askedPps - 1e8 / (84 * 8)) < 1e-3, String(report.streams[0].askedPps));
    assert.equal(r.code, report.kept ? 0 : 3);
    const help = dpkit(['gen', '--help']).out;
    for (const unit of ['Gbps-l1', 'Gbps-l2', '50%']) assert.ok(help.includes(unit), unit);
  });

  it('streams from a JSON file, and a duration', async () => {
    const f = join(dir, 's.json');
    writeFileSync(f, JSON.stringify([{ name: 'a', rate: 1000, vary: [{ field: 'udp.src', mode: 'random' }] }, { name: 'b', rate: '2kpps', tcp: {}, size: 128 }]));
    const r = dpkit(['gen', '--stream', f, '--duration', '0.05', '--json']);
    const report = JSON.parse(r.out);
    assert.deepEqual(report.streams.map((s: { name: string; planned: number }) => [s.name, s.planned]), [['a', 50], ['b', 100]]);
    assert.equal(r.code, report.kept ? 0 : 3);
  });

  it('bad options get one line and exit 2', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"size": 1}');
    for (const [args, re] of [
      [['--rate', 'lots'], /^dpkit: gen: stream 'stream0': rate: 'lots' is not a rate/],
      [['--rate', '120%'], /^dpkit: gen: stream 'stream0': rate: '120%' must be a share of the link in \(0, 100\] %$/],
      [['--size', '10-'], /^dpkit: gen: --size 10-: expected N, MIN-MAX or imix$/],
      [['--bogus'], /^dpkit: gen: unknown option '--bogus'/],
      [['--stream', join(dir, 'none.json')], /^dpkit: gen: --stream .*none\.json: cannot read: ENOENT$/],
      [['--stream', bad, '--count', '1'], /^dpkit: stream 'stream0': size 1 is shorter than the 42-byte headers$/],
      [['--speed', '2'], /^dpkit: gen: --speed and --loops go with --replay$/],
      [['--count', '1.5'], /^dpkit: gen: --count 1.5: must be a positive integer$/],
      [['--search', 'max'], /^dpkit: gen: --search max: must be ndr or pdr$/],
      [['--search', 'ndr'], /^dpkit: gen: --search needs --search-max \(the highest rate to try\)$/],
      [['--trial', '1'], /^dpkit: gen: --trial goes with --search$/],
      [['--search', 'ndr', '--search-max', '1Mpps', '--loss-ratio', '0.1'], /^dpkit: gen: --loss-ratio goes with --search pdr/],
      [['--search', 'pdr', '--search-max', '1Mpps', '--rate', '1Mpps'], /^dpkit: gen: --search sets the rate and the trial length: drop --rate/],
      [['--period', '0'], /^dpkit: gen: --period 0: must be a positive number$/],
    ] as [string[], RegExp][]) {
      await assert.rejects(main(['gen', ...args]), (e: Error) => e.name === 'ArgError' && re.test(`dpkit: ${e.message}`) && !e.message.includes('\n'), args.join(' '));
    }
    const r = dpkit(['gen', '--bogus']);
    assert.equal(r.code, 2);
    assert.equal(r.err, "dpkit: gen: unknown option '--bogus' (dpkit gen --help lists the options)\n");
  });

  it('--period with --json prints NDJSON: a live line per period, then the final report as a line', () => {
    // A count, not a duration: on a loaded machine a 50 ms run may stop short of its last burst (a shortfall, rightly).
    const r = dpkit(['gen', '--rate', '20kpps', '--count', '1000', '--period', '0.01', '--json']);
    const lines = r.out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; elapsedNs?: number; streams: { sent: number }[] });
    const periods = lines.slice(0, -1);
    assert.ok(periods.length >= 1, r.out);
    assert.ok(periods.every((p) => p.type === 'period'));
    for (let i = 1; i < periods.length; i++) assert.ok(periods[i]!.elapsedNs! > periods[i - 1]!.elapsedNs! && periods[i]!.streams[0]!.sent >= periods[i - 1]!.streams[0]!.sent);
    assert.equal(lines.at(-1)!.type, 'report');
    assert.equal(lines.at(-1)!.streams[0]!.sent, 1000);
  });

  it('--search prints a line per trial and the result, counted on net_faulty after each trial', () => {
    const r = dpkit(['gen', '-l', '0', '--vdev', 'net_faulty0', '--', '--search', 'pdr', '--loss-ratio', '0.01', '--search-max', '100kpps', '--resolution', '25kpps', '--trial', '0.01', '--json']);
    const lines = r.out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; trial?: number; offered?: number; received?: number; lost?: number; found?: boolean; ratePps?: number; verdict?: string });
    const trials = lines.slice(0, -1);
    assert.ok(trials.length >= 1 && trials.every((t, i) => t.type === 'trial' && t.trial === i + 1 && t.lost === t.offered! - t.received!), r.out);
    const result = lines.at(-1)!;
    assert.equal(result.type, 'search');
    assert.equal(r.code, result.found ? 0 : 3, r.err);
    assert.match(result.verdict!, /^PDR \(loss ≤ 1\.00 %\): /);
  });
});
