import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { MapRefusedError, NativeError, typedError } from '../../src/native/native.js';

describe('the native shim, loaded or not', () => {
  it('without the shim, a feature that needs it fails with one line saying why', () => {
    // DPKIT_NO_NATIVE makes the loader behave as where no compiler built the shim.
    const script = `
      import { unixListen } from './src/native/unix.ts';
      import { requireNative } from './src/native/native.ts';
      for (const f of [() => unixListen('/tmp/x.sock', 'stream'), () => requireNative('net_vhost0')]) {
        try { f(); } catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }
      }`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, DPKIT_NO_NATIVE: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l)), [
      { name: 'NativeUnavailableError', code: 'ENOTSUP', message: 'unix socket /tmp/x.sock: needs the native shim (native/), which is disabled (DPKIT_NO_NATIVE is set)' },
      { name: 'NativeUnavailableError', code: 'ENOTSUP', message: 'net_vhost0: needs the native shim (native/), which is disabled (DPKIT_NO_NATIVE is set)' },
    ]);
  });

  it("turns the shim's errors into typed ones: NativeError for a failed call, MapRefusedError for a refused mapping", () => {
    const sys = Object.assign(new Error('connect /x: No such file or directory (ENOENT)'), { kind: 'sys', code: 'ENOENT', errno: 2, syscall: 'connect', what: '/x' });
    const e = typedError(sys) as NativeError;
    assert.ok(e instanceof NativeError);
    assert.deepEqual([e.code, e.errno, e.syscall, e.what, e.message], ['ENOENT', 2, 'connect', '/x', sys.message]);
    const refused = typedError(Object.assign(new Error('mapWindow: window [0x0, 0x1000): length is 0'), { kind: 'refused', code: 'EINVAL' }));
    assert.ok(refused instanceof MapRefusedError);
    const other = new TypeError('watch(fd: number, ...)');
    assert.equal(typedError(other), other, 'a usage error stays a TypeError');
  });
});
