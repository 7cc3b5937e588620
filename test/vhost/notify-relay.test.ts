/**
 * NotifyRelay: every notification of the heap counter reaches the eventfd,
 * including one that comes while the relay is writing for the one before
 * (the lost wake-up that held a Linux guest's ping for a second).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { NotifyRelay } from '../../src/vhost/notify-relay.js';

/** The data path's notification: what vhost-queue.ts does for a call. */
function notify(heap: Heap, counter: number): void {
  Atomics.add(heap.i32, counter >>> 2, 1);
  Atomics.notify(heap.i32, counter >>> 2);
}

/** Lets the relay's microtasks and promise callbacks run until `done` or a bound of turns. */
async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setImmediate(r));
}

describe('NotifyRelay', () => {
  it('writes once for a notification, and again for one that comes while it writes', async () => {
    const heap = Heap.create({ size: 1 << 20 });
    const counter = heap.reserve(4, 4, 'call counter');
    let writes = 0;
    // The lcore notifies again right while the relay writes the eventfd for its first notification.
    const relay = new NotifyRelay(heap, counter, -1, () => {
      writes++;
      if (writes === 1) notify(heap, counter);
    });
    notify(heap, counter);
    await settle(() => writes >= 2);
    assert.equal(writes, 2, 'the notification made during the first write got its own write');
    await settle(() => false);
    assert.equal(writes, 2, 'and no write without a notification');
    notify(heap, counter);
    await settle(() => writes >= 3);
    assert.equal(writes, 3);
    relay.stop();
    notify(heap, counter);
    await settle(() => false);
    assert.equal(writes, 3, 'nothing after stop');
  });
});
