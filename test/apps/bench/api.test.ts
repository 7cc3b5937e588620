// The `api` benchmark's reading of l2fwd's output (DPDK's and dpkit's print the same block).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sentPerPeriod } from '../../../bench/api.js';

it("reads l2fwd's per-second throughput from the growth of Total packets sent, DPDK's screen clears included", () => {
  const block = (sent: number) => `\x1b[2J\x1b[1;1H\nPort statistics ====================================\nAggregate statistics ===============================\nTotal packets sent:       ${String(sent).padStart(20)}\nTotal packets received:   ${String(sent).padStart(20)}\n`;
  assert.deepEqual(sentPerPeriod([0, 5_000_000, 12_000_000, 20_500_000].map(block).join('')), [5_000_000, 7_000_000, 8_500_000]);
  assert.deepEqual(sentPerPeriod('EAL: no statistics yet\n'), []);
});
