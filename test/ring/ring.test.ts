import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ArgError } from '../../src/errors.js';
import { Heap } from '../../src/eal/heap.js';
import { Ring } from '../../src/ring/ring.js';

const heap = Heap.create({ size: 4 << 20 });

function seq(n: number, from = 1): Uint32Array {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = from + i;
  return a;
}

describe('Ring', () => {
  it('holds count - 1 objects with a power-of-two count, as rte_ring', () => {
    const r = Ring.create(heap, { count: 8, sp: true, sc: true });
    assert.equal(r.capacity, 7);
    assert.equal(r.enqueueBurst(seq(10), 10), 7);
    assert.equal(r.count(), 7);
    assert.equal(r.freeCount(), 0);
    assert.ok(r.full());
  });

  it('holds exactly count objects with exactSize', () => {
    const r = Ring.create(heap, { count: 100, exactSize: true });
    assert.equal(r.capacity, 100);
    assert.equal(r.size, 128);
    assert.equal(r.enqueueBulk(seq(100), 100), 100);
    assert.equal(r.enqueueBulk(seq(1), 1), 0);
  });

  it('rejects a count that is not a power of two unless exactSize, naming the count', () => {
    assert.throws(() => Ring.create(heap, { name: 'bad', count: 100 }), (e: unknown) => e instanceof ArgError && /ring bad: count 100 is not a power of two/.test(e.message));
    assert.throws(() => Ring.create(heap, { count: 0 }), ArgError);
    assert.throws(() => Ring.create(heap, { count: 1.5 }), ArgError);
  });

  it('enqueueBulk is all or nothing when the ring is nearly full', () => {
    const r = Ring.create(heap, { count: 16 });
    assert.equal(r.enqueueBulk(seq(10), 10), 10);
    assert.equal(r.enqueueBulk(seq(6, 100), 6), 0, 'only 5 free: bulk of 6 must fail');
    assert.equal(r.count(), 10, 'a failed bulk changes nothing');
    assert.equal(r.enqueueBurst(seq(6, 100), 6), 5, 'burst takes what fits');
    assert.equal(r.count(), 15);
  });

  it('dequeueBulk is all or nothing; dequeueBurst takes what is there', () => {
    const r = Ring.create(heap, { count: 16 });
    r.enqueueBulk(seq(5), 5);
    const out = new Uint32Array(8);
    assert.equal(r.dequeueBulk(out, 6), 0);
    assert.equal(r.count(), 5);
    assert.equal(r.dequeueBurst(out, 8), 5);
    assert.deepEqual([...out.subarray(0, 5)], [1, 2, 3, 4, 5]);
    assert.equal(r.dequeueBurst(out, 8), 0, 'empty ring: burst returns 0');
    assert.ok(r.empty());
  });

  it('keeps FIFO order across many wrap-arounds with odd burst sizes and offsets', () => {
    const r = Ring.create(heap, { count: 64, sp: true, sc: true });
    const src = new Uint32Array(64);
    const dst = new Uint32Array(64);
    let next = 1;
    let expect = 1;
    for (let round = 0; round < 20000; round++) {
      const n = 1 + (round % 37);
      for (let i = 0; i < n; i++) src[3 + i] = next + i;
      const put = r.enqueueBurst(src, Math.min(n, 61), 3);
      next += put;
      const got = r.dequeueBurst(dst, 1 + ((round * 7) % 50), 2);
      for (let i = 0; i < got; i++) assert.equal(dst[2 + i], expect++);
    }
    while (!r.empty()) {
      const got = r.dequeueBurst(dst, 64);
      for (let i = 0; i < got; i++) assert.equal(dst[i], expect++);
    }
    assert.equal(expect, next);
  });

  it('is the same ring when attached through its descriptor', () => {
    const r = Ring.create(heap, { name: 'shared', count: 32 });
    const other = Heap.attach(heap.descriptor(), 1);
    const r2 = Ring.attach(other, r.descriptor());
    r.enqueueBulk(seq(3, 7), 3);
    const out = new Uint32Array(3);
    assert.equal(r2.dequeueBulk(out, 3), 3);
    assert.deepEqual([...out], [7, 8, 9]);
    assert.equal(r.count(), 0);
  });

  it('refuses to attach where there is no ring', () => {
    assert.throws(() => Ring.attach(heap, { offset: heap.reserve(1024), name: 'ghost' }), /ring ghost: no ring at offset/);
  });

  it('sees the consumer freeing space even though the producer caches its tail', () => {
    const r = Ring.create(heap, { count: 4, sp: true, sc: true });
    const one = new Uint32Array(1);
    for (let i = 0; i < 1000; i++) {
      one[0] = i;
      assert.equal(r.enqueueBulk(one, 1), 1, `enqueue ${i}`);
      assert.equal(r.dequeueBulk(one, 1), 1);
      assert.equal(one[0], i);
    }
  });

  // Indices are int32 that wrap. V8 compiles `a + b - c | 0` on untyped operands as an add that
  // deoptimizes when it overflows; until it is compiled again the loop runs in the interpreter,
  // allocating, and a forwarding lcore collects garbage (40 ms, the soak's ring pair after ~150 s).
  // Every operand is `| 0` now, and the sums compile to wrapping int32 arithmetic.
  for (const mode of ['sp', 'mp']) {
    it(`stays optimized as its indices cross 2^31 (${mode}): no overflow deoptimization`, () => {
      const child = fileURLToPath(new URL('./ring-wrap.child.ts', import.meta.url));
      const r = spawnSync(process.execPath, ['--trace-opt', '--trace-deopt', '--import', 'tsx', child, mode], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(r.status, 0, r.stderr);
      // 2^31 - 3.2 M + 6.4 M, as int32.
      assert.match(r.stdout, /^moved 6400000, prod head -2144283648$/m);
      // It was optimized before the crossing (else the check below could not fail)...
      assert.match(r.stdout, /completed (optimizing|compiling).*<JSFunction enqueue /);
      // ...and nothing in it gave up on the way.
      const overflow = r.stdout.split('\n').filter((l) => l.includes('reason: overflow'));
      assert.deepEqual(overflow, []);
    });
  }
});
