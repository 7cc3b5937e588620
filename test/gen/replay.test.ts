import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { init } from '../../src/api/eal.js';
import { replay } from '../../src/gen/replay.js';
import { PcapWriter } from '../../src/pcap/writer.js';
import { portUp } from '../helpers.js';
import { fakeClock } from './clock.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-gen-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A capture of `gapsUs.length + 1` packets of distinct sizes and bytes, spaced by the gaps. */
function capture(gapsUs: number[]): { file: string; packets: Uint8Array[]; timesNs: number[] } {
  const file = join(dir, `c${gapsUs.length}.pcap`);
  const w = PcapWriter.create(file, { resolution: 'ns' });
  const packets: Uint8Array[] = [];
  const timesNs: number[] = [];
  const sec = 1_700_000_000;
  let ns = 999_999_123; // the gaps carry over into the seconds
  for (let i = 0; i <= gapsUs.length; i++) {
    const p = Uint8Array.from({ length: 60 + i }, (_, k) => (k * 7 + i) & 0xff);
    w.write(p, 0, p.length, sec + Math.floor(ns / 1e9), ns % 1e9);
    packets.push(p);
    timesNs.push(i === 0 ? 0 : timesNs[i - 1]! + gapsUs[i - 1]! * 1000);
    ns += (gapsUs[i] ?? 0) * 1000;
  }
  w.close();
  return { file, packets, timesNs };
}

describe('gen --replay: a capture at its own timing', () => {
  it('departs at the file gaps divided by the speed, loops after the span, and sends the bytes as captured', async () => {
    const { file, packets, timesNs } = capture([10, 250, 40, 5000, 1]);
    const eal = init({ lcores: [0], vdevs: ['net_ring0'], mbufs: 1023, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0);
      const due: number[] = [];
      const r = await replay(eal, {
        file,
        speed: 2,
        loops: 2,
        burst: 1,
        clock: fakeClock(),
        onBurst: (_s, _first, _n, deadline) => due.push(deadline),
      });
      assert.ok(r.kept, r.verdict);
      assert.equal(r.streams[0]!.sent, 12);
      const span = timesNs[5]! + timesNs[5]! / 5;
      assert.deepEqual(due.map(Math.round), [...timesNs, ...timesNs.map((t) => t + span)].map((t) => Math.round(t / 2)));
      const burst = eal.burst(32);
      const n = eal.ethdev.rxBurst(0, 0, burst, 32);
      assert.equal(n, 12);
      for (let i = 0; i < n; i++) assert.deepEqual(eal.mbufs.read(burst[i]!), packets[i % 6]);
      eal.mbufs.freeBulk(burst, n);
    } finally {
      await eal.close();
    }
  });

  it('refuses a missing file, a bad speed and an empty capture in one line', async () => {
    const eal = init({ lcores: [0], vdevs: ['net_null0'], mbufs: 1023, memory: 8 << 20 });
    try {
      portUp(eal.ethdev, eal.pool, 0);
      const empty = join(dir, 'empty.pcap');
      PcapWriter.create(empty).close();
      const junk = join(dir, 'junk.pcap');
      writeFileSync(junk, 'not a capture at all, not at all');
      const one = (re: RegExp) => (e: Error) => e.name === 'ArgError' && re.test(e.message) && !e.message.includes('\n');
      await assert.rejects(replay(eal, { file: join(dir, 'nope.pcap') }), one(/^gen: --replay .*nope\.pcap: .*cannot open/));
      await assert.rejects(replay(eal, { file: empty }), one(/^gen: --replay .*empty\.pcap: no packets$/));
      await assert.rejects(replay(eal, { file: junk }), one(/^gen: --replay .*junk\.pcap: /));
      await assert.rejects(replay(eal, { file: empty, speed: 0 }), one(/^gen: --speed 0 must be a positive number$/));
    } finally {
      await eal.close();
    }
  });
});
