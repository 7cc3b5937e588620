import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { GuestMemory, MAX_REGIONS } from '../../src/virtio/guest-memory.js';
import { Chain, ChainError, DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE, Vring, vringSizes } from '../../src/virtio/vring.js';

const MiB = 1 << 20;

/** A heap with two guest regions separated by guard zones, and a ring of `num` in region 0. */
function guest(num = 16) {
  const heap = Heap.create({ size: 16 * MiB });
  const guard = 64 * 1024;
  const r0 = heap.reserve(guard + 2 * MiB + guard, 4096, 'region 0 with guards') + guard;
  const r1 = heap.reserve(guard + MiB + guard, 4096, 'region 1 with guards') + guard;
  const mem = GuestMemory.create(heap);
  // Region 0 at GPA 0x1000_0000, region 1 far above 4 GiB.
  const regions = [
    { gpa: 0x1000_0000, size: 2 * MiB, offset: r0 },
    { gpa: 0x1_2000_0000, size: MiB, offset: r1 },
  ];
  mem.setRegions(regions);
  const s = vringSizes(num);
  const descGpa = 0x1000_0000;
  const availGpa = descGpa + s.desc;
  const usedGpa = (availGpa + s.avail + 3) & ~3;
  const vq = Vring.open(mem, num, descGpa, availGpa, usedGpa);
  assert.ok(vq instanceof Vring, String(vq));
  const dv = heap.view;
  /** Writes descriptor i of the table at heap offset `table`. */
  const desc = (i: number, addr: number, len: number, flags = 0, next = 0, table = vq.desc) => {
    const d = table + i * DESC_SIZE;
    dv.setUint32(d, addr % 2 ** 32, true);
    dv.setUint32(d + 4, Math.floor(addr / 2 ** 32), true);
    dv.setUint32(d + 8, len, true);
    dv.setUint16(d + 12, flags, true);
    dv.setUint16(d + 14, next, true);
  };
  return { heap, mem, vq, desc, regions, guard };
}

describe('guest memory', () => {
  it('translates ranges inside one region only', () => {
    const { mem, regions } = guest();
    const [a, b] = regions as [{ gpa: number; size: number; offset: number }, { gpa: number; size: number; offset: number }];
    assert.equal(mem.translate(a.gpa, 1), a.offset);
    assert.equal(mem.translate(a.gpa + 100, a.size - 100), a.offset + 100, 'up to the last byte');
    assert.equal(mem.translate(a.gpa + 100, a.size - 99), -1, 'one byte past the end');
    assert.equal(mem.translate(a.gpa - 1, 2), -1, 'one byte before the start');
    assert.equal(mem.translate(b.gpa + 8, 64), b.offset + 8, 'above 4 GiB');
    assert.equal(mem.translate(a.gpa, 0), -1, 'empty ranges are nothing');
    assert.equal(mem.translate(2 ** 64 - 4096, 16), -1);
    assert.equal(mem.translate(a.gpa + a.size - 8, 2 ** 32 - 1), -1, 'a huge length cannot wrap');
  });

  it('refuses a bad memory table', () => {
    const { mem, heap } = guest();
    assert.throws(() => mem.setRegions([{ gpa: 0, size: 4096, offset: 0 }, { gpa: 2048, size: 4096, offset: 8192 }]), /regions at 0x0 and 0x800 overlap/);
    assert.throws(() => mem.setRegions(Array.from({ length: MAX_REGIONS + 1 }, (_, i) => ({ gpa: i * 4096, size: 4096, offset: 0 }))), /9 regions, at most 8/);
    assert.throws(() => mem.setRegions([{ gpa: 0, size: 4096, offset: heap.size - 100 }]), /region 0 is not inside the heap/);
    assert.throws(() => mem.setRegions([{ gpa: 2 ** 53 - 10, size: 4096, offset: 0 }]), /region 0 ends beyond 2\^53/);
  });
});

describe('split virtqueue chains', () => {
  it('opens rings only inside guest memory and of a power-of-two size', () => {
    const { mem } = guest();
    assert.match(String(Vring.open(mem, 100, 0x1000_0000, 0x1000_1000, 0x1000_2000)), /queue size 100 is not a power of two/);
    assert.match(String(Vring.open(mem, 256, 0x1000_0000 + 2 * MiB - 64, 0x1000_1000, 0x1000_2000)), /is not inside guest memory/);
  });

  it('walks a chain: buffers in order, writable flags, zero-length descriptors skipped, indirect tables', () => {
    const { vq, desc, mem } = guest();
    desc(3, 0x1000_8000, 14, VRING_DESC_F_NEXT, 7);
    desc(7, 0x1000_9000, 0, VRING_DESC_F_NEXT, 1);
    desc(1, 0x1_2000_0100, 1500, VRING_DESC_F_WRITE);
    const c = new Chain(8);
    assert.equal(vq.walk(3, c), 2);
    assert.deepEqual([...c.offset.subarray(0, 2)], [mem.translate(0x1000_8000, 14), mem.translate(0x1_2000_0100, 1500)]);
    assert.deepEqual([...c.length.subarray(0, 2)], [14, 1500]);
    assert.deepEqual([...c.writable.subarray(0, 2)], [0, 1]);
    // Head 5 points at an indirect table of 3 descriptors in region 1.
    const tableGpa = 0x1_2000_4000;
    const table = mem.translate(tableGpa, 3 * DESC_SIZE);
    desc(0, 0x1000_a000, 10, VRING_DESC_F_NEXT, 2, table);
    desc(2, 0x1000_b000, 20, VRING_DESC_F_NEXT, 1, table);
    desc(1, 0x1000_c000, 30, 0, 0, table);
    desc(5, tableGpa, 3 * DESC_SIZE, VRING_DESC_F_INDIRECT);
    assert.equal(vq.walk(5, c), 3);
    assert.deepEqual([...c.length.subarray(0, 3)], [10, 20, 30]);
  });

  it('drops hostile chains with a reason: head, next, loop, address, indirect, length', () => {
    const { vq, desc, mem } = guest();
    const c = new Chain(4);
    assert.equal(vq.walk(16, c), ChainError.HEAD);
    desc(0, 0x1000_8000, 64, VRING_DESC_F_NEXT, 16);
    assert.equal(vq.walk(0, c), ChainError.NEXT);
    desc(0, 0x1000_8000, 64, VRING_DESC_F_NEXT, 1);
    desc(1, 0x1000_8000, 64, VRING_DESC_F_NEXT, 0);
    assert.equal(vq.walk(0, new Chain(64)), ChainError.LOOP, 'a cycle ends');
    desc(1, 0x1000_8000, 0, VRING_DESC_F_NEXT, 1);
    assert.equal(vq.walk(1, c), ChainError.LOOP, 'a self loop of empty descriptors ends');
    desc(0, 0x2000_0000, 64);
    assert.equal(vq.walk(0, c), ChainError.ADDR, 'outside every region');
    desc(0, 0x1000_0000 + 2 * MiB - 32, 64);
    assert.equal(vq.walk(0, c), ChainError.ADDR, 'straddles the end of a region');
    desc(0, 0x1000_8000, 0xffffffff);
    assert.equal(vq.walk(0, c), ChainError.ADDR, 'huge length');
    const table = mem.translate(0x1_2000_4000, 64);
    desc(0, 0x1_2000_4000, 32, VRING_DESC_F_INDIRECT);
    desc(0, 0x1_2000_4000, 32, VRING_DESC_F_INDIRECT, 0, table);
    assert.equal(vq.walk(0, c), ChainError.INDIRECT, 'nested indirect');
    desc(0, 0x1_2000_4000, 33, VRING_DESC_F_INDIRECT);
    assert.equal(vq.walk(0, c), ChainError.INDIRECT, 'partial descriptor');
    desc(0, 0x1_2000_4000, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
    assert.equal(vq.walk(0, c), ChainError.INDIRECT, 'indirect with next');
    for (let i = 0; i < 5; i++) desc(i, 0x1000_8000 + i * 64, 64, VRING_DESC_F_NEXT, i + 1);
    desc(5, 0x1000_8000, 64);
    assert.equal(vq.walk(0, c), ChainError.TOO_LONG);
    assert.equal(c.count, 0, 'a refused chain leaves no buffers');
  });

  it('survives 10^5 random hostile tables: never throws, never hands out a byte outside guest memory', () => {
    const { vq, desc, mem, regions, heap } = guest(64);
    let rng = 0x2545f491;
    const rand = (n: number) => {
      rng ^= rng << 13;
      rng ^= rng >>> 17;
      rng ^= rng << 5;
      return (rng >>> 0) % n;
    };
    const table = mem.translate(0x1_2000_8000, 64 * DESC_SIZE);
    // Addresses near the interesting edges, or anywhere.
    const addr = () => {
      const r = regions[rand(2)]!;
      switch (rand(5)) {
        case 0:
          return r.gpa + r.size - rand(4096);
        case 1:
          return r.gpa - rand(4096);
        case 2:
          return rand(2 ** 31) * rand(2 ** 22);
        case 3:
          return 0x1_2000_8000; // the indirect table itself
        default:
          return r.gpa + rand(r.size);
      }
    };
    const len = () => [0, 1, 16, 48, 4096, 65536, 0xffffffff, rand(2 ** 32)][rand(8)]!;
    const c = new Chain(32);
    const inside = (off: number, n: number) => regions.some((r) => off >= r.offset && off + n <= r.offset + r.size);
    const seen = { ok: 0, [ChainError.HEAD]: 0, [ChainError.NEXT]: 0, [ChainError.LOOP]: 0, [ChainError.ADDR]: 0, [ChainError.INDIRECT]: 0, [ChainError.TOO_LONG]: 0 } as Record<string, number>;
    for (let iter = 0; iter < 100_000; iter++) {
      // Rewrite a few descriptors of both tables, then walk a random head.
      for (let k = 0; k < 4; k++) {
        const flags = rand(8);
        desc(rand(64), addr(), flags & VRING_DESC_F_INDIRECT ? rand(5) * 16 + rand(2) : len(), flags, rand(70), rand(2) ? vq.desc : table);
      }
      const r = vq.walk(rand(68), c);
      if (r >= 0) {
        seen['ok']!++;
        assert.equal(r, c.count);
        for (let i = 0; i < r; i++) assert.ok(inside(c.offset[i]!, c.length[i]!), `buffer ${i} at ${c.offset[i]} + ${c.length[i]} is outside guest memory`);
      } else seen[r]!++;
    }
    for (const [k, v] of Object.entries(seen)) assert.ok(v > 0, `the fuzzer reached ${k} (${JSON.stringify(seen)})`);
    assert.ok(heap.u8.length > 0);
  });
});
