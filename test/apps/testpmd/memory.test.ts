import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DPKIT, testpmd } from './run.js';

describe('testpmd when memory runs short', () => {
  it('a pool too large for the heap fails at start with the sizes named, in one line', () => {
    const r = testpmd(['--', '--total-num-mbufs=100000000', '--duration=0.1']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^dpkit: --total-num-mbufs=100000000 of 2176-byte buffers \(--mbuf-size\) need \d+\.\d GiB of heap with the ports; the heap \(one wasm32 memory\) holds at most 4 GiB: at most \d+ mbufs of this size\n$/);
  });

  it('a heap the machine will not reserve (ulimit -v) is named, in one line', () => {
    // 8 GB of address space lets node start; a heap reserves ~10 GiB with its guard region.
    const r = spawnSync('bash', ['-c', `ulimit -v 8000000; exec "${process.execPath}" "${DPKIT}" testpmd -- --duration=0.1 --total-num-mbufs=8192`], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^dpkit: heap of \d+ MiB: the WebAssembly memory could not be reserved \(.*could not allocate memory\); a limit on address space \(ulimit -v\) or on memory refuses it\n$/);
  });
});
