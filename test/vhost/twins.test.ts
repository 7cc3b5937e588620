/**
 * The vhost and virtio_user kernels (split and packed rings) against their TypeScript twins: the same
 * traffic through a wasm heap and a TypeScript heap must leave the two heaps
 * byte for byte the same (rings, guest buffers, mbuf records, pools, counters).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../src/apps/bench/stats.js';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { LCORE_PENDING, LCORE_SIZE } from '../../src/eal/heap-layout.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';

const SCRATCH = ['vhost copy list', 'vhost packet addresses', 'vhost extra segments', 'vhost header slots', 'virtio rx refill', 'virtio tx reclaim'];

function run(datapath: 'wasm' | 'ts', seed: number, virtioArgs: string): Heap {
  const heap = Heap.create({ size: 16 << 20, datapath });
  const hp = Mempool.create(heap, { name: 'host', n: 1024, cacheSize: 32 });
  const gp = Mempool.create(heap, { name: 'guest', n: 1024, cacheSize: 32 });
  const ethdev = new Ethdev(heap, drivers);
  const mb = new Mbufs(heap);
  const host = ethdev.create('net_vhost0,iface=/twins');
  const guest = ethdev.create(`virtio_user0,path=/twins,queue_size=64${virtioArgs}`);
  portUp(ethdev, hp, host);
  portUp(ethdev, gp, guest);
  const rand = seededRandom(seed);
  const b = heap.burst(64);
  const r = heap.burst(64);
  for (let round = 0; round < 400; round++) {
    const [from, to, pool] = rand(2) === 0 ? [host, guest, hp] : [guest, host, gp];
    const n = 1 + rand(48);
    for (let i = 0; i < n; i++) {
      // Mostly one-mbuf packets (the kernels' case), some chained or too big for one buffer.
      const len = rand(8) === 0 ? 2049 + rand(4000) : 60 + rand(1400);
      let head = 0;
      for (let off = 0; off < len; off += 2048) {
        const m = pool.alloc();
        const at = mb.append(m, Math.min(2048, len - off));
        for (let k = 0; k < Math.min(2048, len - off); k += 61) heap.u8[at + k] = (round + k + i) & 0xff;
        if (head === 0) head = m;
        else mb.chain(head, m);
      }
      b[i] = head;
    }
    const sent = ethdev.txBurst(from, 0, b, n);
    if (sent < n) mb.freeBulk(b, n - sent, sent);
    for (let k; (k = ethdev.rxBurst(to, 0, r, 1 + rand(64))) > 0; ) mb.freeBulk(r, k);
  }
  for (const p of [guest, host]) {
    ethdev.stop(p);
    ethdev.close(p);
  }
  assertFull(hp, gp);
  return heap;
}

describe('vhost kernels and their twins', () => {
  for (const [label, args] of [
    ['mergeable, indirect', ''],
    ['no MRG_RXBUF, no INDIRECT', ',mrg_rxbuf=0,indirect=0,mtu=9000'],
    ['no IN_ORDER', ',in_order=0'],
    ['packed rings, mergeable', ',packed_vq=1'],
    ['packed rings, no MRG_RXBUF', ',packed_vq=1,mrg_rxbuf=0,mtu=9000'],
    ['packed rings, no IN_ORDER', ',packed_vq=1,in_order=0'],
  ] as const) {
    it(`leave the heap byte for byte as the TypeScript path does (${label})`, () => {
      for (const seed of [1, 2, 3]) {
        const wasm = run('wasm', seed, args);
        const ts = run('ts', seed, args);
        // Scratch areas are a thread's workspace (the copy list, refill staging): their leftovers differ and mean nothing.
        const skip = SCRATCH.map((k) => {
          const x = wasm.scratch(k, 1);
          return [x.byteOffset, x.byteOffset + x.byteLength] as const;
        });
        skip.push([wasm.lcore + LCORE_PENDING, wasm.lcore + LCORE_SIZE]); // free_bulk's pending array
        const a = wasm.u8;
        const t = ts.u8;
        let first = -1;
        for (let i = 0; i < a.length && first < 0; i++) if (a[i] !== t[i] && !skip.some(([lo, hi]) => i >= lo && i < hi)) first = i;
        assert.equal(first, -1, `seed ${seed}: heaps differ first at byte ${first}`);
      }
    });
  }
});
