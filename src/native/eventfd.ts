/**
 * eventfd: vhost-user's kick and call, memif's interrupts. Node
 * has no eventfd, and reading one through fs would block a libuv pool thread.
 * The fd is non-blocking and close-on-exec; wait for it with watch() (watch.ts).
 * It is a plain number: the caller closes it (closeFd), or passes it to a peer
 * with sendMsg and then closes its own copy.
 *
 * Thread-safety: any thread may write or read; the kernel keeps the counter atomic.
 */
import { requireNative } from './native.js';

/**
 * eventfd(2) with counter `initial`. In `semaphore` mode each read takes 1
 * from the counter instead of all of it.
 */
export function eventfdCreate(initial = 0, opts: { semaphore?: boolean } = {}): number {
  return requireNative('eventfd').eventfdCreate(initial, opts.semaphore ?? false);
}

/**
 * Reads and resets the counter (takes 1 in semaphore mode): the number of
 * kicks since the last read, or 0 when there were none. Never blocks.
 * @throws NativeError (EBADF, or EINVAL for an fd that is not an eventfd).
 */
export function eventfdRead(fd: number): number {
  return requireNative('eventfd').eventfdRead(fd);
}

/**
 * Adds `add` (default 1: one kick) to the counter, waking its watchers.
 * @returns true, or false when the counter would pass 2^64 - 2 (the reader is gone).
 */
export function eventfdWrite(fd: number, add = 1): boolean {
  return requireNative('eventfd').eventfdWrite(fd, add);
}
