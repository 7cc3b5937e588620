// The package as a user gets it: `npm pack`, installed from the tarball into a fresh project
// (offline: its dependencies come from the npm cache `npm ci` filled), a consumer type-checked
// against the packaged declarations and run: two net_ring ports forwarded by two lcores.
// Fails if a public name of src/index.ts is missing from the packaged types or the tarball
// lacks a file the run needs (the kernels, a worker script, what `dpkit build-kernel` compiles a
// user's AssemblyScript kernel against: as/ and the layout files it imports).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import * as api from 'dpkit';

const repo = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'dpkit-consumer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A lockfile for a project depending on the tarball: dpkit's own production entries, so
 * `npm ci --offline` takes every dependency from the cache by integrity, without asking the registry.
 */
function consumerLock(tarball: string): string {
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { dpkit: `file:${tarball}` } },
    'node_modules/dpkit': { version: pkg.version, resolved: `file:${tarball}`, hasInstallScript: true, dependencies: pkg.dependencies },
  };
  for (const [k, v] of Object.entries(lock.packages)) if (k !== '' && !v.dev) packages[k] = v;
  return JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages });
}

/** The public names: values from the entry itself, types from its `export type { … }` lines. */
function publicNames(): { values: string[]; types: string[] } {
  const src = readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8');
  const types = [...src.matchAll(/export type \{([^}]*)\}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim()).filter(Boolean));
  return { values: Object.keys(api).sort(), types };
}

const LCORE = `import type { LcoreContext } from 'dpkit';
export function main(ctx: LcoreContext<[number, number][]>): number {
  const [rxPort, txPort] = ctx.args[ctx.lcores.indexOf(ctx.lcoreId)]!;
  const rx = ctx.rxQueue(rxPort, 0);
  const tx = ctx.txQueue(txPort, 0);
  const burst = ctx.burst(32);
  let fwd = 0;
  while (!ctx.stopping()) {
    const n = rx.rxBurst(burst, 32);
    if (n === 0) continue;
    const sent = tx.txBurst(burst, n);
    if (sent < n) ctx.mbufs.freeBulk(burst, n - sent, sent);
    fwd += sent;
  }
  return fwd;
}
`;

/** A user's kernel, in AssemblyScript against the packaged dpkit/as: the bytes of a burst. */
const KERNEL = `import { mbufAt, pktLen } from 'dpkit/as';
export function sumLen(burst: u32, n: u32): u32 {
  let s: u32 = 0;
  for (let i: u32 = 0; i < n; i++) s += pktLen(mbufAt(burst, i));
  return s;
}
`;

/** The public generic types, with type arguments to name them by. */
const TYPE_ARGS: Record<string, string> = { LcoreContext: '<unknown>', UserKernel: '<string>' };

function consumer(names: { values: string[]; types: string[] }): string {
  return `import * as dpkit from 'dpkit';
import { init, type Eal } from 'dpkit';

// Every public name, checked by the type-checker against the packaged declarations.
export const values: (keyof typeof dpkit)[] = ${JSON.stringify(names.values)};
export type Types = [${names.types.map((t) => `dpkit.${t}${TYPE_ARGS[t] ?? ''}`).join(', ')}];

function portUp(eal: Eal, port: number): void {
  eal.ethdev.configure(port, 1, 1);
  eal.ethdev.rxQueueSetup(port, 0, 0, eal.pool);
  eal.ethdev.txQueueSetup(port, 0, 0);
  eal.ethdev.start(port);
}

const eal = init({ lcores: [0, 1, 2], vdevs: ['net_ring0', 'net_ring1'], mbufs: 1023, memory: 4 << 20 });
portUp(eal, 0);
portUp(eal, 1);
const seed = eal.burst(64);
eal.pool.allocBulk(seed, 64);
for (let i = 0; i < 64; i++) eal.mbufs.append(seed[i]!, 60);
eal.ethdev.txBurst(0, 0, seed, 64);
const run = await eal.launch<number, [number, number][]>(new URL('./lcore.js', import.meta.url), { lcores: [1, 2], args: [[0, 1], [1, 0]] });
while (eal.ethdev.stats(0).opackets < 1000 || eal.ethdev.stats(1).opackets < 1000) await new Promise((r) => setTimeout(r, 10));
const results = await run.stop();
const rx = eal.ethdev.stats(0).ipackets + eal.ethdev.stats(1).ipackets;
const fwd = results.reduce((a, r) => a + r.value, 0);
// The user's kernel, built by \`dpkit build-kernel\` from the installed package, over a burst of 4 x 60 bytes.
const { sumLen } = dpkit.loadKernel(eal.heap, 'kernel.wasm', ['sumLen']);
const four = eal.burst(4);
eal.pool.allocBulk(four, 4);
for (let i = 0; i < 4; i++) eal.mbufs.append(four[i]!, 60);
const kernelSum = sumLen(four.byteOffset, 4);
eal.mbufs.freeBulk(four, 4);
await eal.close();
console.log(JSON.stringify({ lcores: results.map((r) => r.lcoreId), rx, fwd, full: eal.pool.full(), datapath: eal.heap.datapath, kernelSum }));
`;
}

it('installs from the tarball, type-checks every public name and forwards on two lcores', { timeout: 180_000 }, () => {
  const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // dist/ and the kernels are current: scripts/test.js built them.
  const tarball = run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], repo).trim().split('\n').at(-1)!;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { dpkit: `file:${tarball}` } }));
  writeFileSync(join(dir, 'package-lock.json'), consumerLock(tarball));
  // --ignore-scripts: the native shim's compile takes most of a minute and is optional (affinity).
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], dir);
  const names = publicNames();
  writeFileSync(join(dir, 'consumer.ts'), consumer(names));
  writeFileSync(join(dir, 'lcore.ts'), LCORE);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', types: ['node'], typeRoots: [join(repo, 'node_modules/@types')] },
      files: ['consumer.ts', 'lcore.ts'],
    }),
  );
  run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
  // The project's own AssemblyScript (as \`npm install -D assemblyscript\` would give it), then its kernel.
  symlinkSync(join(repo, 'node_modules/assemblyscript'), join(dir, 'node_modules/assemblyscript'));
  writeFileSync(join(dir, 'kernel.as.ts'), KERNEL);
  run(process.execPath, ['node_modules/dpkit/bin/dpkit.js', 'build-kernel', 'kernel.as.ts', '-o', 'kernel.wasm'], dir);
  const out = JSON.parse(run(process.execPath, ['out/consumer.js'], dir).trim().split('\n').at(-1)!) as { lcores: number[]; rx: number; fwd: number; full: boolean; datapath: string; kernelSum: number };
  assert.deepEqual(out.lcores, [1, 2]);
  // The loop waits for 1000 opackets a port; port 0's count includes the 64 seeded by txBurst.
  assert.ok(out.fwd >= 2000 - 64, `forwarded ${out.fwd}`);
  assert.equal(out.rx, out.fwd, 'rx = tx (a net_ring queue never refuses 64 packets)');
  assert.ok(out.full, 'every mbuf back in the pool');
  assert.equal(out.datapath, 'wasm', 'the kernels shipped in the tarball');
  assert.equal(out.kernelSum, 240, "the user's kernel, built from the tarball's dpkit/as, read the burst");
});

it('keeps deep paths private: only the entry and package.json are exported', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
  assert.deepEqual(Object.keys(pkg.exports), ['.', './package.json']);
});
