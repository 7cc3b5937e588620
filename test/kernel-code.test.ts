import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

const run = (...args: string[]) => spawnSync(process.execPath, ['scripts/kernel-code.js', ...args], { encoding: 'utf8' });

it('node scripts/kernel-code.js prints the code TurboFan makes of one kernel, by its exported name', () => {
  const list = run('--list');
  assert.equal(list.status, 0, list.stderr);
  const names = list.stdout.trim().split('\n');
  assert.ok(names.includes('macswapInterleave') && names.includes('pcapReplay'), names.join(' '));
  const r = run('macswapInterleave');
  assert.equal(r.status, 0, r.stderr);
  const [head, ...rest] = r.stdout.split('\n');
  const index = /^macswapInterleave \(wasm-function\[(\d+)\]\)$/.exec(head!);
  assert.ok(index, head);
  const body = rest.join('\n');
  assert.match(body, new RegExp(`name: wasm-function\\[${index[1]}\\]\\n`));
  assert.match(body, /compiler: TurboFan/);
  // Its four shuffles, each a vpshufb (or pshufb without AVX).
  assert.ok((body.match(/pshufb/g) ?? []).length >= 4, 'the interleaved loop shuffles four packets');
});

it('node scripts/kernel-code.js names an unknown kernel in one line', () => {
  const r = run('noSuchKernel');
  assert.equal(r.status, 1);
  assert.equal(r.stderr, 'kernel-code: build/kernels/dpkit.wasm exports no kernel noSuchKernel (--list names them)\n');
});
