/**
 * The micro-benchmarks `dpkit bench NAME` runs, by name: adding one is a
 * module here plus one line below (test/apps/bench/registry.test.ts fails on a
 * module left out). Each entry loads its module on first use, so
 * `dpkit bench --help` and matrix runs skip the 15-20 ms that loading them all
 * takes, and the literal specifiers keep every edge visible to tsc and to
 * import-graph tools.
 *
 * The modules here build on the bench app (its types, harness and
 * statistics in src/apps/bench/), so the app cannot import this table
 * without a cycle: the command line (src/cli/main.ts) hands it to
 * `benchMain` instead.
 */
import type { BenchRegistry } from '../src/apps/bench/types.js';

export const benchmarks: BenchRegistry = {
  api: () => import('./api.js'),
  ceiling: () => import('./ceiling.js'),
  gen: () => import('./gen.js'),
  'gen-rate': () => import('./gen-rate.js'),
  machine: () => import('./machine.js'),
  l3fwd: () => import('./l3fwd.js'),
  lpm: () => import('./lpm.js'),
  mem: () => import('./mem.js'),
  'memif-copy': () => import('./memif-copy.js'),
  'pcap-file': () => import('./pcap-file.js'),
  pipeline: () => import('./pipeline.js'),
  ring: () => import('./ring.js'),
  vhost: () => import('./vhost.js'),
};
