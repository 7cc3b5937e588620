import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { frame, packets, readCapture, writeCapture } from '../../pcap/captures.js';
import { testpmd as run, THREE_LCORES } from './run.js';

const TSHARK = existsSync('/usr/bin/tshark');
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-testpmd-pcap-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

/**
 * Runs testpmd until its captures end. Its stdin ends at once, which alone
 * would stop it (as DPDK's); a long --duration keeps it forwarding instead.
 */
function testpmd(args: string[]) {
  const t0 = performance.now();
  const withDuration = args.some((a) => a.startsWith('--duration')) ? args : args.includes('--') ? [...args, '--duration=600'] : [...args, '--', '--duration=600'];
  return { ...run(withDuration), seconds: (performance.now() - t0) / 1000 };
}

function tshark(file: string, fields: string[]): string[][] {
  const r = spawnSync('tshark', ['-r', file, '-T', 'fields', ...fields.flatMap((f) => ['-e', f])], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map((l) => l.split('\t'));
}

describe('testpmd on net_pcap', () => {
  it('forwards a capture with io into a byte-identical capture, chains included, and stops at its end', () => {
    const sizes = Array.from({ length: 300 }, (_, i) => [60, 64, 128, 1514, 9000][i % 5]!);
    writeCapture(path('in.pcap'), packets(sizes));
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${path('in.pcap')}`, '--vdev', `net_pcap1,tx_pcap=${path('out.pcap')}`, '--', '--forward-mode=io', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /End of input on every port \(capture files read to their end\), stopping forwarding\./);
    assert.match(r.stdout, /RX-packets: 300 +RX-dropped: 0 +RX-total: 300/);
    assert.deepEqual(readFileSync(path('out.pcap')), readFileSync(path('in.pcap')));
  });

  it('ends a --duration run early when the capture ends', () => {
    writeCapture(path('short.pcap'), packets([64, 64, 64]));
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${path('short.pcap')}`, '--vdev', `net_pcap1,tx_pcap=${path('short-out.pcap')}`, '--', '--duration=20', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.seconds < 15, `stopped after ${r.seconds.toFixed(1)} s`);
    assert.equal(readCapture(path('short-out.pcap')).length, 3);
  });

  it('splits queues over lcores: each rx_pcap file arrives in its own tx_pcap file, every packet counted', () => {
    writeCapture(path('qa.pcap'), packets(Array(100).fill(64)));
    writeCapture(path('qb.pcap'), packets(Array(50).fill(1000), 1_800_000_000));
    const r = testpmd([
      ...THREE_LCORES,
      '--vdev', `net_pcap0,rx_pcap=${path('qa.pcap')},rx_pcap=${path('qb.pcap')}`,
      '--vdev', `net_pcap1,tx_pcap=${path('qc.pcap')},tx_pcap=${path('qd.pcap')}`,
      '--', '--rxq=2', '--txq=2', '--nb-cores=2', '--total-num-mbufs=8192', '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    // A fixed-count run: every packet of both files delivered, summed over queues and streams.
    const j = JSON.parse(r.stdout) as { total: { rxPackets: number; txPackets: number; txDropped: number }; streams: { lcore: number; rxPackets: number; txPackets: number; fwdDropped: number }[] };
    assert.deepEqual([j.total.rxPackets, j.total.txPackets, j.total.txDropped], [150, 150, 0]);
    assert.deepEqual([...new Set(j.streams.filter((s) => s.rxPackets > 0).map((s) => s.lcore))].sort(), [1, 2], 'both lcores forwarded');
    for (const s of j.streams) assert.equal(s.rxPackets, s.txPackets + s.fwdDropped);
    assert.deepEqual(readFileSync(path('qc.pcap')), readFileSync(path('qa.pcap')));
    assert.deepEqual(readFileSync(path('qd.pcap')), readFileSync(path('qb.pcap')));
  });

  it('carries on where it stopped: start, stop and start again read each capture once, on fresh lcores', async () => {
    const pkts = packets(Array.from({ length: 30_000 }, (_, i) => 60 + (i % 200)));
    writeCapture(path('resume.pcap'), pkts);
    const opts = parseTestpmdArgs(['--vdev', `net_pcap0,rx_pcap=${path('resume.pcap')}`, '--vdev', `net_pcap1,tx_pcap=${path('resume-out.pcap')}`, '--', '--total-num-mbufs=8192']);
    const pmd = new Testpmd(opts, () => {});
    const rx = () => pmd.ethdev.stats(0).ipackets;
    let rounds = 0;
    // Bounded: a driver that forgot where it was would never end.
    while (!pmd.inputEnded() && rounds < 12) {
      await pmd.start();
      rounds++;
      // Stop part-way through the first rounds; let the last one reach the end.
      const before = rx();
      for (let t = 0; t < 500 && rx() === before && !pmd.inputEnded(); t++) await sleep(2);
      if (rounds < 3) await sleep(5);
      else for (let t = 0; t < 2500 && !pmd.inputEnded(); t++) await sleep(4);
      await pmd.stop();
    }
    const received = rx();
    pmd.close(); // flushes the tx file, and checks the pool is full
    assert.ok(rounds >= 2, `${rounds} rounds`);
    assert.equal(received, 30_000);
    assert.deepEqual(readFileSync(path('resume-out.pcap')), readFileSync(path('resume.pcap')), 'every packet once, in order');
  });

  it('watches for the end of input only when every port can end and the engine receives', () => {
    writeCapture(path('ends.pcap'), packets([64]));
    const can = (args: string[]) => {
      const pmd = new Testpmd(parseTestpmdArgs([...args, '--', '--total-num-mbufs=2048']), () => {});
      try {
        return pmd.inputCanEnd();
      } finally {
        pmd.close();
      }
    };
    const file = `net_pcap0,rx_pcap=${path('ends.pcap')}`;
    assert.equal(can(['--vdev', file, '--vdev', `net_pcap1,rx_pcap=${path('ends.pcap')}`]), true);
    assert.equal(can(['--vdev', file, '--vdev', 'net_null1']), false, 'a null port never ends');
    assert.equal(can(['--vdev', 'net_null0', '--vdev', 'net_null1']), false);
  });

  it('replays forever with infinite_rx=1 until --duration', () => {
    writeCapture(path('loop.pcap'), packets([64, 128, 256]));
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${path('loop.pcap')},infinite_rx=1`, '--vdev', 'net_null1', '--', '--duration=0.5', '--json', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { ports: { port: number; rxPackets: number }[] };
    assert.ok(j.ports[0]!.rxPackets > 1000, `replayed ${j.ports[0]!.rxPackets} packets`);
  });

  it('forwards the good records of a capture cut mid-record, counts the cut one as an rx error and says so once', () => {
    writeCapture(path('whole.pcap'), packets([64, 64, 1000]));
    const whole = readFileSync(path('whole.pcap'));
    const bad = path('cut.pcap');
    writeFileSync(bad, whole.subarray(0, whole.length - 500));
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${bad}`, '--vdev', `net_pcap1,tx_pcap=${path('cut-out.pcap')}`, '--', '--total-num-mbufs=8192', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { ports: { port: number; rxPackets: number; nic: { ierrors: number } }[] };
    assert.deepEqual([j.ports[0]!.rxPackets, j.ports[0]!.nic.ierrors], [2, 1]);
    assert.equal(readCapture(path('cut-out.pcap')).length, 2, 'the good records went through');
    assert.equal(r.stderr.match(/truncated record/g)?.length, 1, r.stderr);
    assert.match(r.stderr, /net_pcap0: rx_pcap=.*cut\.pcap: offset 184: truncated record: 1016 bytes needed, 516 left in the file.*counted as an rx error/);
    assert.doesNotMatch(r.stderr, /\(node:\d+\)|Warning/);
  });

  it('stops with exit 1 naming the lcore and the record when a capture turns out malformed while forwarding', () => {
    writeCapture(path('ok3.pcap'), packets([64, 64, 64]));
    const b = readFileSync(path('ok3.pcap'));
    b.writeUInt32LE(0x7fffffff, 24 + 80 + 8); // the second record's caplen: larger than any snaplen
    writeFileSync(path('corrupt.pcap'), b);
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${path('corrupt.pcap')}`, '--vdev', 'net_null1', '--', '--total-num-mbufs=8192', '--stats-period=1']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^dpkit: lcore 1: .*corrupt\.pcap: offset 104: record caplen 2147483647 is larger than 262144: corrupt record header$/m);
  });

  it('says which capture is no capture, and why, before any port starts', () => {
    const bad = path('short.bin');
    writeFileSync(bad, Buffer.from('not a capture at all, no'));
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${bad}`]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^dpkit: net_pcap0: rx_pcap=.*short\.bin: offset 0: bad magic 0x6e6f7420: not a pcap or pcapng capture\n$/);
  });

  it('swaps MACs as tshark sees them', { skip: !TSHARK && !REQUIRED && 'tshark not installed (apt-get install tshark; .ci/run does)' }, () => {
    const pkts = packets(Array(20).fill(100)).map((p, i) => ({ ...p, bytes: frame(100 + i, i) }));
    writeCapture(path('ms-in.pcap'), pkts);
    const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${path('ms-in.pcap')}`, '--vdev', `net_pcap1,tx_pcap=${path('ms-out.pcap')}`, '--', '--forward-mode=macswap', '--total-num-mbufs=8192']);
    assert.equal(r.code, 0, r.stderr);
    const before = tshark(path('ms-in.pcap'), ['eth.src', 'eth.dst', 'frame.len']);
    const afterSwap = tshark(path('ms-out.pcap'), ['eth.src', 'eth.dst', 'frame.len']);
    assert.equal(afterSwap.length, 20);
    afterSwap.forEach(([src, dst, len], i) => assert.deepEqual([src, dst, len], [before[i]![1], before[i]![0], before[i]![2]]));
  });
});
