import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { otherLoad, type CpuSnapshot } from '../../../src/apps/bench/machine.js';
import type { Cell, MatrixConfig, Variant } from '../../../src/apps/bench/matrix.js';
import { runMatrix } from '../../../src/apps/bench/matrix-run.js';
import { pairOutcome, runTestpmd } from '../../../src/apps/bench/testpmd-run.js';
import { BenchRunError } from '../../../src/errors.js';
import { cellWarnings, compareReports, readReport, REPORT_SCHEMA, summarizeArm } from '../../../src/apps/bench/report.js';
import { renderCompare, renderText } from '../../../src/apps/bench/render-text.js';
import { updateDocs } from '../../../src/apps/bench/render-docs.js';

const config: MatrixConfig = {
  name: 'synthetic',
  title: 'synthetic arms with known answers',
  matrix: [{ engines: ['io'], sizes: [64, 1518], lcores: [1, 2] }],
  variants: [{ name: 'base' }, { name: 'same' }, { name: 'plus10' }, { name: 'minus5' }, { name: 'dpdk', system: 'dpdk' }],
  pairs: 7,
  seconds: 1,
  warmup: 0,
};

/** Mpps of an arm: a known factor on a per-cell base, with ±1 % deterministic noise. */
function synthetic() {
  const calls: string[] = [];
  let k = 0;
  const factor: Record<string, number> = { base: 1, same: 1, plus10: 1.1, minus5: 0.95, dpdk: 0.5 };
  const measure = async (cell: Cell, v: Variant) => {
    calls.push(`${cell.id}/${v.name}`);
    const noise = 1 + 0.01 * Math.sin(++k * 2.7);
    return (cell.size === 64 ? 100 : 80) * cell.lcores * 0.9 * factor[v.name]! * noise;
  };
  return { calls, measure };
}

describe('bench matrix runs', () => {
  it('measures every arm pairs times per cell and calls the known differences right', async () => {
    const s = synthetic();
    const progress: string[] = [];
    const r = await runMatrix(config, { measure: s.measure, dpdk: false, progress: (l) => progress.push(l), command: 'test' });
    assert.equal(s.calls.length, 4 * 4 * 7, 'dpdk skipped: 4 cells x 4 arms x 7 pairs');
    assert.match(r.warnings[0]!, /skipped dpdk: dpdk-testpmd is not installed/);
    assert.equal(r.schema, REPORT_SCHEMA);
    assert.equal(r.cells.length, 4);
    for (const c of r.cells) {
      assert.deepEqual(c.arms.map((a) => a.name), ['base', 'same', 'plus10', 'minus5']);
      for (const a of c.arms) {
        assert.equal(a.samples.length, 7);
        assert.deepEqual([...a.pairs].sort(), [0, 1, 2, 3, 4, 5, 6]);
        assert.ok(a.min <= a.median && a.median <= a.max);
      }
      const v = Object.fromEntries(c.comparisons.map((k) => [k.b, k]));
      assert.equal(v['same']!.verdict, 'no significant difference');
      assert.equal(v['plus10']!.verdict, 'faster');
      assert.ok(v['plus10']!.lo < 1.1 && 1.1 < v['plus10']!.hi, `1.1 inside ${v['plus10']!.lo}..${v['plus10']!.hi}`);
      assert.equal(v['minus5']!.verdict, 'slower');
    }
    const sc = r.scaling.find((x) => x.size === 64 && x.arm === 'base')!;
    assert.ok(Math.abs(sc.ratio - 2) < 0.05 && sc.lcores === 2, `2c / 1c ${sc.ratio}`);
    assert.equal(progress.length, s.calls.length);
    assert.match(progress[0]!, /^\[1\/112\] io 64 B 1c burst 32 · \S+ · pair 1\/7$/);
    assert.match(progress[5]!, /^\[6\/112\] .* · ETA \d+:\d\d$/);
    const text = renderText(r);
    assert.match(text, /TEST IO 64B 1Q 1C: <B vs A : Before : After>/);
    assert.match(text, / - plus10 vs base : [\d.]+ : [\d.]+ \(\+10\.\d %, 95 % CI [\d.]+\.\.[\d.]+: faster\)/);
    assert.match(text, /Scaling with forwarding lcores/);
  });

  it('runs the DPDK arm when DPDK is there, and saves a report that reads back and compares', async () => {
    const s = synthetic();
    const r = await runMatrix({ ...config, matrix: [{ engines: ['io'], sizes: [64], lcores: [1] }], variants: config.variants.slice(0, 3).concat(config.variants[4]!) }, { measure: s.measure, dpdk: true });
    assert.ok(s.calls.some((c) => c.endsWith('/dpdk')));
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-'));
    const file = join(dir, 'a.json');
    writeFileSync(file, JSON.stringify(r));
    const back = readReport(file);
    assert.deepEqual(back.cells[0]!.arms[2]!.samples, r.cells[0]!.arms[2]!.samples);
    const same = compareReports(back, r);
    assert.equal(same.rows.length, 4);
    assert.ok(same.rows.every((row) => row.comparison.ratio === 1 && row.comparison.verdict === 'no significant difference'));
    // A "new" run where plus10 got 10 % faster again.
    const newer = structuredClone(r);
    const arm = newer.cells[0]!.arms.find((a) => a.name === 'plus10')!;
    Object.assign(arm, summarizeArm({ ...arm, samples: arm.samples.map((x) => x * 1.1) }));
    newer.cells[0]!.arms.push({ ...arm, name: 'added' });
    const cmp = compareReports(r, newer);
    assert.equal(cmp.rows.find((x) => x.arm === 'plus10')!.comparison.verdict, 'faster');
    assert.equal(cmp.rows.find((x) => x.arm === 'base')!.comparison.verdict, 'no significant difference');
    assert.deepEqual(cmp.onlyNew, ['io 64 B 1c burst 32 · added']);
    assert.match(renderCompare('a.json', 'b.json', cmp), /plus10 .* 1\.100 \(\+10\.0 %\) .* faster/);
  });

  it('costs a failing run one retry, then one left-out sample with its reason, never the matrix', async () => {
    const tries = new Map<string, number>();
    const measure = async (cell: Cell, v: Variant) => {
      const key = `${cell.id}/${v.name}`;
      const n = (tries.get(key) ?? 0) + 1;
      tries.set(key, n);
      // "flaky" fails its first run in each cell once; "broken" fails always; a bug is not a failed run.
      if (v.name === 'flaky' && n === 1) throw new BenchRunError('dpdk testpmd printed no throughput (2 blocks)', '/tmp/x.log');
      if (v.name === 'broken') throw new BenchRunError('dpdk testpmd exited with 1', '/tmp/y.log');
      return 10;
    };
    const r = await runMatrix({ ...config, matrix: [{ sizes: [64] }], variants: [{ name: 'base' }, { name: 'flaky' }, { name: 'broken' }], pairs: 3 }, { measure, dpdk: false });
    const [base, flaky, broken] = r.cells[0]!.arms;
    assert.deepEqual(base!.samples, [10, 10, 10]);
    assert.deepEqual(flaky!.samples, [10, 10, 10], 'the retry measured');
    assert.deepEqual(flaky!.failures, []);
    assert.deepEqual(broken!.samples, []);
    assert.equal(broken!.failures!.length, 3);
    assert.match(broken!.failures![0]!, /^dpdk testpmd exited with 1 \(log: \/tmp\/y\.log\)$/);
    assert.equal(r.warnings.filter((w) => /broken, pair \d: failed twice, left out: dpdk testpmd exited with 1/.test(w)).length, 3);
    assert.match(renderText(r), /broken/);
    const bug = async () => {
      throw new TypeError('a bug');
    };
    await assert.rejects(runMatrix({ ...config, matrix: [{ sizes: [64] }], variants: [{ name: 'base' }], pairs: 2 }, { measure: bug, dpdk: false }), TypeError);
  });

  it('reports a testpmd that exits early as a failed run with the log of what it printed', async () => {
    const e = await runTestpmd({ system: 'dpkit', eal: ['--vdev', 'net_null0'], app: ['--forward-mode=nosuchmode'], seconds: 1, warmup: 0, countTx: false }).then(
      () => assert.fail('expected a failed run'),
      (x: unknown) => x,
    );
    assert.ok(e instanceof BenchRunError, String(e));
    assert.match(e.message, /^dpkit testpmd exited with 2: .*nosuchmode.* \(log: .*dpkit-bench-logs\/dpkit-\d+-\d+\.log\)$/);
    assert.match(readFileSync(e.log!, 'utf8'), /--forward-mode=nosuchmode[\s\S]*--- stderr\n.*unknown/);
  });

  it('stops a dpkit run once its measured blocks are in, and a peer only when the run it serves ends', async () => {
    const base = { system: 'dpkit' as const, eal: ['--vdev', 'net_null0'], app: ['--forward-mode=io'], seconds: 1, warmup: 0, countTx: false };
    const seen = (into: string[]) => (text: string) => (into[0] = text);
    // A start-up allowance of a minute is only a bound: the run is stopped by SIGINT when its block is in.
    const own: string[] = [];
    assert.ok((await runTestpmd({ ...base, startup: 60, onOutput: seen(own) })) > 0);
    assert.match(own[0]!, /Signal 2 received, preparing to exit/);
    // A peer whose run never ends is not stopped at its own blocks: it runs to its --duration.
    const unstopped: string[] = [];
    assert.ok((await runTestpmd({ ...base, stopWhen: new Promise(() => {}), onOutput: seen(unstopped) })) > 0);
    assert.doesNotMatch(unstopped[0]!, /Signal 2 received/);
    // A peer whose run has ended is stopped, whatever its own allowance.
    const stopped: string[] = [];
    let end!: () => void;
    const served = new Promise<void>((r) => (end = r));
    const peer = runTestpmd({ ...base, startup: 60, stopWhen: served, onOutput: (text) => (seen(stopped)(text), text.includes('Port statistics ====') && end()) });
    await peer.catch(() => {}); // stopped at its first block, it may have no measured second
    assert.match(stopped[0]!, /Signal 2 received, preparing to exit/);
  });

  it("gives a pair's measured rate, or its failure with the other side's beside it when both failed", () => {
    const ok = (v: number): PromiseSettledResult<number> => ({ status: 'fulfilled', value: v });
    const no = (m: string): PromiseSettledResult<number> => ({ status: 'rejected', reason: new BenchRunError(m) });
    assert.equal(pairOutcome({ role: 'server', result: ok(12.5) }, { role: 'client', result: no('exited with 1') }), 12.5);
    assert.throws(() => pairOutcome({ role: 'guest', result: no('printed no throughput') }, { role: 'host', result: ok(3) }), (e: Error) => e instanceof BenchRunError && e.message === 'printed no throughput');
    assert.throws(
      () => pairOutcome({ role: 'guest', result: no('printed no throughput') }, { role: 'host', result: no('exited with 1: EAL: cannot map') }),
      (e: Error) => e instanceof BenchRunError && e.message === 'guest: printed no throughput; host: exited with 1: EAL: cannot map',
    );
  });

  it('refuses files that are not reports, naming the file and the problem', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-'));
    const put = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    assert.throws(() => readReport(put('x.json', '{"cells":')), /x.json: not a bench report: .*JSON/);
    assert.throws(() => readReport(put('y.json', '{"schema":"other"}')), /y.json: not a bench report: schema is "other", expected "dpkit-bench\/1"/);
    assert.throws(() => readReport(put('z.json', JSON.stringify({ schema: REPORT_SCHEMA, cells: [{ id: 'c', arms: [{ name: 'a', samples: [1, 'x'] }] }] }))), /cells\[0\].arms\[0\].samples: expected a list of numbers/);
  });

  it('counts only other processes as load, and flags runs that had it', () => {
    const snap = (at: number, procs: [number, number, number][]): CpuSnapshot => ({ at, procs: new Map(procs.map(([pid, ppid, ticks]) => [pid, { ppid, ticks }])) });
    // pid 100 is the bench; 101 its testpmd, 102 a grandchild; 200 someone else.
    const before = snap(0, [[100, 1, 0], [101, 100, 0], [102, 101, 0], [200, 1, 1000]]);
    const after = snap(2000, [[100, 1, 50], [101, 100, 400], [102, 101, 400], [200, 1, 1100], [300, 1, 20]]);
    const ticks = 100; // USER_HZ on Linux
    assert.ok(Math.abs(otherLoad(before, after, 100) - (100 + 20) / ticks / 2) < 1e-9);
    const arm = summarizeArm({ name: 'a', system: 'dpkit', samples: [1, 1, 1, 1, 1], load: [0, 0.6, 0, 0.1, 0], pairs: [0, 1, 2, 3, 4] });
    assert.deepEqual(cellWarnings({ id: 'io 64 B 1c burst 32', arms: [arm] }), ['io 64 B 1c burst 32, a: other load up to 0.60 CPUs in 1 of 5 runs']);
  });

  it('rewrites only its own block of the docs', async () => {
    const r = await runMatrix({ ...config, matrix: [{ sizes: [64] }], variants: [{ name: 'base' }] }, { measure: synthetic().measure, dpdk: false, command: 'dpkit bench --preset synthetic' });
    const first = updateDocs('# Benchmarks\n\nHand-written text.\n', r);
    assert.match(first, /^# Benchmarks\n\nHand-written text\.\n\n<!-- dpkit bench synthetic: begin/);
    assert.match(first, /Generated by `dpkit bench --preset synthetic`/);
    const again = updateDocs(first.replace('Hand-written text.', 'Edited text.') + '\nAfter.\n', r);
    assert.equal(again.match(/dpkit bench synthetic: begin/g)!.length, 1);
    assert.match(again, /Edited text\.[\s\S]*TEST IO 64B[\s\S]*end -->\n\nAfter\.\n$/);
  });
});
