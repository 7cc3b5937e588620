// The bench harness against a DPDK that fails (issue 23): fake dpdk-testpmd scripts that exit 1,
// print nothing, or die of a signal after a few lines. `dpkit bench --preset testpmd --quick`
// must cost each such run one retry, then leave it out with its reason and log, finish the
// matrix (dpkit's arm still measured), exit 1 with one summary line, and print no stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DPKIT } from '../testpmd/run.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-fake-dpdk-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A fake dpdk-testpmd: answers the version probe (`-v`) as DPDK does, and runs `body` otherwise. */
function fake(name: string, body: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\ncase " $* " in *" -v "*) echo "EAL: RTE Version: 'DPDK 22.11.0'"; exit 0;; esac\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

interface Report {
  cells: { arms: { name: string; samples: number[]; failures?: string[] }[] }[];
}

/** One cell (io, 64 B, 1 lcore) of the testpmd preset, quick. */
function bench(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const json = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  const r = spawnSync(process.execPath, [DPKIT, 'bench', '--preset', 'testpmd', '--quick', '--engines', 'io', '--sizes', '64', '--lcores', '1', '--json', json, ...args], { encoding: 'utf8', env, timeout: 300_000 });
  const out = r.stdout + r.stderr;
  assert.doesNotMatch(out, /^\s+at /m, 'no stack trace');
  return { code: r.status, out, report: existsSync(json) ? (JSON.parse(readFileSync(json, 'utf8')) as Report) : null };
}

/** The arm's runs were each left out after a retry, with `reason` and a log that exists. */
function leftOut(report: Report | null, arm: string, reason: RegExp): void {
  assert.ok(report, 'the report was written');
  const a = report.cells[0]!.arms.find((x) => x.name === arm);
  assert.ok(a, `arm ${arm} in the report`);
  assert.deepEqual(a.samples, []);
  assert.equal(a.failures?.length, 2, 'one failure per pair (--quick: 2)');
  for (const f of a.failures!) {
    assert.match(f, reason);
    const log = /\(log: (.*)\)$/.exec(f)?.[1];
    assert.ok(log && existsSync(log), `the log of the failed run: ${f}`);
  }
}

describe('dpkit bench against a DPDK that fails', () => {
  it('a dpdk-testpmd on PATH that prints nothing: its runs left out, the dpkit arm still measured, exit 1', () => {
    fake('path/dpdk-testpmd', 'exit 0');
    const r = bench(['--arms', 'dpkit,dpdk'], { ...process.env, PATH: `${join(dir, 'path')}:${process.env['PATH']}` });
    assert.equal(r.code, 1, r.out);
    leftOut(r.report, 'dpdk', /^dpdk testpmd printed no throughput \(0 blocks\)/);
    const dpkit = r.report!.cells[0]!.arms.find((x) => x.name === 'dpkit')!;
    assert.equal(dpkit.samples.length, 2, 'the matrix went on: dpkit measured in both pairs');
    assert.ok(dpkit.samples.every((s) => s > 0));
    assert.match(r.out, /pair 1: failed twice, left out: dpdk testpmd printed no throughput/);
    assert.match(r.out, /^dpkit: bench testpmd: 2 runs failed twice and were left out \(see the warnings\)$/m);
  });

  it('a --dpdk testpmd that exits 1: each run left out with its last stderr lines', () => {
    const bin = fake('exit1', 'echo "EAL: FATAL: Cannot init config" >&2\nexit 1');
    const r = bench(['--dpdk', bin, '--arms', 'dpdk-22.11-custom']);
    assert.equal(r.code, 1, r.out);
    leftOut(r.report, 'dpdk-22.11-custom', /^dpdk testpmd exited with 1: EAL: FATAL: Cannot init config \(log: /);
  });

  it('a --dpdk testpmd that dies of SIGSEGV after its banner: left out as printing no throughput', () => {
    const bin = fake('segv', 'echo "EAL: Detected CPU lcores: 2"\necho "Port statistics ===================="\nkill -SEGV $$');
    const r = bench(['--dpdk', bin, '--arms', 'dpdk-22.11-custom']);
    assert.equal(r.code, 1, r.out);
    leftOut(r.report, 'dpdk-22.11-custom', /^dpdk testpmd printed no throughput \(\d blocks\)/);
  });
});
