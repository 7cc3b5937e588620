import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMPARED, LOOKUPS, benchmark, buildTable } from '../../../bench/lpm.js';
import { Hash } from '../../../src/hash/hash.js';
import { Lpm6 } from '../../../src/lpm/lpm6.js';

describe("bench lpm's cases", () => {
  const names = benchmark.cases({ reps: 1, durationMs: 1, warmupMs: 1, quick: true }).map((c) => c.name);

  it('compare every operation of lpm, lpm6 and hash with a dpkit row and a DPDK row that exist', () => {
    assert.deepEqual([...new Set(COMPARED.map((c) => c.table))], ['lpm', 'lpm6', 'hash']);
    for (const c of COMPARED) {
      assert.ok(names.includes(c.dpkit), `${c.dpkit} is a case`);
      assert.equal(names.filter((n) => n.startsWith(`${c.table} `) && n.endsWith(', DPDK')).length > 0, true);
    }
    assert.equal(names.filter((n) => n.endsWith(', DPDK')).length, COMPARED.length);
    assert.deepEqual(names.filter((n) => n.includes(' add, ')), ['lpm add, dpkit', 'lpm6 add, dpkit', 'hash add, dpkit', 'lpm add, DPDK', 'lpm6 add, DPDK', 'hash add, DPDK']);
    assert.ok(!names.some((n) => n.endsWith(', DPDK') && /dpkit|wasm|, ts$/.test(n)), '--filter dpkit,wasm,ts leaves DPDK out');
  });

  it("look lpm6 up at addresses under its rules and hash up by keys it holds: every lookup hits, as the autotests'", () => {
    for (const datapath of ['wasm', 'ts'] as const) {
      const six = buildTable('lpm6', datapath);
      const lpm6 = Lpm6.attach(six.heap, six.table);
      const hops = new Int32Array(six.heap.u8.buffer, six.heap.reserve(4 * LOOKUPS), LOOKUPS);
      lpm6.lookupBulk(six.heap.u8.subarray(six.at, six.at + 16 * LOOKUPS), hops, LOOKUPS);
      assert.equal(hops.filter((h) => h < 0).length, 0, `${datapath}: lpm6 misses`);
    }
    const h = buildTable('hash', 'wasm');
    const hash = Hash.attach(h.heap, h.table);
    const positions = new Int32Array(h.heap.u8.buffer, h.heap.reserve(4 * LOOKUPS), LOOKUPS);
    hash.lookupBulk(h.heap.u8.subarray(h.at, h.at + 16 * LOOKUPS), positions, LOOKUPS);
    assert.equal(positions.filter((p) => p < 0).length, 0, 'hash misses');
    assert.equal(hash.count, (1 << 19) * 0.75, "75 % of 2^19 entries, as hash_perf_autotest's");
  });
});
