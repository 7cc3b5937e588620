// rte_ring's multi-producer / multi-consumer bulk operations on a Ring in
// the shared heap (twin: Ring.enqueueBulk / dequeueBulk in ring.ts), for the
// mempool kernels' cache refill and flush. Same protocol as the TypeScript side:
// reserve with a compare-and-swap on the head, copy the slots with plain
// accesses, wait for earlier reservations to publish, publish the tail with
// a sequentially consistent store. Both sides may work on one ring at once.
import { RING_CAPACITY, RING_CONS_HEAD, RING_CONS_TAIL, RING_MASK, RING_PROD_HEAD, RING_PROD_TAIL, RING_SLOTS } from './ring-layout.as';

/** Spins before sleeping a few microseconds on a tail (the waited-for thread may be descheduled). */
const SPINS_BEFORE_YIELD: u32 = 512;

// @ts-ignore: decorator
@inline
function waitTail(tail: u32, expect: u32): void {
  let spins: u32 = 0;
  for (;;) {
    const now = atomic.load<u32>(tail);
    if (now == expect) return;
    if (++spins > SPINS_BEFORE_YIELD) memory.atomic.wait32(tail, <i32>now, 5000);
  }
}

/** Enqueues all `n` handles from `src` or none. Returns n or 0. */
export function ringEnqueueBulk(ring: u32, src: u32, n: u32): u32 {
  const capacity = load<u32>(ring + RING_CAPACITY);
  let head: u32;
  let next: u32;
  for (;;) {
    head = atomic.load<u32>(ring + RING_PROD_HEAD);
    const free = <i32>(capacity + atomic.load<u32>(ring + RING_CONS_TAIL) - head);
    if (free < <i32>n) return 0;
    next = head + n;
    if (atomic.cmpxchg<u32>(ring + RING_PROD_HEAD, head, next) == head) break;
  }
  const mask = load<u32>(ring + RING_MASK);
  const slots = ring + RING_SLOTS;
  for (let i: u32 = 0; i < n; i++) store<u32>(slots + (((head + i) & mask) << 2), load<u32>(src + (i << 2)));
  // Earlier producers publish first, so the tail never uncovers an unwritten slot.
  waitTail(ring + RING_PROD_TAIL, head);
  atomic.store<u32>(ring + RING_PROD_TAIL, next);
  return n;
}

/** Dequeues exactly `n` handles into `dst` or none. Returns n or 0. */
export function ringDequeueBulk(ring: u32, dst: u32, n: u32): u32 {
  let head: u32;
  let next: u32;
  for (;;) {
    head = atomic.load<u32>(ring + RING_CONS_HEAD);
    const avail = <i32>(atomic.load<u32>(ring + RING_PROD_TAIL) - head);
    if (avail < <i32>n) return 0;
    next = head + n;
    if (atomic.cmpxchg<u32>(ring + RING_CONS_HEAD, head, next) == head) break;
  }
  const mask = load<u32>(ring + RING_MASK);
  const slots = ring + RING_SLOTS;
  for (let i: u32 = 0; i < n; i++) store<u32>(dst + (i << 2), load<u32>(slots + (((head + i) & mask) << 2)));
  waitTail(ring + RING_CONS_TAIL, head);
  atomic.store<u32>(ring + RING_CONS_TAIL, next);
  return n;
}
