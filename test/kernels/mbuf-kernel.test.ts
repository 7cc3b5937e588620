import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AF_PACKET_LAYOUT_ID } from '../../src/drivers/af_packet/af-packet-layout.js';
import { Heap } from '../../src/eal/heap.js';
import { HEAP_LAYOUT_ID } from '../../src/eal/heap-layout.js';
import { NULL_LAYOUT_ID } from '../../src/drivers/null/null-layout.js';
import { FWD_LAYOUT_ID } from '../../src/fwd/fwd-layout.js';
import { STATS_LAYOUT_ID } from '../../src/ethdev/stats-layout.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { H_NB_SEGS, MBUF_HALF_SHIFT, MBUF_LAYOUT_ID, MBUF_SHIFT } from '../../src/mem/mbuf-layout.js';
import { CACHE_STRIDE, MEMPOOL_LAYOUT_ID, P_CACHE_BASE, P_RING } from '../../src/mem/mempool-layout.js';
import { Mempool } from '../../src/mem/mempool.js';
import { RING_LAYOUT_ID } from '../../src/ring/ring-layout.js';
import { GUEST_MEMORY_LAYOUT_ID } from '../../src/virtio/guest-memory-layout.js';
import { GUEST_RING_LAYOUT_ID } from '../../src/drivers/virtio/guest-ring-layout.js';
import { VHOST_QUEUE_LAYOUT_ID } from '../../src/vhost/vhost-queue-layout.js';
import { VIRTIO_NET_LAYOUT_ID } from '../../src/virtio/virtio-net-layout.js';
import { VRING_LAYOUT_ID } from '../../src/virtio/vring-layout.js';
import { VRING_STATE_LAYOUT_ID } from '../../src/vhost/vring-state-layout.js';
import { Ring } from '../../src/ring/ring.js';
import { assertFull } from '../helpers.js';

describe('mbuf kernel', () => {
  it('was compiled for the layout the TypeScript side uses', () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.ok(heap.kernels, 'wasm datapath by default');
    // Records declared once (*.record.ts) are checked by their layout ids; the rest value by value.
    assert.deepEqual(heap.kernels.layout, {
      layoutHeap: HEAP_LAYOUT_ID,
      layoutMbuf: MBUF_LAYOUT_ID,
      layoutMempool: MEMPOOL_LAYOUT_ID,
      layoutFwd: FWD_LAYOUT_ID,
      layoutNull: NULL_LAYOUT_ID,
      layoutRing: RING_LAYOUT_ID,
      layoutStats: STATS_LAYOUT_ID,
      layoutGuestMemory: GUEST_MEMORY_LAYOUT_ID,
      layoutGuestRing: GUEST_RING_LAYOUT_ID,
      layoutVhostQueue: VHOST_QUEUE_LAYOUT_ID,
      layoutVirtioNet: VIRTIO_NET_LAYOUT_ID,
      layoutVring: VRING_LAYOUT_ID,
      layoutVringState: VRING_STATE_LAYOUT_ID,
      layoutAfPacket: AF_PACKET_LAYOUT_ID,
    });
  });

  it('leaves the heap byte for byte as its TypeScript twin does, over random bursts', () => {
    // Two identical heaps, one per datapath, driven by the same random script.
    const make = (datapath: 'wasm' | 'ts') => {
      const heap = Heap.create({ size: 8 << 20, datapath });
      const mp = Mempool.create(heap, { name: 'twin', n: 600, cacheSize: 64 });
      const clones = Mempool.create(heap, { name: 'clones', n: 64, cacheSize: 8 });
      const mb = new Mbufs(heap);
      const bursts = [heap.burst(128), heap.burst(128)];
      const held: number[] = [];
      return { heap, mp, clones, mb, bursts, held };
    };
    const sides = [make('wasm'), make('ts')];
    assert.equal(sides[0]!.heap.datapath, 'wasm');
    assert.equal(sides[1]!.heap.datapath, 'ts');
    const mpA = sides[0]!.mp;
    const ring = Ring.attach(sides[0]!.heap, { offset: mpA.heap.u32[(mpA.offset >>> 2) + P_RING]!, name: 'r' });
    // Regions to compare: records of both pools, the main lcore's caches, the rings.
    const regions: [number, number][] = [];
    for (const mp of [sides[0]!.mp, sides[0]!.clones]) {
      const w = mp.offset >>> 2;
      regions.push([mp.firstHandle << MBUF_SHIFT, mp.size << MBUF_SHIFT]);
      regions.push([mp.heap.u32[w + P_CACHE_BASE]!, CACHE_STRIDE]);
      regions.push([mp.heap.u32[w + P_RING]!, Ring.memSize(ring.size)]);
    }
    let rng = 42;
    const rand = (n: number) => {
      rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff;
      return (rng >>> 8) % n; // high bits: the low ones cycle with a short period
    };
    let kernelAllocs = 0;
    for (let step = 0; step < 3000; step++) {
      const op = rand(10);
      const n = 1 + rand(op < 2 ? 128 : 48);
      const shuffleSeed = rand(1000);
      for (const s of sides) {
        const b = s.bursts[0]!;
        if (op < 5) {
          // Allocate, sometimes chain pairs, sometimes clone, and hold.
          const got = s.mp.allocBulk(b, n);
          if (got === 0) continue;
          for (let i = 0; i < n; i++) {
            s.mb.append(b[i]!, 60 + ((i * 7 + step) % 200));
            s.mb.setPort(b[i]!, i & 3);
          }
          for (let i = 0; i + 1 < n; i += 2) if ((shuffleSeed + i) % 9 === 0) s.mb.chain(b[i]!, b[i + 1]!), (b[i + 1] = 0);
          for (let i = 0; i < n; i++) {
            const h = b[i]!;
            if (h === 0) continue;
            s.held.push(h);
            if ((shuffleSeed + i) % 13 === 0) {
              const c = s.mb.clone(h, s.clones);
              if (c !== 0) s.held.push(c);
            }
          }
        } else {
          // Free a burst of held packets, in a seed-dependent order, some NULLs in it.
          const k = Math.min(n, s.held.length);
          for (let i = 0; i < k; i++) {
            const j = (shuffleSeed * 31 + i * 17) % s.held.length;
            b[i] = s.held[j]!;
            s.held[j] = s.held[s.held.length - 1]!;
            s.held.pop();
          }
          // Sometimes a NULL at the end, which rte_pktmbuf_free_bulk skips.
          const withNull = shuffleSeed % 11 === 0 ? 1 : 0;
          b[k] = 0;
          s.mb.freeBulk(b, k + withNull);
        }
      }
      if (op < 5) kernelAllocs++;
      for (const [off, len] of regions) {
        const a = sides[0]!.heap.u8.subarray(off, off + len);
        const t = sides[1]!.heap.u8.subarray(off, off + len);
        if (Buffer.compare(a, t) !== 0) assert.fail(`step ${step} (op ${op}, n ${n}): heaps differ in region at ${off}`);
      }
      assert.deepEqual(sides[0]!.held, sides[1]!.held);
    }
    assert.ok(kernelAllocs > 1000);
    for (const s of sides) {
      for (const h of s.held) s.mb.free(h);
      assertFull(s.mp, s.clones);
    }
  });

  it('is only given bursts that live in the heap: a plain array is a type error', () => {
    const heap = Heap.create({ size: 4 << 20 });
    const mp = Mempool.create(heap, { name: 'p', n: 256, cacheSize: 32 });
    const mb = new Mbufs(heap);
    // @ts-expect-error: a Uint32Array outside the heap is not a Burst, so it never reaches a kernel
    const typeOnly = () => mp.allocBulk(new Uint32Array(16), 16);
    assert.equal(typeof typeOnly, 'function');
    const outside = heap.burstAt(heap.burst(32).byteOffset + 16 * 4, 16); // any place in the heap will do
    const inside = heap.burst(16);
    for (let i = 0; i < 100; i++) {
      assert.equal(mp.allocBulk(i & 1 ? inside : outside, 16), 16);
      mb.freeBulk(i & 1 ? inside : outside, 16);
    }
    assertFull(mp);
  });

  it('lets a wasm lcore and a TypeScript lcore share one pool', () => {
    const heap = Heap.create({ size: 4 << 20 });
    const mp = Mempool.create(heap, { name: 'mixed', n: 512, cacheSize: 32 });
    const ts = Heap.attach(heap.descriptor(), 1, 'ts');
    const mpTs = Mempool.attach(ts, mp.descriptor());
    const mbW = new Mbufs(heap);
    const mbT = new Mbufs(ts);
    const bw = heap.burst(32);
    const bt = ts.burst(32);
    for (let i = 0; i < 200; i++) {
      assert.equal(mp.allocBulk(bw, 32), 32);
      assert.equal(mpTs.allocBulk(bt, 32), 32);
      // Cross over: each lcore frees what the other allocated.
      mbT.freeBulk(bw, 32);
      mbW.freeBulk(bt, 32);
      assert.equal(mbW.nbSegs(bw[0]!), 1);
      assert.equal(heap.u16[(bw[0]! << MBUF_HALF_SHIFT) + H_NB_SEGS], 1);
    }
    assertFull(mp);
  });
});
