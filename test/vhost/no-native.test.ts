// Without the native shim the socket transports cannot exist: a port that
// needs one fails at start with one line that says so, and an in-process pair
// (both ends in one dpkit) still forwards.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { DPKIT } from '../apps/testpmd/run.js';

function testpmdWithoutShim(vdevs: string[]): { code: number | null; stdout: string; stderr: string } {
  const argv = ['testpmd', ...vdevs.flatMap((v) => ['--vdev', v]), '--', '--duration=0.2', '--total-num-mbufs=2048'];
  const r = spawnSync(process.execPath, [DPKIT, ...argv], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, DPKIT_NO_NATIVE: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('vhost-user without the native shim', () => {
  for (const [vdev, name] of [
    ['net_vhost0,iface=/tmp/dpkit-no-shim.sock', 'net_vhost0'],
    ['virtio_user0,path=/tmp/dpkit-no-shim.sock', 'virtio_user0'],
  ] as const) {
    it(`${name} on a socket fails at start with one line naming the shim`, () => {
      const r = testpmdWithoutShim([vdev]);
      assert.notEqual(r.code, 0);
      const said = r.stderr.trim().split('\n');
      assert.equal(said.length, 1, r.stderr);
      assert.match(said[0]!, new RegExp(`${name}: needs the native shim \\(native/\\), which is disabled \\(DPKIT_NO_NATIVE is set\\)`));
    });
  }

  it('an in-process net_vhost / virtio_user pair needs no shim', () => {
    const r = testpmdWithoutShim(['net_vhost0,iface=/tmp/dpkit-pair', 'virtio_user0,path=/tmp/dpkit-pair']);
    assert.equal(r.code, 0, r.stderr);
  });
});
