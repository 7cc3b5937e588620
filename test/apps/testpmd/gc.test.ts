// Forwarding lcores hand over their garbage collections when the main thread asks: each answer
// once, an open ask never asked twice (its answer covers the whole time), the count exact past
// the pauses a block lists; and a real lcore whose engine allocates shows its collections.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import type { GCProfiler } from 'node:v8';
import { LcoreGcAnswer, LcoreGcAsk, newLcoreGc } from '../../../src/apps/testpmd/gc.js';
import { LCORE_GC_PAUSES_MAX } from '../../../src/apps/testpmd/gc-layout.js';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { setup } from '../../helpers.js';

/** A GCProfiler whose spans hold the pauses (µs) pushed into `pending`; counts its stops. */
function fakeProfiler() {
  const p = {
    pending: [] as number[],
    stops: 0,
    start(): void {},
    stop() {
      p.stops++;
      const statistics = p.pending.map((cost) => ({ gcType: 'Scavenge', cost }));
      p.pending = [];
      return { version: 1, startTime: 0, endTime: 0, statistics };
    },
  };
  return p;
}

describe('lcore GC hand-over', () => {
  it('answers only when asked, each answer is taken once, and an open ask is not asked again', () => {
    const { heap } = setup();
    const block = newLcoreGc(heap);
    const prof = fakeProfiler();
    const lcore = new LcoreGcAnswer(heap, block, prof as unknown as GCProfiler);
    const main = new LcoreGcAsk(heap, block);
    lcore.check();
    assert.equal(prof.stops, 0, 'nothing asked: the profiler runs on');
    assert.equal(main.take(), undefined);

    prof.pending.push(1500, 250);
    main.ask();
    assert.equal(main.take(), undefined, 'not answered yet');
    lcore.check();
    lcore.check();
    assert.equal(prof.stops, 1, 'one answer per ask');
    assert.deepEqual(main.take(), { count: 2, totalMs: 1.75, maxMs: 1.5, pausesMs: [1.5, 0.25] });
    assert.equal(main.take(), undefined, 'taken once');

    // The lcore is slow to answer: the sampler asks twice, the one answer covers both.
    main.ask();
    prof.pending.push(100);
    main.ask();
    prof.pending.push(300);
    lcore.check();
    assert.deepEqual(main.take(), { count: 2, totalMs: 0.4, maxMs: 0.3, pausesMs: [0.1, 0.3] });
    main.ask();
    lcore.check();
    assert.deepEqual(main.take(), { count: 0, totalMs: 0, maxMs: 0, pausesMs: [] });

    prof.pending.push(7);
    assert.equal(lcore.finish(), 5, 'every collection while forwarding, the last span too');
  });

  it('counts past the pauses it lists, with the exact longest pause and sum', () => {
    const { heap } = setup();
    const block = newLcoreGc(heap);
    const prof = fakeProfiler();
    const lcore = new LcoreGcAnswer(heap, block, prof as unknown as GCProfiler);
    const main = new LcoreGcAsk(heap, block);
    const n = LCORE_GC_PAUSES_MAX + 10;
    for (let i = 0; i < n; i++) prof.pending.push(i === n - 1 ? 90_000 : 1000);
    main.ask();
    lcore.check();
    const got = main.take()!;
    assert.equal(got.count, n);
    assert.equal(got.pausesMs.length, LCORE_GC_PAUSES_MAX);
    assert.equal(got.maxMs, 90);
    assert.equal(got.totalMs, (n - 1) * 1 + 90);
  });
});

describe('testpmd lcoreGc()', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-lcore-gc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('shows the collections of an lcore whose engine allocates on every burst, and counts them at stop', async () => {
    // Makes a few hundred objects a burst and keeps the last batch: young garbage, steadily.
    const file = join(dir, 'alloc.mjs');
    writeFileSync(file, 'let keep;\nexport const engine = { burst(b, n) { const a = []; for (let i = 0; i < 256; i++) a.push({ i }); keep = a; return n; } };\n');
    const pmd = new Testpmd(parseTestpmdArgs(['-l', '0-1', '--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64', '--', '--total-num-mbufs=8192', `--forward-mode=${file}`], [0, 1]), () => {});
    let seen = 0;
    try {
      await pmd.start();
      // Asks until collections show (a hang, not a timing window, after a minute).
      for (const end = Date.now() + 60_000; seen === 0 && Date.now() < end; ) {
        await sleep(100);
        for (const { lcore, gc } of await pmd.lcoreGc()) {
          assert.equal(lcore, 1);
          assert.equal(gc.pausesMs.length, Math.min(gc.count, LCORE_GC_PAUSES_MAX));
          for (const p of gc.pausesMs) assert.ok(p > 0 && p <= gc.maxMs);
          seen += gc.count;
        }
      }
      assert.ok(seen > 0, 'the allocating lcore collected garbage');
      await pmd.stop();
      assert.ok(pmd.gcOfLcore.get(1)! >= seen, 'the count at stop includes every one handed over');
      assert.deepEqual(await pmd.lcoreGc(), [], 'nothing to ask once stopped');
    } finally {
      if (pmd.forwarding) await pmd.stop();
      pmd.close();
    }
  });
});
