/**
 * The DPDK builds a bench compares with (`--dpdk PATH`, repeatable): each
 * PATH is a dpdk-testpmd binary or a DPDK build directory (meson's, holding
 * app/dpdk-testpmd), and becomes an arm named dpdk-<version>-<build>, e.g.
 * dpdk-22.11-debian (Debian's package, built for -march=corei7) or
 * dpdk-25.11-native (scripts/build-dpdk.sh, -Dcpu_instruction_set=native).
 * A preset's DPDK arms are repeated once per build by the shared harness
 * (withDpdkBuilds), so every preset that runs DPDK takes the option alike.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ArgError } from '../../errors.js';
import type { MatrixConfig, Variant } from './matrix.js';

/** One DPDK to compare with, as the report records it (machine.dpdkBuilds). */
export interface DpdkBuild {
  /** The arm name: dpdk-<major.minor>-<build>. */
  name: string;
  /** DPDK's own version string, e.g. 22.11.11 or 25.11.2. */
  version: string;
  /** debian (a distribution package), native (built for this CPU), or meson's cpu_instruction_set (generic, corei7 …), or custom. */
  build: string;
  /** How it was compiled, as far as can be told: buildtype, cpu_instruction_set, -march, compiler. */
  flags: string;
  /** The dpdk-testpmd binary the arm runs. */
  path: string;
  /** The build directory, when PATH was one (its examples: examples/dpdk-l3fwd …). */
  dir?: string;
}

/** Where a build directory or an install prefix keeps testpmd. */
const TESTPMD_IN_DIR = ['app/dpdk-testpmd', 'bin/dpdk-testpmd', 'dpdk-testpmd'];

/** A meson build directory holding `file` (the file's folder or one above it), if any. */
function mesonDirOf(file: string): string | undefined {
  for (let d = dirname(file), i = 0; i < 3; i++, d = dirname(d)) if (existsSync(join(d, 'meson-info', 'intro-buildoptions.json'))) return d;
  return undefined;
}

/** Meson's options of a build directory, by name. */
function mesonOptions(dir: string): Map<string, unknown> {
  try {
    const list = JSON.parse(readFileSync(join(dir, 'meson-info', 'intro-buildoptions.json'), 'utf8')) as { name: string; value: unknown }[];
    return new Map(list.map((o) => [o.name, o.value]));
  } catch {
    return new Map();
  }
}

/**
 * DPDK's version from the binary itself: EAL prints `RTE Version: 'DPDK X'`
 * with `-v`. Older EALs exit on `--help` after printing it; newer ones print
 * usage first, so they get a start that fails at once for want of memory
 * (8 MB, its own file prefix, removed after).
 */
export function testpmdVersion(path: string): string | null {
  const read = (r: { stdout?: string | null; stderr?: string | null }) => /RTE Version: 'DPDK ([0-9][0-9A-Za-z.-]*)'/.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`)?.[1] ?? null;
  const first = read(spawnSync(path, ['-v', '--help'], { encoding: 'utf8', timeout: 15_000 }));
  if (first) return first;
  const prefix = `dpkit-version-${process.pid}`;
  try {
    return read(spawnSync(path, ['-v', '--no-huge', '-m', '8', '--no-pci', '--file-prefix', prefix, '--', '--help'], { encoding: 'utf8', timeout: 15_000 }));
  } finally {
    rmSync(`/var/run/dpdk/${prefix}`, { recursive: true, force: true });
  }
}

/** The version meson recorded for a build directory, if any. */
function mesonVersion(dir: string | undefined): string | null {
  if (!dir) return null;
  try {
    const v = (JSON.parse(readFileSync(join(dir, 'meson-info', 'intro-projectinfo.json'), 'utf8')) as { version?: unknown }).version;
    return typeof v === 'string' && v ? v : null;
  } catch {
    return null;
  }
}

/** The Debian package owning `path`, with its version, or null. */
function debianPackage(path: string): { pkg: string; version: string } | null {
  const owner = spawnSync('dpkg-query', ['-S', path], { encoding: 'utf8' });
  if (owner.status !== 0) return null;
  const pkg = owner.stdout.split(':')[0]!.trim();
  const v = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' });
  return { pkg, version: v.status === 0 ? v.stdout.trim() : 'unknown' };
}

/** The -march/-mcpu pkg-config gives for the installed libdpdk (Debian's: -march=corei7). */
function pkgConfigMarch(): string | null {
  const r = spawnSync('pkg-config', ['--cflags', 'libdpdk'], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return r.stdout.split(/\s+/).filter((f) => /^-m(arch|cpu)=/.test(f)).join(' ') || null;
}

/** The build's name part and its flags, from what is known about where it came from. */
function describe(path: string, dir: string | undefined): { build: string; flags: string } {
  const meson = dir ?? mesonDirOf(path);
  if (meson) {
    const o = mesonOptions(meson);
    const cpu = String(o.get('cpu_instruction_set') ?? 'auto');
    const cargs = o.get('c_args');
    const parts = [`buildtype=${String(o.get('buildtype') ?? '?')}`, `cpu_instruction_set=${cpu}`, `default_library=${String(o.get('default_library') ?? '?')}`];
    if (Array.isArray(cargs) && cargs.length) parts.push(`c_args=${cargs.join(' ')}`);
    const extra = join(meson, 'dpkit-build.txt');
    if (existsSync(extra)) {
      const cc = /^cc=(.*)$/m.exec(readFileSync(extra, 'utf8'));
      if (cc) parts.push(cc[1]!);
    }
    return { build: cpu === 'native' || cpu === 'auto' ? 'native' : cpu, flags: parts.join(', ') };
  }
  const deb = debianPackage(path);
  if (deb) return { build: 'debian', flags: `Debian package ${deb.pkg} ${deb.version}${(() => { const m = pkgConfigMarch(); return m ? `, ${m} (pkg-config libdpdk)` : ''; })()}` };
  return { build: 'custom', flags: 'unknown (not a meson build directory nor a Debian package)' };
}

/**
 * Resolves one `--dpdk PATH` (a testpmd binary or a build directory) to the
 * build the arm runs, `version` and `describe` overridable for tests.
 * @throws ArgError naming PATH when it holds no runnable testpmd or its version cannot be read.
 */
export function resolveDpdk(path: string, probe: { version?: (bin: string) => string | null } = {}): DpdkBuild {
  const where = `bench --dpdk ${path}`;
  if (!path) throw new ArgError(`${where}: expected a dpdk-testpmd binary or a DPDK build directory`);
  if (!existsSync(path)) throw new ArgError(`${where}: no such file or directory`);
  let bin = resolve(path);
  let dir: string | undefined;
  if (statSync(bin).isDirectory()) {
    const found = TESTPMD_IN_DIR.map((p) => join(bin, p)).find((p) => existsSync(p) && statSync(p).isFile());
    if (!found) throw new ArgError(`${where}: a directory without ${TESTPMD_IN_DIR.join(', ')} (build it: scripts/build-dpdk.sh SRC ${path})`);
    dir = bin;
    bin = found;
  }
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new ArgError(`${where}: ${bin} is not executable`);
  }
  bin = realpathSync(bin);
  const version = mesonVersion(dir ?? mesonDirOf(bin)) ?? (probe.version ?? testpmdVersion)(bin);
  if (!version) throw new ArgError(`${where}: ${bin} did not print DPDK's version with -v --help (not a dpdk-testpmd?)`);
  const { build, flags } = describe(bin, dir);
  const short = version.split('.').slice(0, 2).join('.');
  return { name: `dpdk-${short}-${build}`, version, build, flags, path: bin, ...(dir ? { dir } : {}) };
}

/** Resolves every `--dpdk`; two builds with one name get -2, -3 … so arms stay apart. */
export function resolveDpdkBuilds(paths: readonly string[], probe: { version?: (bin: string) => string | null } = {}): DpdkBuild[] {
  const out: DpdkBuild[] = [];
  for (const p of paths) {
    const b = resolveDpdk(p, probe);
    if (out.some((o) => o.path === b.path)) throw new ArgError(`bench --dpdk ${p}: ${b.path} is given twice`);
    let name = b.name;
    for (let i = 2; out.some((o) => o.name === name); i++) name = `${b.name}-${i}`;
    out.push({ ...b, name });
  }
  return out;
}

/** Whether an arm runs DPDK on any side. */
export function runsDpdk(v: Variant): boolean {
  return v.system === 'dpdk' || v.guest === 'dpdk' || v.peer === 'dpdk';
}

/**
 * A config whose DPDK arms are repeated once per build: an arm named
 * `dpdk/dpkit` becomes `dpdk-25.11-native/dpkit` (every "dpdk" in its name
 * replaced by the build's), running that build's testpmd on its DPDK sides;
 * comparisons naming it are repeated alike. dpkit-only arms stay as they are.
 */
export function withDpdkBuilds(config: MatrixConfig, builds: readonly DpdkBuild[]): MatrixConfig {
  if (builds.length === 0) return config;
  const rename = (name: string, b: DpdkBuild) => name.replace(/dpdk/g, b.name);
  const dpdkArms = new Set(config.variants.filter(runsDpdk).map((v) => v.name));
  const variants = config.variants.flatMap((v) => (runsDpdk(v) ? builds.map((b) => ({ ...v, name: rename(v.name, b), dpdk: b.path })) : [v]));
  // The config's comparisons (by default every arm against the first), each repeated per build,
  // then the first build's DPDK arm against every other build's: how much a build alone moves DPDK.
  const names = config.variants.map((v) => v.name);
  const pairs = config.compare ?? names.slice(1).map((b): [string, string] => [names[0]!, b]);
  const compare = pairs.flatMap(([a, b]): [string, string][] => {
    if (!dpdkArms.has(a) && !dpdkArms.has(b)) return [[a, b]];
    return builds.map((x) => [dpdkArms.has(a) ? rename(a, x) : a, dpdkArms.has(b) ? rename(b, x) : b]);
  });
  const first = config.variants.find(runsDpdk);
  if (first) for (const x of builds.slice(1)) compare.push([rename(first.name, builds[0]!), rename(first.name, x)]);
  return { ...config, variants, compare };
}

let onPath: DpdkBuild | null | undefined;

/** The build of the dpdk-testpmd on PATH (Debian's), for the record when no --dpdk is given; null when there is none. */
export function defaultDpdkBuild(bin: string | null): DpdkBuild | null {
  if (onPath === undefined) {
    try {
      onPath = bin ? resolveDpdk(bin) : null;
    } catch {
      onPath = null;
    }
  }
  return onPath;
}
