import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';

it('the kernels copy every length from 0 to 600 bytes exactly, at any alignment, touching nothing around', () => {
  const heap = Heap.create({ size: 4 << 20 });
  const copyList = heap.kernels!.fn('vhostCopyList');
  const u8 = heap.u8;
  // Past SHORT_COPY_MAX (256) too, where memory.copy takes over.
  const size = 1024;
  const src = heap.reserve(size, 64);
  const dst = heap.reserve(size, 64);
  const list = heap.burst(3);
  let rng = 11;
  const byte = () => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 16) & 0xff;
  for (let len = 0; len <= 600; len++) {
    for (const [so, dO] of [[0, 0], [1, 3], [7, 16], [15, 1]] as const) {
      for (let i = 0; i < size; i++) {
        u8[src + i] = byte();
        u8[dst + i] = 0xa5;
      }
      // Through copyList, the vhost copy every short-copy path of the kernels shares.
      list[0] = dst + 32 + dO;
      list[1] = src + 32 + so;
      list[2] = len;
      copyList(list.byteOffset, 1);
      const at = `length ${len}, source +${so}, destination +${dO}`;
      assert.deepEqual(u8.subarray(dst + 32 + dO, dst + 32 + dO + len), u8.subarray(src + 32 + so, src + 32 + so + len), at);
      assert.ok(u8.subarray(dst, dst + 32 + dO).every((b) => b === 0xa5), `${at}: a byte before the copy changed`);
      assert.ok(u8.subarray(dst + 32 + dO + len, dst + size).every((b) => b === 0xa5), `${at}: a byte after the copy changed`);
    }
  }
});
