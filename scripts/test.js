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

// No --test-force-exit: with it, node's runner dropped a file's later verdicts on their way from
// the file's process (test/drivers/vhost.test.ts, alone too: 30 or 37 of 47 printed in 2 of 4
// runs, the run passing; never in 5 runs without it, nor in-process), so a full run printed 849
// of about 866 on 2026-12-07. Every file exits by itself once its tests end. A file that hangs
// instead (a failure that left a socket or timer armed) is bounded by the watchdog below.
// --test-timeout: a test (or suite) still waiting after 15 minutes has hung; it fails, named,
// rather than holding the run (the slowest suite takes about a minute on a loaded machine).
const WATCHDOG_MS = 45 * 60 * 1000;
const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=900000', ...files], { stdio: 'inherit', timeout: WATCHDOG_MS, killSignal: 'SIGKILL' });
if (run.error !== undefined || run.signal !== null) {
  console.error(`test: the run did not end within ${WATCHDOG_MS / 60000} minutes (a test file that never exits): killed`);
  process.exit(1);
}
process.exit(run.status ?? 1);
