import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { placeLcores } from '../../src/eal/affinity.js';
import { Lcores } from '../../src/eal/launcher.js';
import { native } from '../../src/native/native.js';

const shim = native();

describe('lcore placement', () => {
  it('builds the native shim on a machine with a compiler (npm install runs scripts/build-native.js)', () => {
    // DPKIT_NO_NATIVE=1 is for running the suite where no compiler exists.
    if (process.env['DPKIT_NO_NATIVE']) return;
    assert.equal(readFileSync(new URL('../../build/native-status.txt', import.meta.url), 'utf8').trim(), 'built');
    assert.ok(shim, 'native/build/Release/dpkit_native.node loads');
  });

  it("follows EAL: lcore N on CPU N, --lcores sets win, missing CPUs float with a note", () => {
    const p = placeLcores([0, 1, 2], new Map([[2, [0]]]), [0, 1]);
    assert.deepEqual([...p.cpus], [[0, [0]], [1, [1]], [2, [0]]]);
    assert.deepEqual(p.notes, []);
    const q = placeLcores([0, 1, 2, 3], undefined, [0, 1]);
    assert.deepEqual([...q.cpus], [[0, [0]], [1, [1]]]);
    assert.deepEqual(q.notes, ['lcores 2,3 float: no CPU 2,3 here (CPUs 0,1)']);
    assert.throws(() => placeLcores([0, 1], new Map([[1, [0, 7]]]), [0, 1]), /lcore 1 on CPU 7, but this process may only use CPUs 0,1/);
  });

  it('floats every lcore, and says why, without the native shim', () => {
    const p = placeLcores([0, 1], new Map([[1, [1]]]), null);
    assert.equal(p.cpus.size, 0);
    assert.match(p.notes[0]!, /^lcores float: no CPU affinity \(native shim /);
  });

  it('pins each lcore worker to its CPU set', { skip: !shim && 'native shim not built' }, async () => {
    const cpus = shim!.getAffinity();
    const last = cpus[cpus.length - 1]!;
    const lc = new Lcores('polling.worker', import.meta.url, [
      { lcoreId: 1, job: {}, cpus: [cpus[0]!] },
      { lcoreId: 2, job: {}, cpus: [last] },
      { lcoreId: 3, job: {} },
    ]);
    while ([9, 10, 11].some((w) => Atomics.load(lc.ctl, w) === 0)) await new Promise((r) => setTimeout(r, 20));
    lc.requestStop();
    const results = (await lc.wait()) as { lcoreId: number; cpu?: number }[];
    assert.deepEqual(results.map((r) => r.cpu), [cpus[0], last, undefined]);
    assert.deepEqual([...lc.cpuOf].sort((a, b) => a[0] - b[0]), [[1, cpus[0]], [2, last]]);
    // The pin is the worker's own: the test's thread keeps every CPU.
    assert.deepEqual(shim!.getAffinity(), cpus);
  });
});
