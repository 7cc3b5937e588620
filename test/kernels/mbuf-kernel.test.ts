import assert from 'node:assert/strict';
import { basename } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { renderLayouts } from '../../scripts/gen-layouts.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { H_NB_SEGS, MBUF_HALF_SHIFT, MBUF_SHIFT } from '../../src/mem/mbuf-layout.js';
import { CACHE_STRIDE, P_CACHE_BASE, P_RING } from '../../src/mem/mempool-layout.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Ring } from '../../src/ring/ring.js';
import { assertFull } from '../helpers.js';
import { pktStatsTwin } from '../../src/ethdev/pkt-stats.js';

describe('mbuf kernel', () => {
  it('was compiled for the layout the TypeScript side uses: every record file\'s layout id', async () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.ok(heap.kernels, 'wasm datapath by default');
    // Every generated *-layout.ts, found as the build finds them, so a new owner's record needs no line here.
    const expected: Record<string, number> = {};
    for (const path of (await renderLayouts()).keys()) {
      if (!path.endsWith('-layout.ts')) continue;
      const stem = basename(path, '-layout.ts').replace(/-(.)/g, (_, c: string) => c.toUpperCase());
      const mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
      const id = Object.entries(mod).find(([k]) => k.endsWith('_LAYOUT_ID'));
      assert.ok(id, `${path} exports its layout id`);
      expected[`layout${stem[0]!.toUpperCase()}${stem.slice(1)}`] = id[1] as number;
    }
    assert.ok(Object.keys(expected).length >= 10, 'the records were found');
    assert.deepEqual(heap.kernels.layout, expected);
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

  it('mbufPktLenSum sums a burst\'s packet lengths as its twin does', () => {
    const heap = Heap.create({ size: 4 << 20 });
    assert.ok(heap.kernels);
    const mp = Mempool.create(heap, { name: 'lens', n: 512, cacheSize: 0 });
    const mb = new Mbufs(heap);
    const burst = heap.burst(512);
    assert.equal(mp.allocBulk(burst, 512), 512);
    let rng = 3;
    for (let i = 0; i < 512; i++) mb.setPktLen(burst[i]!, (rng = (Math.imul(rng, 1103515245) + 12345) >>> 0) % 65536);
    const kernel = heap.kernels.fn('mbufPktLenSum');
    for (const [off, n] of [[0, 0], [0, 1], [3, 32], [100, 412], [0, 512]] as const) {
      const expected = [...burst.subarray(off, off + n)].reduce((sum, h) => sum + mb.pktLen(h), 0);
      assert.equal(kernel(burst.byteOffset + off * 4, n), expected, `${n} from ${off}`);
      assert.equal(mb.pktLenSumTs(burst.byteOffset + off * 4, n), expected);
      assert.equal(mb.pktLenSum(heap.burstAt(burst.byteOffset + off * 4, n), n), expected);
    }
    mb.freeBulk(burst, 512);
    assertFull(mp);
  });

  it('ethdevPktStats counts size bins, multicast and broadcast as its twin does, byte for byte', () => {
    const heap = Heap.create({ size: 4 << 20 });
    assert.ok(heap.kernels);
    const mp = Mempool.create(heap, { name: 'pktstats', n: 256, cacheSize: 0 });
    const mb = new Mbufs(heap);
    const burst = heap.burst(256);
    assert.equal(mp.allocBulk(burst, 256), 256);
    let rng = 7;
    const next = () => (rng = (Math.imul(rng, 1103515245) + 12345) >>> 0);
    const lens = [0, 1, 63, 64, 65, 127, 128, 255, 256, 511, 512, 1023, 1024, 1518, 1519, 9000];
    for (let i = 0; i < 256; i++) {
      const h = burst[i]!;
      const len = i < lens.length ? lens[i]! : next() % 9001;
      // Unicast, multicast, broadcast and nearly broadcast destinations, some at odd data offsets.
      mb.prepend(h, i % 3);
      mb.setPktLen(h, len);
      const d = mb.mtod(h);
      const kind = next() % 4;
      for (let k = 0; k < 6; k++) heap.u8[d + k] = kind === 0 ? 0x02 : kind === 1 ? (k === 0 ? 0x01 : next() & 0xff) : kind === 2 ? 0xff : k === 5 ? 0xfe : 0xff;
    }
    const a = heap.reserve(128, 64);
    const b = heap.reserve(128, 64);
    const kernel = heap.kernels.fn('ethdevPktStats');
    for (const [off, n] of [[0, 0], [0, 16], [16, 240]] as const) {
      kernel(burst.byteOffset + off * 4, n, a);
      pktStatsTwin(mb, burst.byteOffset + off * 4, n, b);
    }
    assert.deepEqual(heap.u8.subarray(a, a + 128), heap.u8.subarray(b, b + 128));
    const f = heap.f64.subarray(a >>> 3, (a >>> 3) + 10);
    // The first 16 lengths: 0, 1, 63 undersize; 64; 65, 127; 128, 255; 256, 511; 512, 1023; 1024, 1518; 1519, 9000.
    let total = 0;
    for (let i = 0; i < 8; i++) total += f[i]!;
    assert.equal(total, 256);
    assert.ok(f[8]! > 0 && f[9]! > 0, 'multicast and broadcast both seen');
    // A burst of one size, as most are: the kernel counts it as one run.
    for (let i = 0; i < 32; i++) mb.setPktLen(burst[i]!, 64);
    const before = f[1]!;
    kernel(burst.byteOffset, 32, a);
    pktStatsTwin(mb, burst.byteOffset, 32, b);
    assert.deepEqual(heap.u8.subarray(a, a + 128), heap.u8.subarray(b, b + 128));
    assert.equal(f[1]! - before, 32);
    mb.freeBulk(burst, 256);
    assertFull(mp);
  });
});
