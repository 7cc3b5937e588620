import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventfdCreate, eventfdRead, eventfdWrite } from '../../src/native/eventfd.js';
import { NativeError } from '../../src/native/native.js';
import { closeFd, READABLE, watch } from '../../src/native/watch.js';
import { noShim, openFds } from './util.js';

describe('eventfd (vhost kick and call, memif interrupts)', { skip: noShim }, () => {
  it('reads the kicks since the last read, then 0 without blocking', () => {
    const fd = eventfdCreate();
    assert.equal(eventfdRead(fd), 0);
    assert.equal(eventfdWrite(fd), true);
    assert.equal(eventfdWrite(fd, 4), true);
    assert.equal(eventfdRead(fd), 5);
    assert.equal(eventfdRead(fd), 0);
    closeFd(fd);
  });

  it('in semaphore mode takes one per read, starting from the initial count', () => {
    const fd = eventfdCreate(2, { semaphore: true });
    assert.deepEqual([eventfdRead(fd), eventfdRead(fd), eventfdRead(fd)], [1, 1, 0]);
    closeFd(fd);
  });

  it('wakes a watch on the event loop when kicked, and not before', async () => {
    const fd = eventfdCreate();
    const seen: number[] = [];
    const woke = new Promise<void>((resolve) =>
      watch(fd, (events) => {
        seen.push(events, eventfdRead(fd));
        resolve();
      }),
    );
    // The watch cannot fire before this line: callbacks run only once this function yields.
    eventfdWrite(fd, 7);
    await woke;
    assert.deepEqual(seen, [READABLE, 7]);
    closeFd(fd);
  });

  it('reports a bad fd as NativeError EBADF and leaks no fd', () => {
    const before = openFds();
    assert.throws(() => eventfdRead(987_654), (e) => e instanceof NativeError && e.code === 'EBADF' && e.syscall === 'read' && /fd 987654/.test(e.message));
    assert.throws(() => eventfdWrite(987_654), (e) => e instanceof NativeError && e.code === 'EBADF' && e.syscall === 'write');
    assert.throws(() => eventfdWrite(0, 0), TypeError, 'adding 0 is a programming error');
    assert.deepEqual(openFds(), before);
  });
});
