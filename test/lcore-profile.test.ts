import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { it } from 'node:test';

const hasPerf = !spawnSync('perf', ['--version']).error;
if (process.env['DPKIT_REQUIRE_TOOLS'] === '1' && !hasPerf) throw new Error('DPKIT_REQUIRE_TOOLS=1 but perf is not installed (apt-get install linux-perf; .ci/run does)');
// perf_event_open may be refused by the machine (a container's seccomp, paranoid 3): that is no fault of the script.
const refused = hasPerf && spawnSync('perf', ['stat', '-e', 'cpu-clock', '-x,', 'true'], { encoding: 'utf8' }).status !== 0;
const skip = !hasPerf ? 'perf is not installed (linux-perf)' : refused ? 'this machine refuses perf_event_open' : false;

const run = (...args: string[]) => spawnSync(process.execPath, ['scripts/lcore-profile.js', ...args], { encoding: 'utf8', timeout: 120_000 });
const maps = () => new Set(readdirSync(tmpdir()).filter((f) => /^perf-\d+\.map$/.test(f)));

it('node scripts/lcore-profile.js names the kernels a testpmd run spends its lcore in', { skip }, () => {
  const before = maps();
  const r = run('--top', '40', '--', 'testpmd', '-l', '0-1', '--vdev', 'net_null0', '--vdev', 'net_null1', '--', '--forward-mode=io', '--duration=2');
  assert.equal(r.status, 0, r.stderr);
  const table = r.stdout.slice(r.stdout.indexOf('share   where   symbol'));
  const rows = table.split('\n').slice(1).filter((l) => l.trim() !== '');
  assert.ok(rows.length > 3, table);
  for (const kernel of ['nullRx', 'nullTx', 'mempoolAllocBulk', 'mbufFreeBulk']) {
    assert.match(table, new RegExp(`^\\s*[\\d.]+%\\s+wasm\\s+${kernel}$`, 'm'), `${kernel} in:\n${table}`);
  }
  assert.doesNotMatch(table, /wasm-function\[/, 'every kernel by its name');
  const left = [...maps()].filter((f) => !before.has(f));
  assert.deepEqual(left, [], 'the run leaves no perf map behind');
});

it('node scripts/lcore-profile.js without a command prints its usage in one line', () => {
  const r = run('--top', '5');
  assert.equal(r.status, 2);
  assert.equal(r.stderr, 'usage: node scripts/lcore-profile.js [--top N] -- DPKIT_ARGS...   (after npm run build)\n');
});
