import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { BenchReport } from '../../../src/apps/bench/report.js';

const ENTRY = fileURLToPath(new URL('../../../src/cli/dpkit.ts', import.meta.url));
const MATRIX = fileURLToPath(new URL('../../../src/apps/bench/matrix.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function bench(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', ENTRY, 'bench', ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('dpkit bench', () => {
  it('runs a matrix from a TypeScript config with real testpmds: table, JSON with raw samples, HTML, compare', () => {
    const cfg = join(dir, 'tiny.ts');
    writeFileSync(
      cfg,
      `import type { MatrixConfig } from ${JSON.stringify(MATRIX)};
export default {
  name: 'tiny', title: 'io on wasm and on its TypeScript twins',
  matrix: [{ engines: ['io'], sizes: [64], lcores: [1] }],
  variants: [{ name: 'wasm' }, { name: 'ts', args: ['--datapath=ts'] }],
  pairs: 2, seconds: 1, warmup: 0,
} satisfies MatrixConfig;
`,
    );
    const json = join(dir, 'tiny.json');
    const html = join(dir, 'tiny.html');
    const r = bench(['--config', cfg, '--json', json, '--html', html]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^\[1\/4\] io 64 B 1c burst 32 · (wasm|ts) · pair 1\/2$/m, 'progress on stderr');
    assert.match(r.stderr, /^\[4\/4\] .* · ETA \d+:\d\d$/m);
    assert.match(r.stdout, /TEST IO 64B 1Q 1C: <B vs A : Before : After>\n - ts vs wasm : [\d.]+ : [\d.]+ \([+-][\d.]+ %, 95 % CI/);
    assert.match(r.stdout, /warning: 2 pairs per arm: a smoke check, not a result/);
    assert.match(r.stdout, /95 % CI [\d.]+\.\.[\d.]+: too few runs\)/, 'no verdict from 2 runs');
    const rep = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    assert.equal(rep.schema, 'dpkit-bench/1');
    assert.equal(rep.cells.length, 1);
    for (const a of rep.cells[0]!.arms) {
      assert.equal(a.samples.length, 2);
      assert.ok(a.samples.every((x) => x > 0), `${a.name}: real rates ${a.samples}`);
      assert.equal(a.load.length, 2);
    }
    assert.equal(rep.machine.cores > 0 && typeof rep.machine.cpu, 'string');
    assert.match(readFileSync(html, 'utf8'), /<svg class="chart"/);

    const c = bench(['--compare', json, json]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /io 64 B 1c burst 32 .* wasm .* 1\.000 \(\+0\.0 %\) .* too few runs/);
  });

  it('runs seed-vhost: host txonly to guest rxonly on their own lcores, both A/B arms, the tables of the vhost enqueue study', () => {
    const out = join(dir, 'vhost.json');
    const r = bench(['seed-vhost', '--reps', '1', '--duration', '300', '--warmup', '100', '--filter', '64 B dpkit', '--json', out]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(readFileSync(out, 'utf8')) as { benchmark: string; results: { name: string; samples: number[] }[] };
    assert.equal(j.benchmark, 'vhost');
    assert.deepEqual(
      j.results.map((x) => x.name),
      ['host-to-guest 64 B dpkit', 'host-to-guest 64 B dpkit avail-per-packet', 'guest-to-host 64 B dpkit'],
    );
    for (const x of j.results) assert.ok(x.samples[0]! > 0, `${x.name} moved packets`);
  });

  it('says what is wrong with a bad preset, config, option or report', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ name: 'b', title: '', matrix: [{ sizes: [10] }], variants: [{ name: 'a' }], pairs: 5, seconds: 1, warmup: 0 }));
    const cases: [string[], RegExp][] = [
      [['--preset', 'nope'], /bench --preset nope: unknown \(presets: testpmd, seed-macswap, seed-txfree, pcap, kernel-ports\)/],
      [['--config', bad], /bench --config .*bad.json: matrix\[0\].sizes: expected a non-empty list of integers in \[64, 9000\]/],
      [['testpmd', '--sizes', '100'], /--sizes 100: no cell of testpmd has any of these/],
      [['testpmd', '--pairs', 'x'], /--pairs x: expected an integer/],
      [['--compare', bad], /expected two report files/],
      [['--compare', bad, bad], /bad.json: not a bench report: schema is undefined/],
      [['--frobnicate'], /Unknown option '--frobnicate'/],
    ];
    for (const [args, re] of cases) {
      const r = bench(args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, re, args.join(' '));
    }
  });
});
