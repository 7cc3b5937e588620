import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseHashPerf, parseLpmPerf, parseTscHz, readAutotest, runAutotest } from '../../../src/apps/bench/dpdk-test.js';
import { renderTable, runBenchmark } from '../../../src/apps/bench/runner.js';
import type { Benchmark } from '../../../src/apps/bench/types.js';

/** lpm6_perf_autotest's output as Debian's dpdk-test 22.11 printed it here (route distribution cut). */
const LPM6_OUT = `EAL: TSC frequency is ~2450000 KHz
APP: HPET is not enabled, using TSC as default timer
RTE>>lpm6_perf_autotest
No. routes = 1000
Unique added entries = 1000
Average LPM Add: 865090 cycles
Average LPM Lookup: 68.9 cycles (fails = 0.0%)
BULK LPM Lookup: 59.1 cycles (fails = 0.0%)
Average LPM Delete: 6.44158e+06 cycles
Test OK
RTE>>`;

/** hash_perf_autotest's first table, in the columns test_hash_perf.c prints (%-18s). */
const col = (...xs: (string | number)[]) => xs.map((x) => String(x).padEnd(18)).join('');
const HASH_OUT = [
  'EAL: TSC frequency is ~2000000 KHz',
  'Measuring performance, please wait.....',
  'Results (in CPU cycles/operation)',
  '-----------------------------------',
  '',
  ' Operations without data',
  '',
  'Without pre-computed hash values',
  '',
  col('Keysize', 'Add', 'Lookup', 'Lookup_bulk', 'Delete'),
  col(4, 120, 80, 30, 90),
  col(16, 140, 100, 40, 110),
  '',
  'With pre-computed hash values',
  '',
  col('Keysize', 'Add', 'Lookup', 'Lookup_bulk', 'Delete'),
  col(16, 1, 1, 1, 1),
].join('\n');

describe("dpdk-test's autotests, read", () => {
  it("reads lpm_perf's and lpm6_perf's cycles per operation, and EAL's TSC frequency", () => {
    assert.deepEqual(parseLpmPerf(LPM6_OUT), { add: 865090, lookup: 68.9, bulk: 59.1 });
    assert.deepEqual(parseLpmPerf('Average LPM Add: 1.5e+03 cycles\nLPM LookupX4: 12.5 cycles (fails = 3.0%)\n'), { add: 1500, x4: 12.5 });
    assert.equal(parseTscHz(LPM6_OUT), 2_450_000_000);
    assert.equal(parseTscHz('EAL: Detected CPU lcores: 2'), undefined);
  });

  it("reads hash_perf's 16-byte row of the first table (no data, no pre-computed hash), not a later one", () => {
    assert.deepEqual(parseHashPerf(HASH_OUT), { add: 140, lookup: 100, bulk: 40 });
    assert.deepEqual(parseHashPerf(HASH_OUT, 4), { add: 120, lookup: 80, bulk: 30 });
    assert.deepEqual(parseHashPerf('Measuring performance, please wait...'), {});
  });

  it('turns a run without results, without the TSC line or reporting failure into a reason, never figures', () => {
    assert.deepEqual(readAutotest('lpm6_perf_autotest', LPM6_OUT, null), { cycles: { add: 865090, lookup: 68.9, bulk: 59.1 }, tscHz: 2_450_000_000 });
    assert.deepEqual(readAutotest('lpm_perf_autotest', '', 'exited with 1'), { failed: 'lpm_perf_autotest exited with 1 and printed none of its results (no output)' });
    assert.deepEqual(readAutotest('hash_perf_autotest', 'EAL: x\nRTE>>hash_perf_autotest\nCannot allocate memory', 'exited with 1'), {
      failed: 'hash_perf_autotest exited with 1 and printed none of its results (last line: Cannot allocate memory)',
    });
    assert.match((readAutotest('lpm6_perf_autotest', LPM6_OUT.replace(/EAL: TSC.*\n/, ''), null) as { failed: string }).failed, /no 'TSC frequency' line/);
    assert.match((readAutotest('lpm6_perf_autotest', LPM6_OUT.replace('Test OK', 'Test Failed'), null) as { failed: string }).failed, /reported Test Failed/);
  });
});

describe('a DPDK run that fails', () => {
  /** Runs `body` with a fake dpdk-test (a shell script) first on PATH. */
  async function withFakeDpdkTest(script: string, body: () => Promise<void>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-fake-dpdk-test-'));
    const path = process.env['PATH'];
    try {
      writeFileSync(join(dir, 'dpdk-test'), `#!/bin/sh\n${script}\n`);
      chmodSync(join(dir, 'dpdk-test'), 0o755);
      process.env['PATH'] = `${dir}:${path ?? ''}`;
      await body();
    } finally {
      process.env['PATH'] = path;
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('is an outcome naming the exit, not an exception, when it prints nothing', () =>
    withFakeDpdkTest('exit 3', async () => {
      assert.deepEqual(await runAutotest('lpm_perf_autotest'), { failed: 'lpm_perf_autotest exited with 3 and printed none of its results (no output)' });
    }));

  it('that outlives its timeout is killed and said so', () =>
    withFakeDpdkTest('exec sleep 30', async () => {
      assert.deepEqual(await runAutotest('hash_perf_autotest', 1), { failed: 'hash_perf_autotest did not finish in 1 s and printed none of its results (no output)' });
    }));

  it('gives its figures when the fake prints the real lines (the command it was sent arrives on stdin)', () =>
    withFakeDpdkTest(`read cmd; [ "$cmd" = lpm6_perf_autotest ] && printf '%s\\n' 'EAL: TSC frequency is ~1000000 KHz' 'Average LPM Lookup: 100.0 cycles (fails = 0.0%)'`, async () => {
      assert.deepEqual(await runAutotest('lpm6_perf_autotest'), { cycles: { lookup: 100 }, tscHz: 1e9 });
    }));

  it('is not waited for once every wanted figure is printed (the rest of an autotest takes many minutes)', () =>
    withFakeDpdkTest(
      `printf '%s\\n' 'EAL: TSC frequency is ~1000000 KHz' 'Average LPM Add: 2000 cycles' 'Average LPM Lookup: 50.0 cycles (fails = 1.0%)' 'BULK LPM Lookup: 25.0 cycles (fails = 1.0%)'; exec sleep 60`,
      async () => {
        // Waiting for the fake's end would be a timeout, reported as a failure: figures mean it was stopped.
        assert.deepEqual(await runAutotest('lpm6_perf_autotest', 50), { cycles: { add: 2000, lookup: 50, bulk: 25 }, tscHz: 1e9 });
      },
    ));

  it("leaves a micro-benchmark's case without a sample and lists why under the table", async () => {
    const bench: Benchmark = {
      name: 't',
      title: 'T',
      cases: () => [
        { name: 'ok', params: {}, measure: () => Promise.resolve({ mpps: 2, gc: 0 }) },
        { name: 'dpdk', params: {}, measure: () => Promise.resolve({ failed: 'lpm_perf_autotest exited with 3' }) },
      ],
    };
    const results = await runBenchmark(bench, { reps: 2, durationMs: 1, warmupMs: 1, quick: true });
    assert.deepEqual(results.map((r) => [r.name, r.samples, r.failures]), [
      ['ok', [2, 2], []],
      ['dpdk', [], ['lpm_perf_autotest exited with 3', 'lpm_perf_autotest exited with 3']],
    ]);
    assert.match(renderTable('T', results), /Repetitions without a figure:\n {2}dpdk: no figure, lpm_perf_autotest exited with 3\n$/);
  });
});
