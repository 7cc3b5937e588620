import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveDpdk, resolveDpdkBuilds, withDpdkBuilds, type DpdkBuild } from '../../../src/apps/bench/dpdk.js';
import { validateConfig, type Cell, type Variant } from '../../../src/apps/bench/matrix.js';
import { runMatrix } from '../../../src/apps/bench/matrix-run.js';
import { presets } from '../../../src/apps/bench/presets.js';
import { renderText } from '../../../src/apps/bench/render-text.js';
import { runTestpmd } from '../../../src/apps/bench/testpmd-run.js';
import { ArgError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-bench-dpdk-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in dpdk-testpmd: prints EAL's version line on `-v --help`, as the real one does. */
function fakeTestpmd(path: string, version: string | null): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${version ? `echo "EAL: RTE Version: 'DPDK ${version}'"` : 'echo hello'}\nexit 0\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A meson build directory of DPDK with testpmd in app/ and the options meson records. */
function fakeBuildDir(name: string, version: string, cpu: string): string {
  const b = join(dir, name);
  fakeTestpmd(join(b, 'app', 'dpdk-testpmd'), version);
  mkdirSync(join(b, 'meson-info'), { recursive: true });
  writeFileSync(
    join(b, 'meson-info', 'intro-buildoptions.json'),
    JSON.stringify([
      { name: 'buildtype', value: 'release' },
      { name: 'cpu_instruction_set', value: cpu },
      { name: 'default_library', value: 'static' },
      { name: 'c_args', value: [] },
    ]),
  );
  return b;
}

const native = fakeBuildDir('native-build', '25.11.2', 'native');
const generic = fakeBuildDir('generic-build', '25.11.2', 'generic');
const DEBIAN = '/usr/bin/dpdk-testpmd';

describe('--dpdk: which DPDK an arm runs', () => {
  it('names a build directory by its version and cpu_instruction_set, with its flags and testpmd', () => {
    const b = resolveDpdk(native);
    assert.equal(b.name, 'dpdk-25.11-native');
    assert.equal(b.version, '25.11.2');
    assert.equal(b.build, 'native');
    assert.equal(b.path, join(native, 'app', 'dpdk-testpmd'));
    assert.equal(b.dir, native);
    assert.match(b.flags, /buildtype=release, cpu_instruction_set=native, default_library=static/);
    assert.equal(resolveDpdk(generic).name, 'dpdk-25.11-generic');
  });

  it("names the testpmd inside a build directory as the directory's build", () => {
    const b = resolveDpdk(join(native, 'app', 'dpdk-testpmd'));
    assert.equal(b.name, 'dpdk-25.11-native');
    assert.equal(b.dir, undefined);
  });

  it('names a binary that is neither in a build directory nor a Debian package custom', () => {
    const bin = fakeTestpmd(join(dir, 'loose', 'testpmd'), '24.11.1');
    assert.equal(resolveDpdk(bin).name, 'dpdk-24.11-custom');
  });

  it("names Debian's dpdk-testpmd dpdk-22.11-debian, with the package's version", { skip: !existsSync(DEBIAN) && 'dpdk-dev is not installed' }, () => {
    const b = resolveDpdk(DEBIAN);
    assert.match(b.name, /^dpdk-\d+\.\d+-debian$/);
    assert.match(b.flags, /^Debian package dpdk-dev /);
    assert.equal(b.path, DEBIAN);
  });

  it('refuses, in one line naming the path, what holds no testpmd', () => {
    assert.throws(() => resolveDpdk(join(dir, 'nope')), (e: unknown) => e instanceof ArgError && /^bench --dpdk .*nope: no such file or directory$/.test(e.message));
    mkdirSync(join(dir, 'empty'));
    assert.throws(() => resolveDpdk(join(dir, 'empty')), /bench --dpdk .*empty: a directory without app\/dpdk-testpmd, bin\/dpdk-testpmd, dpdk-testpmd \(build it: scripts\/build-dpdk\.sh SRC/);
    const plain = join(dir, 'plain');
    writeFileSync(plain, 'not a program');
    assert.throws(() => resolveDpdk(plain), /bench --dpdk .*plain: .*plain is not executable/);
    const other = fakeTestpmd(join(dir, 'other', 'prog'), null);
    assert.throws(() => resolveDpdk(other), /did not print DPDK's version with -v --help \(not a dpdk-testpmd\?\)/);
    assert.throws(() => resolveDpdk(''), /expected a dpdk-testpmd binary or a DPDK build directory/);
  });

  it('keeps two builds of one name apart, and refuses one testpmd given twice', () => {
    const again = fakeBuildDir('native-build-2', '25.11.1', 'native');
    assert.deepEqual(
      resolveDpdkBuilds([native, again]).map((b) => b.name),
      ['dpdk-25.11-native', 'dpdk-25.11-native-2'],
    );
    assert.throws(() => resolveDpdkBuilds([native, join(native, 'app', 'dpdk-testpmd')]), /is given twice/);
  });
});

const builds: DpdkBuild[] = [
  { name: 'dpdk-22.11-debian', version: '22.11.11', build: 'debian', flags: '-march=corei7', path: '/usr/bin/dpdk-testpmd' },
  { name: 'dpdk-25.11-native', version: '25.11.2', build: 'native', flags: 'cpu_instruction_set=native', path: '/work/dpdk/build/app/dpdk-testpmd' },
];

describe('--dpdk: every preset that runs DPDK gets one arm per build', () => {
  it('testpmd: each build in place of the dpdk arm, dpkit against each, and the builds against each other', () => {
    const c = withDpdkBuilds(presets.get('testpmd')!, builds);
    assert.deepEqual(
      c.variants.map((v) => [v.name, v.system ?? 'dpkit', v.dpdk]),
      [
        ['dpdk-22.11-debian', 'dpdk', '/usr/bin/dpdk-testpmd'],
        ['dpdk-25.11-native', 'dpdk', '/work/dpdk/build/app/dpdk-testpmd'],
        ['dpkit', 'dpkit', undefined],
      ],
    );
    assert.deepEqual(c.compare, [
      ['dpdk-22.11-debian', 'dpkit'],
      ['dpdk-25.11-native', 'dpkit'],
      ['dpdk-22.11-debian', 'dpdk-25.11-native'],
    ]);
    validateConfig(c, 'test');
  });

  it('keeps explicit comparisons (seed-macswap) and renames both sides of mixed arms (vhost-user, memif, kernel-ports)', () => {
    const m = withDpdkBuilds(presets.get('seed-macswap')!, builds.slice(1));
    assert.ok(m.compare!.some(([a, b]) => a === 'dpdk-25.11-native' && b === 'simd-interleave'));
    assert.ok(m.compare!.some(([a, b]) => a === 'scalar' && b === 'simd'));
    const v = withDpdkBuilds(presets.get('vhost-user')!, builds.slice(1));
    assert.deepEqual(
      v.variants.map((x) => x.name),
      [
        'dpdk-25.11-native/dpdk-25.11-native',
        'dpkit/dpdk-25.11-native',
        'dpdk-25.11-native/dpkit',
        'dpkit/dpkit',
        // dpkit on both sides runs no DPDK: the build leaves it alone.
        'dpkit/dpkit no-stats',
        'dpdk-25.11-native/dpdk-25.11-native-packed',
        'dpkit/dpdk-25.11-native-packed',
        'dpdk-25.11-native/dpkit-packed',
        // As dpkit/dpkit: no DPDK side, left alone.
        'dpkit/dpkit-packed',
      ],
    );
    const mem = withDpdkBuilds(presets.get('memif')!, builds);
    // Each of the 4 arms with a DPDK side (copy and zero-copy clients) doubles; the 2 dpkit-only ones stay.
    assert.equal(mem.variants.length, 10);
    const k = withDpdkBuilds(presets.get('kernel-ports')!, builds.slice(1));
    for (const [a] of k.compare!) assert.match(a, /-dpdk-25\.11-native$/);
    for (const name of ['testpmd', 'seed-macswap', 'pcap', 'pcap-live', 'vhost-user', 'memif', 'kernel-ports']) validateConfig(withDpdkBuilds(presets.get(name)!, builds), name);
  });

  it('leaves a config alone without builds', () => {
    const c = presets.get('testpmd')!;
    assert.equal(withDpdkBuilds(c, []), c);
  });

  it('runs the build arms where no DPDK is on PATH, and records the builds in the report', async () => {
    const seen: string[] = [];
    const config = withDpdkBuilds({ ...presets.get('testpmd')!, matrix: [{ engines: ['io'], sizes: [64], lcores: [1] }], pairs: 2, seconds: 1, warmup: 0 }, builds);
    const r = await runMatrix(config, {
      dpdk: false,
      dpdkBuilds: builds,
      measure: async (_c: Cell, v: Variant) => {
        seen.push(`${v.name}:${v.dpdk ?? '-'}`);
        return v.dpdk ? 10 : 20;
      },
    });
    assert.deepEqual([...new Set(seen)].sort(), ['dpdk-22.11-debian:/usr/bin/dpdk-testpmd', 'dpdk-25.11-native:/work/dpdk/build/app/dpdk-testpmd', 'dpkit:-']);
    assert.deepEqual(r.machine.dpdkBuilds, builds);
    assert.deepEqual(r.warnings, []);
    const text = renderText(r);
    assert.match(text, /^dpdk-25\.11-native: DPDK 25\.11\.2, cpu_instruction_set=native \(\/work\/dpdk\/build\/app\/dpdk-testpmd\)$/m);
  });

  it('refuses a dpdk path on an arm that runs no DPDK', () => {
    assert.throws(() => validateConfig({ ...presets.get('testpmd')!, variants: [{ name: 'x', dpdk: '/bin/true' }] }, 'cfg'), /cfg: variants\.x\.dpdk: expected the path of a dpdk-testpmd, on an arm that runs DPDK/);
  });
});

const ENTRY = fileURLToPath(new URL('../../../src/cli/dpkit.ts', import.meta.url));
function bench(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', ENTRY, 'bench', ...args], { encoding: 'utf8', timeout: 120_000 });
}

describe('dpkit bench --dpdk', () => {
  it('says in one line what is wrong with a --dpdk path, or a preset without DPDK arms', () => {
    const r = bench(['testpmd', '--dpdk', join(dir, 'missing')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /bench --dpdk .*missing: no such file or directory/);
    const o = bench(['observe', '--dpdk', native]);
    assert.notEqual(o.status, 0);
    assert.match(o.stderr, /bench observe --dpdk: no arm of observe runs DPDK/);
  });

  it("runs a real DPDK testpmd given by path (Debian's), one second", { skip: !existsSync(DEBIAN) && 'dpdk-dev is not installed' }, async () => {
    const mpps = await runTestpmd({
      system: 'dpdk',
      dpdk: DEBIAN,
      eal: ['--lcores', '0@0,1@1', '--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64'],
      app: ['--forward-mode=io', '--nb-cores=1'],
      seconds: 1,
      warmup: 0,
      countTx: false,
    });
    assert.ok(mpps > 0, `${mpps} Mpps`);
  });
});
