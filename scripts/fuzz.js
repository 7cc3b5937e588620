#!/usr/bin/env node
// `npm run fuzz -- [--seconds N] [--coverage]`: the fuzz targets (test/fuzz/) for N seconds each
// (default 20), printing each target's executions. CI runs it after the tests; a failure prints
// fast-check's seed, path and counterexample. --coverage adds node's test coverage and prints,
// for each target's source files, the lines, branches and functions the campaign reached (the
// wasm kernels are not JavaScript: their twins' coverage stands for them).
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, coverage: { type: 'boolean', default: false } } });
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error(`fuzz: --seconds ${values.seconds}: expected a positive number`);
  process.exit(2);
}
const files = ['test/fuzz/inputs.test.ts', 'test/fuzz/targets.test.ts', 'test/fuzz/vhost-walk.test.ts'];
const env = { ...process.env, DPKIT_FUZZ_SECONDS: String(seconds) };
if (!values.coverage) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], { stdio: 'inherit', env });
  process.exit(r.status ?? 1);
}

/** The sources each file's targets parse or run: the rows of the coverage table docs/reliability.md records. */
const SOURCES = {
  'test/fuzz/inputs.test.ts': ['src/pcap/reader.ts', 'src/ethdev/devargs.ts', 'src/apps/testpmd/options.ts', 'src/eal/options.ts', 'src/net/ether.ts', 'src/vhost/wire.ts', 'src/drivers/memif/protocol.ts', 'src/net/checksum.ts'],
  'test/fuzz/targets.test.ts': ['src/apps/testpmd/shell.ts', 'src/net/headers.ts', 'src/apps/l3fwd/routes.ts', 'src/fwd/csum.twin.ts'],
  'test/fuzz/vhost-walk.test.ts': ['src/vhost/vhost-queue.ts', 'src/vhost/vhost-queue.twin.ts', 'src/vhost/vhost-packed.twin.ts', 'src/virtio/guest-memory.ts', 'src/virtio/vring.ts', 'src/virtio/packed.ts'],
};
// One process per file, so each file's table is its own targets' reach.
let status = 0;
for (const f of files) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--experimental-test-coverage', '--test-reporter=spec', f], { encoding: 'utf8', env, maxBuffer: 64 << 20 });
  const out = (r.stdout ?? '') + (r.stderr ?? '');
  if (r.status !== 0) {
    process.stdout.write(out);
    status = r.status ?? 1;
    continue;
  }
  for (const line of out.split('\n')) {
    if (/^\s*fuzz /.test(line)) console.log(line.trim());
    const row = /^\S*\s*(src\/\S+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)/.exec(line);
    if (row && SOURCES[f].includes(row[1])) console.log(`coverage ${row[1]}: lines ${row[2]} %, branches ${row[3]} %, functions ${row[4]} % (${f})`);
  }
}
process.exit(status);
