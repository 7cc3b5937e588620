/**
 * `npm run bench -- lpm`: dpkit's routing tables against DPDK's, the
 * operations `dpdk-test`'s lpm_perf_autotest, lpm6_perf_autotest and
 * hash_perf_autotest time: lookups one at a time and in bulk, adds, and
 * the memory a table takes. Rates are millions of operations per second (the
 * Mpps column); each table is built fresh per repetition.
 *
 * dpkit's tables, shaped like the autotests' (not the same routes: those are
 * DPDK's own generator):
 * - lpm: 100 000 prefixes, mostly /24 as in a router's table, ~10 % longer
 *   than 24 (tbl8 groups), looked up at random addresses.
 * - lpm6: 1000 prefixes of random depth 1..128, looked up at addresses under
 *   them (every lookup hits, as the autotest's).
 * - hash: 16-byte keys (l3fwd's IPv4 5-tuple), 2^19 entries filled to 75 %
 *   (the autotest's MAX_ENTRIES and ADD_PERCENT), the added keys looked up
 *   in another order.
 * Lookups run on one worker thread (lpm.worker.ts); adds on this thread, as
 * a control plane makes them.
 *
 * DPDK's figures: each repetition runs each autotest once (minutes: the LPM
 * one builds 1.2 M routes first) and turns its cycles per operation into a
 * rate with the TSC frequency EAL logs. A run that fails or prints nothing
 * shows as such in the table. `--filter dpkit,wasm,ts` leaves DPDK out.
 */
import Table from 'cli-table3';
import { startWorker } from '../src/eal/spawn.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import type { ThreadSpec } from '../src/apps/bench/harness.js';
import { summarize } from '../src/apps/bench/stats.js';
import { Heap } from '../src/eal/heap.js';
import { Hash, hashFootprint } from '../src/hash/hash.js';
import { Lpm, lpmFootprint } from '../src/lpm/lpm.js';
import { Lpm6, lpm6Footprint } from '../src/lpm/lpm6.js';
import { runAutotest, type Autotest, type AutotestRun, type Metric } from '../src/apps/bench/dpdk-test.js';

export type TableKind = 'lpm' | 'lpm6' | 'hash';
/** single: one lookup per call (TypeScript); bulk: a burst per kernel call; x4: rte_lpm_lookupx4. */
export type LookupOp = 'single' | 'bulk' | 'x4';

const LPM_CONFIG = { maxRules: 131072, numberTbl8s: 16384 };
const LPM_PREFIXES = 100_000;
const LPM6_CONFIG = { maxRules: 4096, numberTbl8s: 16384 };
const LPM6_PREFIXES = 1000;
const HASH_CONFIG = { entries: 1 << 19, keyLen: 16 };
/** hash_perf_autotest's load: 75 % of the entries. */
const HASH_KEYS = (HASH_CONFIG.entries * 3) / 4;
/** Addresses (or keys) the lookups walk, a burst at a time. */
export const LOOKUPS = 1 << 16;

/** xorshift32 from `seed`: the same tables in every repetition and in both datapaths. */
function random(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
}

/** A router-like prefix length: 0.2 % /8../15, 10 % /16../23, 80 % /24, 9.8 % /25../32. */
function lpmDepth(r: number): number {
  const p = r % 1000;
  if (p < 2) return 8 + (r % 8);
  if (p < 102) return 16 + (r % 8);
  if (p < 902) return 24;
  return 25 + (r % 8);
}

/** The prefixes of each table, in add order. */
function lpmPrefixes(): { ip: number; depth: number }[] {
  const next = random(0x2545f491);
  return Array.from({ length: LPM_PREFIXES }, () => ({ ip: next(), depth: lpmDepth(next()) }));
}

function lpm6Prefixes(): { ip: Uint8Array; depth: number }[] {
  const next = random(0x5bd1e995);
  return Array.from({ length: LPM6_PREFIXES }, () => ({ ip: Uint8Array.from({ length: 16 }, () => next() & 0xff), depth: 1 + (next() % 128) }));
}

function hashKeys(): Uint8Array {
  const next = random(0x6b43a9b5);
  return Uint8Array.from({ length: HASH_KEYS * HASH_CONFIG.keyLen }, () => next() & 0xff);
}

/** One table ready for lookups: the heap, the table's offset, and LOOKUPS addresses or keys at `at` (4, 16 or 16 bytes each). */
export interface Built {
  heap: Heap;
  table: number;
  at: number;
}

/** Builds `kind`'s table in a fresh heap, and what the lookups walk. */
export function buildTable(kind: TableKind, datapath: 'wasm' | 'ts'): Built {
  if (kind === 'lpm') {
    const heap = Heap.create({ size: lpmFootprint(LPM_CONFIG) + (2 << 20), datapath });
    const lpm = Lpm.create(heap, 'bench', LPM_CONFIG);
    for (const p of lpmPrefixes()) lpm.add(p.ip, p.depth, p.ip & 0xff);
    const ips = heap.burst(LOOKUPS);
    const next = random(0x1234567);
    for (let i = 0; i < LOOKUPS; i++) ips[i] = next();
    return { heap, table: lpm.offset, at: ips.byteOffset };
  }
  if (kind === 'lpm6') {
    const heap = Heap.create({ size: lpm6Footprint(LPM6_CONFIG) + (2 << 20), datapath });
    const lpm = Lpm6.create(heap, 'bench', LPM6_CONFIG);
    const prefixes = lpm6Prefixes();
    prefixes.forEach((p, i) => lpm.add(p.ip, p.depth, i & 0xff));
    // Each address under a rule: the rule's bits, then random host bits.
    const at = heap.reserve(16 * LOOKUPS, 64, 'bench lpm6 addresses');
    const next = random(0x7654321);
    for (let i = 0; i < LOOKUPS; i++) {
      const p = prefixes[next() % prefixes.length]!;
      for (let b = 0; b < 16; b++) {
        const keep = Math.max(0, Math.min(8, p.depth - 8 * b));
        const mask = (0xff00 >> keep) & 0xff;
        heap.u8[at + 16 * i + b] = (p.ip[b]! & ~mask) | (next() & mask);
      }
    }
    return { heap, table: lpm.offset, at };
  }
  const keys = hashKeys();
  const heap = Heap.create({ size: hashFootprint(HASH_CONFIG) + 16 * LOOKUPS + (2 << 20), datapath });
  const hash = Hash.create(heap, 'bench', HASH_CONFIG);
  for (let i = 0; i < HASH_KEYS; i++) hash.addKey(keys.subarray(16 * i, 16 * i + 16), i);
  // LOOKUPS of the added keys, in an order unrelated to the adds'.
  const at = heap.reserve(16 * LOOKUPS, 64, 'bench hash keys');
  const next = random(0x3c6ef372);
  for (let i = 0; i < LOOKUPS; i++) {
    const k = next() % HASH_KEYS;
    heap.u8.set(keys.subarray(16 * k, 16 * k + 16), at + 16 * i);
  }
  return { heap, table: hash.offset, at };
}

/** Adds per second, in millions: `kind`'s whole table into an empty one, timed. */
function addRate(kind: TableKind): number {
  if (kind === 'lpm') {
    const prefixes = lpmPrefixes();
    const lpm = Lpm.create(Heap.create({ size: lpmFootprint(LPM_CONFIG) + (1 << 20) }), 'bench', LPM_CONFIG);
    const t0 = performance.now();
    for (const p of prefixes) lpm.add(p.ip, p.depth, p.ip & 0xff);
    return prefixes.length / (performance.now() - t0) / 1e3;
  }
  if (kind === 'lpm6') {
    const prefixes = lpm6Prefixes();
    const lpm = Lpm6.create(Heap.create({ size: lpm6Footprint(LPM6_CONFIG) + (1 << 20) }), 'bench', LPM6_CONFIG);
    const t0 = performance.now();
    for (let i = 0; i < prefixes.length; i++) lpm.add(prefixes[i]!.ip, prefixes[i]!.depth, i & 0xff);
    return prefixes.length / (performance.now() - t0) / 1e3;
  }
  const keys = hashKeys();
  const views = Array.from({ length: HASH_KEYS }, (_, i) => keys.subarray(16 * i, 16 * i + 16));
  const hash = Hash.create(Heap.create({ size: hashFootprint(HASH_CONFIG) + (1 << 20) }), 'bench', HASH_CONFIG);
  const t0 = performance.now();
  for (let i = 0; i < HASH_KEYS; i++) hash.addKey(views[i]!, i);
  return HASH_KEYS / (performance.now() - t0) / 1e3;
}

/** Heap bytes of each dpkit table as configured here. */
export const FOOTPRINT: Record<TableKind, number> = {
  lpm: lpmFootprint(LPM_CONFIG),
  lpm6: lpm6Footprint(LPM6_CONFIG),
  hash: hashFootprint(HASH_CONFIG),
};

interface LookupRow {
  table: TableKind;
  op: LookupOp;
  burst: number;
  datapath: 'wasm' | 'ts';
}

/** The lookup rows; bulk bursts as the autotests' (rte_lpm 32, rte_hash 16; rte_lpm6's is one call over all 100 000: 64 here). */
const LOOKUP_ROWS: LookupRow[] = [
  { table: 'lpm', op: 'single', burst: 1, datapath: 'ts' },
  { table: 'lpm', op: 'bulk', burst: 32, datapath: 'wasm' },
  { table: 'lpm', op: 'bulk', burst: 64, datapath: 'wasm' },
  { table: 'lpm', op: 'x4', burst: 4, datapath: 'wasm' },
  { table: 'lpm', op: 'bulk', burst: 32, datapath: 'ts' },
  { table: 'lpm6', op: 'single', burst: 1, datapath: 'ts' },
  { table: 'lpm6', op: 'bulk', burst: 64, datapath: 'wasm' },
  { table: 'lpm6', op: 'bulk', burst: 64, datapath: 'ts' },
  { table: 'hash', op: 'single', burst: 1, datapath: 'ts' },
  { table: 'hash', op: 'bulk', burst: 16, datapath: 'wasm' },
  { table: 'hash', op: 'bulk', burst: 64, datapath: 'wasm' },
  { table: 'hash', op: 'bulk', burst: 16, datapath: 'ts' },
];

const OP_NAME: Record<LookupOp, string> = { single: 'lookup', bulk: 'lookupBulk', x4: 'lookupX4' };
/** Which DPDK autotest times which table. */
const AUTOTEST: Record<TableKind, Autotest> = { lpm: 'lpm_perf_autotest', lpm6: 'lpm6_perf_autotest', hash: 'hash_perf_autotest' };

function rowName(r: LookupRow): string {
  if (r.op === 'single') return `${r.table} lookup, dpkit`;
  return `${r.table} ${OP_NAME[r.op]}${r.op === 'bulk' ? ` ${r.burst}` : ''}, ${r.datapath}`;
}

function threads(r: LookupRow): ThreadSpec[] {
  const b = buildTable(r.table, r.datapath);
  const job = { kind: r.table, op: r.op, burst: r.burst, datapath: r.datapath, heap: b.heap.descriptor(), table: b.table, at: b.at };
  return [{ counted: true, start: (ctl, thread) => startWorker('lpm.worker', import.meta.url, { workerData: { ctl, thread, ...job } }) }];
}

/** Each repetition's run of each autotest, shared by the metrics read from it. */
const autotestRuns = new Map<Autotest, Promise<AutotestRun>[]>();

const METRIC_OP: Record<Metric, string> = { add: 'add', lookup: 'lookup', bulk: 'lookupBulk', x4: 'lookupX4' };
const dpdkName = (table: TableKind, metric: Metric) => `${table} ${METRIC_OP[metric]}, DPDK`;

/** DPDK's figure for `metric` of `table`: the k-th call reads the k-th run of its autotest (one run per repetition). */
function dpdkCase(table: TableKind, metric: Metric): BenchCase {
  const test = AUTOTEST[table];
  const op = METRIC_OP[metric];
  let calls = 0;
  return {
    name: dpdkName(table, metric),
    params: { table, op: metric, system: 'dpdk' },
    measure: async () => {
      const runs = autotestRuns.get(test) ?? [];
      autotestRuns.set(test, runs);
      const k = calls++;
      runs[k] ??= runAutotest(test);
      const r = await runs[k];
      if ('failed' in r) return { failed: r.failed };
      const cycles = r.cycles[metric];
      if (cycles === undefined) return { failed: `${test} printed no ${op} figure` };
      return { mpps: r.tscHz / cycles / 1e6, gc: 0 };
    },
  };
}

/** The metrics each table is compared on, and the dpkit row that answers each. */
export const COMPARED: { table: TableKind; metric: Metric; dpkit: string }[] = [
  { table: 'lpm', metric: 'lookup', dpkit: 'lpm lookup, dpkit' },
  { table: 'lpm', metric: 'bulk', dpkit: 'lpm lookupBulk 32, wasm' },
  { table: 'lpm', metric: 'x4', dpkit: 'lpm lookupX4, wasm' },
  { table: 'lpm', metric: 'add', dpkit: 'lpm add, dpkit' },
  { table: 'lpm6', metric: 'lookup', dpkit: 'lpm6 lookup, dpkit' },
  { table: 'lpm6', metric: 'bulk', dpkit: 'lpm6 lookupBulk 64, wasm' },
  { table: 'lpm6', metric: 'add', dpkit: 'lpm6 add, dpkit' },
  { table: 'hash', metric: 'lookup', dpkit: 'hash lookup, dpkit' },
  { table: 'hash', metric: 'bulk', dpkit: 'hash lookupBulk 16, wasm' },
  { table: 'hash', metric: 'add', dpkit: 'hash add, dpkit' },
];

/**
 * DPDK's table memory for the same configuration, from its structures'
 * sizes (dpdk-test prints none): rte_lpm's 4-byte entries in a 2^24 tbl24
 * and 256-entry tbl8 groups, 8 bytes a rule. Only rte_lpm's is this simple;
 * the others show as not reported.
 */
function dpdkLpmBytes(): number {
  return 4 * ((1 << 24) + 256 * LPM_CONFIG.numberTbl8s) + 8 * LPM_CONFIG.maxRules;
}

export const benchmark: Benchmark = {
  name: 'lpm',
  title: "Routing tables against dpdk-test's lpm_perf, lpm6_perf and hash_perf autotests: lookups one and a burst at a time, adds (M operations/s), one thread",
  cases: (): BenchCase[] => [
    ...LOOKUP_ROWS.map((r): BenchCase => ({ name: rowName(r), params: { table: r.table, op: r.op, burst: r.burst, datapath: r.datapath }, threads: () => threads(r) })),
    ...(['lpm', 'lpm6', 'hash'] as const).map((table): BenchCase => ({ name: `${table} add, dpkit`, params: { table, op: 'add' }, measure: () => Promise.resolve({ mpps: addRate(table), gc: 0 }) })),
    ...COMPARED.map((c) => dpdkCase(c.table, c.metric)),
  ],
  summary: (results) => {
    const median = (name: string) => {
      const r = results.find((x) => x.name === name);
      return r && r.samples.length ? summarize(r.samples).median : undefined;
    };
    // Adds run at thousands a second: three significant digits, whatever the scale.
    const fmt = (x: number | undefined) => (x === undefined ? '-' : x >= 100 ? x.toFixed(0) : x.toPrecision(3));
    const t = new Table({ head: ['table', 'operation', 'dpkit', 'DPDK', 'dpkit / DPDK'], style: { head: [], border: [] } });
    for (const c of COMPARED) {
      const a = median(c.dpkit);
      const d = median(dpdkName(c.table, c.metric));
      if (a === undefined && d === undefined) continue; // both left out by --filter, or both failed (listed above)
      t.push([c.table, `${c.metric === 'bulk' ? 'bulk lookup' : c.metric === 'x4' ? 'lookupx4' : c.metric} (M/s)`, fmt(a), d === undefined ? 'no figure' : fmt(d), a !== undefined && d !== undefined ? fmt(a / d) : '-']);
    }
    const mib = (b: number) => (b / 2 ** 20).toFixed(1);
    t.push(['lpm', 'memory (MiB)', mib(FOOTPRINT.lpm), `${mib(dpdkLpmBytes())} (computed)`, (FOOTPRINT.lpm / dpdkLpmBytes()).toFixed(2)]);
    t.push(['lpm6', 'memory (MiB)', mib(FOOTPRINT.lpm6), 'not reported', '-']);
    t.push(['hash', 'memory (MiB)', mib(FOOTPRINT.hash), 'not reported', '-']);
    return `dpkit against dpdk-test (goal: >= 1.0 on bulk lookups; "no figure": see the runs without one above)\n${t.toString()}`;
  },
};
