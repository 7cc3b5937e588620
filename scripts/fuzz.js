#!/usr/bin/env node
// `npm run fuzz -- [--seconds N] [--coverage]`: the fuzz targets (test/fuzz/) for N seconds each
// (default 20), printing each target's executions. CI runs it after the tests; a failure prints
// fast-check's seed, path and counterexample. One seed serves the campaign (printed first; --seed S
// replays it); a file that outlives its targets' budget by minutes has hung in a synchronous loop no
// property deadline can interrupt, and is killed with a line naming it and the replay. --coverage adds node's test coverage and prints,
// for each target's source files, the lines, branches and functions the campaign reached (the
// wasm kernels are not JavaScript: their twins' coverage stands for them).
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' }, seed: { type: 'string' }, coverage: { type: 'boolean', default: false } } });
const seconds = Number(values.seconds);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error(`fuzz: --seconds ${values.seconds}: expected a positive number`);
  process.exit(2);
}
const seed = values.seed === undefined ? randomInt(2 ** 31) : Number(values.seed);
if (!Number.isInteger(seed)) {
  console.error(`fuzz: --seed ${values.seed}: expected an integer`);
  process.exit(2);
}
/** Each file and its number of targets: a file's budget is that many times --seconds. */
const TARGETS = { 'test/fuzz/inputs.test.ts': 10, 'test/fuzz/targets.test.ts': 4, 'test/fuzz/vhost-walk.test.ts': 1 };
const files = Object.keys(TARGETS);
/** Past its budget, a file has this long to start, shrink a counterexample and exit before it counts as hung. */
const GRACE_S = 180;
const env = { ...process.env, DPKIT_FUZZ_SECONDS: String(seconds), DPKIT_FUZZ_SEED: String(seed) };
console.log(`fuzz: seed ${seed}, ${seconds} s a target (replay: npm run fuzz -- --seconds ${seconds} --seed ${seed})`);

/** Runs one file under its deadline; the status, or 1 with a line naming the hang. */
function run(f, args, opts) {
  const limit = TARGETS[f] * seconds + GRACE_S;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...args, f], { ...opts, env, timeout: limit * 1000, killSignal: 'SIGKILL' });
  if (r.error?.code === 'ETIMEDOUT' || r.signal === 'SIGKILL') {
    console.error(`fuzz: ${f} did not finish within ${limit} s: a target hung; replay with --seed ${seed}, DPKIT_FUZZ_TRACE=1 prints each input before it runs`);
    return { ...r, status: 1 };
  }
  return r;
}

if (!values.coverage) {
  let status = 0;
  for (const f of files) {
    const r = run(f, ['--test-reporter=spec'], { stdio: 'inherit' });
    if (r.status !== 0) status = r.status ?? 1;
  }
  process.exit(status);
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
  const r = run(f, ['--experimental-test-coverage', '--test-reporter=spec'], { encoding: 'utf8', maxBuffer: 64 << 20 });
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
