import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchmarks } from '../../../bench/index.js';
import { loadBenchmark, runBenchmark } from '../../../src/apps/bench/runner.js';

describe('bench memif-copy', () => {
  it('moves every burst through tx and rx at each size, allocating nothing, pools full after', async () => {
    const b = await loadBenchmark(benchmarks, 'memif-copy');
    // A worker that lost a packet or leaked an mbuf throws, and the run rejects.
    const rows = await runBenchmark(b, { reps: 1, durationMs: 100, warmupMs: 50, quick: true });
    assert.deepEqual(
      rows.map((r) => r.name),
      ['tx+rx 64 B, wasm', 'tx+rx 1518 B, wasm', 'tx+rx 9000 B, wasm', 'tx+rx 64 B, ts', 'tx+rx 1518 B, ts', '2 threads 64 B, wasm', '2 threads 1518 B, wasm'],
    );
    for (const r of rows) {
      assert.ok(r.samples[0]! > 0, `${r.name}: ${r.samples[0]} Mpps`);
      assert.equal(r.gc, 0, `${r.name} allocated on its hot path`);
    }
  });
});
