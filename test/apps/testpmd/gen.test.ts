// testpmd's gen forward mode: the generator's engine on testpmd's lcores. Every count here is
// set by --gen-count, so the assertions hold however late a loaded machine sends.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { testpmd, THREE_LCORES } from './run.js';

const dir = mkdtempSync(join(tmpdir(), 'gen-fwd-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const streams = join(dir, 'streams.json');
writeFileSync(
  streams,
  JSON.stringify([
    { name: 'a', rate: '100kpps' },
    { name: 'b', rate: '50kpps', pattern: { kind: 'poisson' }, size: { min: 64, max: 128 } },
    { name: 'c', rate: '20kpps', udp: { dst: 53 } },
  ]),
);

describe('testpmd --forward-mode=gen', () => {
  it('splits the streams over two lcores, sends each its count, and merges the lcores\' probe checkers', () => {
    // One ring port with two queue pairs: stream q loops back on queue q, forwarded by lcore 1 + q.
    const r = testpmd([...THREE_LCORES, '--vdev', 'net_ring0', '--', '--forward-mode=gen', '--nb-cores=2', '--rxq=2', '--txq=2', `--gen-stream=${streams}`, '--gen-count=1000', '--gen-latency', '--duration=4', '--total-num-mbufs=8192', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as {
      streams: { lcore: number; txPackets: number; rxPackets: number }[];
      gen: { streams: { name: string; sent: number; planned: number; txDropped: number; noMbuf: number }[]; verdict: string };
      total: { txPackets: number; rxPackets: number };
    };
    // Gen streams a and c go to forwarding stream 0 (lcore 1), b to stream 1 (lcore 2).
    assert.deepEqual(
      j.streams.map((s) => [s.lcore, s.txPackets, s.rxPackets]),
      [
        [1, 2000, 2000],
        [2, 1000, 1000],
      ],
    );
    assert.deepEqual(
      j.gen.streams.map((s) => [s.name, s.sent, s.planned, s.txDropped, s.noMbuf]),
      [
        ['a', 1000, 1000, 0, 0],
        ['b', 1000, 1000, 0, 0],
        ['c', 1000, 1000, 0, 0],
      ],
    );
    // Kept or not is the machine's timing (a quiet fast one keeps 170 kpps); the count is not.
    assert.match(j.gen.verdict, /\b3000 of 3000 packets sent\b/);
    // The text statistics (stderr with --json): one line per gen stream, and each probe stream seen by its lcore's checker.
    assert.match(r.stderr, /Gen stream b: asked [\d.]+ kpps achieved [\d.]+ kpps sent 1000 tx-dropped 0 no-mbuf 0 late \d+/);
    for (const id of [0, 1, 2]) assert.match(r.stderr, new RegExp(`Probe stream ${id}: received 1000 lost 0 duplicates 0 reordered 0\\n`));
  });

  it('one stream\'s packets checked on two lcores (net_ring rss=1 spreads them) are merged into one account', () => {
    const spread = join(dir, 'spread.json');
    writeFileSync(spread, JSON.stringify({ name: 'spread', rate: '100kpps', vary: [{ field: 'udp.src', mode: 'random' }] }));
    const r = testpmd([...THREE_LCORES, '--vdev', 'net_ring0,rss=1', '--', '--forward-mode=gen', '--nb-cores=2', '--rxq=2', '--txq=2', `--gen-stream=${spread}`, '--gen-count=1000', '--gen-latency', '--duration=4', '--total-num-mbufs=8192', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { streams: { lcore: number; rxPackets: number; txPackets: number }[] };
    // Lcore 1 sends it all; RSS (a random source port a packet) returns it on both queues, so both lcores' checkers hold part.
    assert.deepEqual(j.streams.map((s) => s.txPackets), [1000, 0]);
    assert.ok(j.streams.every((s) => s.rxPackets > 0) && j.streams[0]!.rxPackets + j.streams[1]!.rxPackets === 1000, JSON.stringify(j.streams));
    assert.match(r.stderr, /Probe stream 0: received 1000 lost 0 duplicates 0 reordered \d+\n/);
  });

  it('with more streams than rxprobe\'s 16, every stream\'s probes are counted and printed', () => {
    const many = join(dir, 'many.json');
    writeFileSync(many, JSON.stringify(Array.from({ length: 20 }, (_, k) => ({ name: `s${k}`, rate: '10kpps', udp: { src: 1000 + k } }))));
    const r = testpmd(['-l', '0-1', '--vdev', 'net_ring0', '--', '--forward-mode=gen', `--gen-stream=${many}`, '--gen-count=200', '--gen-latency', '--duration=4', '--total-num-mbufs=8192', '--json']);
    assert.equal(r.code, 0, r.stderr);
    for (let id = 0; id < 20; id++) assert.match(r.stderr, new RegExp(`Probe stream ${id}: received 200 lost 0 duplicates 0 reordered 0\\n`));
  });

  it('--stats-period with --json: each period line carries every gen stream\'s account so far, the final object the report', () => {
    const r = testpmd(['-l', '0-1', '--vdev', 'net_null0', '--', '--forward-mode=gen', `--gen-stream=${streams}`, '--stats-period=1', '--duration=2.5', '--json', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { period?: true; gen: { name: string; sent: number; planned: number }[] | { streams: { name: string; sent: number }[] } });
    const periods = lines.slice(0, -1) as { period: true; gen: { name: string; sent: number; planned: number }[] }[];
    assert.ok(periods.length >= 1, r.stdout);
    for (const [i, p] of periods.entries()) {
      assert.equal(p.period, true);
      assert.deepEqual(p.gen.map((g) => g.name), ['a', 'b', 'c']);
      if (i > 0) for (let k = 0; k < 3; k++) assert.ok(p.gen[k]!.sent >= periods[i - 1]!.gen[k]!.sent, 'counts only grow');
    }
    const final = lines.at(-1)!.gen as { streams: { name: string; sent: number }[] };
    for (let k = 0; k < 3; k++) assert.ok(final.streams[k]!.sent >= periods.at(-1)!.gen[k]!.sent, 'the final report comes last');
  });

  it('a bad stream is one line at start, naming the stream and the field', () => {
    const r = testpmd(['--vdev', 'net_null0', '--', '--forward-mode=gen', '--gen-rate=fast', '--duration=1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /gen: stream 'stream0': rate: 'fast' is not a rate/);
    const bad = testpmd(['--vdev', 'net_null0', '--', '--forward-mode=gen', '--gen-size=big', '--duration=1']);
    assert.match(bad.stderr, /testpmd: --gen-size big: expected N, MIN-MAX or imix/);
  });

  it('--gen-rate=N%: a share of the tx port\'s link (net_null: 10 Gbps) in L1 bits, planned on the lcores alike', () => {
    const r = testpmd(['-l', '0-1', '--vdev', 'net_null0', '--', '--forward-mode=gen', '--gen-rate=1%', '--gen-size=60', '--gen-count=64', '--duration=2', '--total-num-mbufs=8192', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { streams: { txPackets: number }[]; gen: { streams: { sent: number; planned: number; askedPps: number }[] } };
    const s = j.gen.streams[0]!;
    assert.deepEqual([s.sent, s.planned, j.streams[0]!.txPackets], [64, 64, 64]);
    // 1 % of 10 Gbps over 60-byte packets (64-byte frames, 84 B on the wire): the control plane's plan, as the lcore's.
    assert.ok(Math.abs(s.askedPps - 1e8 / (84 * 8)) < 1e-3, `asked ${s.askedPps}`);
  });

  it('set gen rate N%: out of (0, 100] refused when set; on a link that is down, refused at start naming the port', () => {
    const r = testpmd(['--vdev', 'net_null0', '--', '-i', '--total-num-mbufs=8192', '--gen-count=64'], ['set fwd gen', 'set gen rate 101%', 'set gen rate 10Gbps-l3', 'set gen rate 50%', 'set link-down port 0', 'start', 'set link-up port 0', 'quit', ''].join('\n'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /set gen rate: '101%' must be a share of the link in \(0, 100\] %\n/);
    assert.match(r.stdout, /set gen rate: '10Gbps-l3' is not a rate/);
    assert.match(r.stdout, /gen: rate of streams that name none set to 50%/);
    assert.match(r.stdout, /gen: stream 'stream0': rate: '50%' is a share of port 0's link speed, and port 0's link is down or its speed unknown\n/);
  });

  it('set gen rate / size / latency configure the next start; a bad rate is refused in one line', () => {
    const r = testpmd(['--vdev', 'net_ring0', '--', '-i', '--total-num-mbufs=8192', '--gen-count=64'], ['set fwd gen', 'set gen rate fast', 'set gen rate 50kpps', 'set gen size 100', 'set gen latency on', 'start', 'show fwd stats all', 'stop', 'quit', ''].join('\n'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /set gen rate: 'fast' is not a rate/);
    assert.match(r.stdout, /gen: rate of streams that name none set to 50kpps/);
    // The stream the shell made: 100-byte packets at 50 kpps, stamped (a probe line appears once any came back).
    assert.match(r.stdout, /Gen stream stream0: asked [\d.]+ kpps achieved/);
  });
});
