#!/usr/bin/env node
// `npm run fuzz -- [--seconds N]`: the fuzz targets (test/fuzz/) for N seconds each (default 20),
// printing each target's executions. CI runs it after the tests; a failure prints fast-check's
// seed, path and counterexample.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' } } });
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error(`fuzz: --seconds ${values.seconds}: expected a positive number`);
  process.exit(2);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', 'test/fuzz/inputs.test.ts', 'test/fuzz/targets.test.ts', 'test/fuzz/vhost-walk.test.ts'], {
  stdio: 'inherit',
  env: { ...process.env, DPKIT_FUZZ_SECONDS: String(seconds) },
});
process.exit(r.status ?? 1);
