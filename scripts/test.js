#!/usr/bin/env node
// Builds and type-checks dist/, then runs every test file under test/ with node's test runner.
// Node 20's `node --test test/` finds no .ts files and passes with zero tests,
// so the file list is built here and an empty list is an error.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
const files = find('test').filter((f) => filter.length === 0 || filter.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`test: no test files found under test/${filter.length ? ` matching ${filter.join(' ')}` : ''}`);
  process.exit(1);
}

function step(what, args) {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`test: ${what} failed`);
    process.exit(1);
  }
}

// Kernels are rebuilt only when their sources changed; tests need them current.
step('kernel build', ['scripts/build-kernels.js']);
// So is the native shim: a pull that changed native/ would otherwise test the old addon.
const newest = (dir) => Math.max(0, ...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
let addon = 0;
try {
  addon = statSync('native/build/Release/dpkit_native.node').mtimeMs;
} catch {}
if (addon > 0 && Math.max(newest('native/src'), statSync('native/binding.gyp').mtimeMs) > addon) step('native build', ['scripts/build-native.js']);
// The type-check of everything also emits dist/, which tests run testpmd from (bin/dpkit.js):
// built workers start in a tenth of the time tsx takes, and dist is never stale under a test.
// Incremental, so an unchanged tree costs about a second; filtered runs need it as much.
step('type-check and build', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', 'dist/tsconfig.tsbuildinfo']);
if (filter.length === 0) {
  step('kernel type-check', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.as.json', '--noEmit']);
}

// --test-force-exit: a test file whose failure left a socket watch or a retry timer armed ends
// when its tests have, rather than holding the run until CI's limit (its failure is reported).
// Its cost, seen here on 2026-12-07 (844 of 861 verdicts printed, fail 0): with files run in
// parallel, node can drop a file's last verdicts on their way to the parent (nodejs/node#64833).
// A file that failed still fails the run through its exit code, so the verdict holds; the
// printed count is a lower bound and a failing test's name may be missing from the output.
// By 2026-12-07 evening it was always the same cut: test/drivers/vhost.test.ts's reports stop
// after its 30th test (net_stats=1, wasm) and its suite never reports done, in 3 of 4 full runs;
// alone, with test/drivers/*, or with every file up to it, all 47 of its tests print.
// Until that is understood, those 17 tests are not known to run in a full run: run the file alone.
// --test-timeout: a test (or suite) still waiting after 15 minutes has hung; it fails, named,
// rather than holding the run (the slowest suite takes about a minute on a loaded machine).
const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-force-exit', '--test-timeout=900000', ...files], { stdio: 'inherit' });
process.exit(run.status ?? 1);
