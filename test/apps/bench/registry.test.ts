import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { benchmarks } from '../../../bench/index.js';
import { presets } from '../../../src/apps/bench/presets.js';
import { listBenchmarks, loadBenchmark } from '../../../src/apps/bench/runner.js';

describe('micro-benchmark registry (bench/index.ts)', () => {
  it('lists every benchmark module in bench/, each under the name it reports', async () => {
    const dir = fileURLToPath(new URL('../../../bench/', import.meta.url));
    const modules = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.includes('.worker.') && f !== 'index.ts')
      .map((f) => f.slice(0, -3))
      .sort();
    assert.deepEqual(listBenchmarks(benchmarks), modules);
    for (const name of modules) assert.equal((await loadBenchmark(benchmarks, name)).name, name);
  });

  it('shares no name with a preset, which `dpkit bench NAME` would run instead', () => {
    for (const name of listBenchmarks(benchmarks)) assert.equal(presets.has(name), false, `bench ${name} is a preset's name too`);
  });

  it('refuses an unknown name, naming the known ones', async () => {
    await assert.rejects(loadBenchmark(benchmarks, 'nope'), /bench: unknown benchmark 'nope' \(known: api, ceiling, gen, gen-rate, l3fwd, lpm, machine, mem, memif-copy, pcap-file, pipeline, ring, vhost\)/);
    await assert.rejects(loadBenchmark(benchmarks, 'constructor'), /unknown benchmark 'constructor'/);
  });
});
