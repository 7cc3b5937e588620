// Run by ring.test.ts under --trace-opt --trace-deopt: a ring whose indices
// start just below 2^31, so its optimized enqueue and dequeue cross the
// int32 overflow point (the soak's ring pair got there after ~150 s).
import { Heap } from '../../src/eal/heap.js';
import { Ring } from '../../src/ring/ring.js';
import { RING_W_CONS_HEAD, RING_W_CONS_TAIL, RING_W_PROD_HEAD, RING_W_PROD_TAIL } from '../../src/ring/ring-layout.js';

const heap = Heap.create({ size: 1 << 20 });
const sp = process.argv[2] === 'sp';
const made = Ring.create(heap, { count: 1024, sp, sc: sp });
const bursts = 100_000;
const start = 2 ** 31 - bursts * 32;
const w = made.offset >>> 2;
for (const k of [RING_W_PROD_HEAD, RING_W_PROD_TAIL, RING_W_CONS_HEAD, RING_W_CONS_TAIL]) heap.i32[w + k] = start;
const r = Ring.attach(heap, made.descriptor());
const objs = new Uint32Array(32);
let moved = 0;
for (let i = 0; i < 2 * bursts; i++) {
  for (let k = 0; k < 32; k++) objs[k] = i + k;
  moved += r.enqueueBurst(objs, 32);
  if (r.dequeueBurst(objs, 32) !== 32 || objs[31] !== i + 31) throw new Error(`burst ${i} came back wrong`);
}
process.stdout.write(`moved ${moved}, prod head ${heap.i32[w + RING_W_PROD_HEAD]}\n`);
