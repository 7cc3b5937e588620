import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchmarks } from '../../../bench/index.js';
import { presets } from '../../../src/apps/bench/presets.js';
import { renderText } from '../../../src/apps/bench/render-text.js';
import { ceilingShare, CEILING_ROW, REPORT_SCHEMA, summarizeArm, type BenchReport } from '../../../src/apps/bench/report.js';
import { loadBenchmark, runBenchmark } from '../../../src/apps/bench/runner.js';

describe('ceiling', () => {
  it('measures the bare loop, a ring and null rx+tx with no engine, allocating nothing', async () => {
    const b = await loadBenchmark(benchmarks, 'ceiling');
    const rows = await runBenchmark(b, { reps: 1, durationMs: 100, warmupMs: 50, quick: true });
    assert.deepEqual(
      rows.map((r) => r.name),
      ['poll loop', 'ring enqueue+dequeue', CEILING_ROW],
    );
    for (const r of rows) {
      assert.ok(r.samples[0]! > 0, `${r.name}: ${r.samples[0]} Mpps`);
      assert.equal(r.gc, 0, `${r.name} allocated on its hot path`);
    }
  });

  it("prints each arm as a share of null rx+tx times the cell's lcores", () => {
    const arm = (name: string, samples: number[]) => summarizeArm({ name, system: 'dpkit', samples, load: samples.map(() => 0), pairs: samples.map((_, i) => i) });
    const config = presets.get('testpmd')!;
    const cell = (lcores: number) => ({ id: `io 64 B ${lcores}c burst 32`, engine: 'io', size: 64, lcores, burst: 32, arms: [arm('dpkit', [40, 40])], comparisons: [], warnings: [] });
    const r: BenchReport = {
      schema: REPORT_SCHEMA,
      name: 'testpmd',
      title: 't',
      command: '',
      config,
      machine: { cpu: 'x', cores: 2, kernel: 'k', node: 'v20', dpkit: '0', dpdk: null, affinity: false, loadavg: [0, 0, 0] },
      started: '',
      finished: '',
      cells: [cell(1), cell(2)],
      scaling: [],
      warnings: [],
      ceiling: [
        { name: 'poll loop', mpps: 1000 },
        { name: CEILING_ROW, mpps: 80 },
      ],
    };
    assert.equal(ceilingShare(r, 1, 40), 0.5);
    assert.equal(ceilingShare({}, 1, 40), undefined);
    const text = renderText(r);
    assert.match(text, /^ceiling, one lcore, no engine \(bench ceiling\): poll loop 1000\.00, null rx\+tx 80\.00 Mpps/m);
    assert.match(text, /^ - dpkit : 40\.00 \[40\.00\.\.40\.00\] \(50 % of ceiling\)$/m);
    assert.match(text, /^ - dpkit : 40\.00 \[40\.00\.\.40\.00\] \(25 % of ceiling\)$/m);
  });
});
