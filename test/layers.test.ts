import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

it('the folders of src/ form layers: no import points up (node scripts/layers.js)', () => {
  const r = spawnSync(process.execPath, ['scripts/layers.js'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const layer = new Map<string, number>();
  for (const line of r.stdout.trim().split('\n')) {
    const [n, folder] = line.trim().split(/\s+/);
    layer.set(folder!, Number(n));
  }
  // The spine of the data path, bottom to top.
  for (const [low, high] of [['eal', 'ring'], ['ring', 'mem'], ['mem', 'ethdev'], ['ethdev', 'drivers'], ['ethdev', 'fwd'], ['fwd', 'apps']] as const) {
    assert.ok(layer.get(low)! < layer.get(high)!, `${low} is below ${high}`);
  }
});
