/**
 * fd readiness on the calling thread's event loop. Node watches
 * only the fds it opened itself; a control socket or eventfd from the shim
 * gets a libuv poll handle (uv_poll_t) here, so it is serviced when ready,
 * with no polling timer. Works on the main thread and in workers: each thread
 * has its own loop, and its own watches.
 *
 * An active watch keeps the thread's loop alive, as a listening server does;
 * unwatch (or closeFd) lets it go. A worker that exits closes its watches.
 * The callback runs as any I/O callback does: a throw is an uncaught exception.
 */
import { requireNative } from './native.js';

/** The fd has bytes (or a connection, or EOF) to read. */
export const READABLE = 1;
/** The fd has room to write. */
export const WRITABLE = 2;
/** The peer hung up (EPOLLRDHUP); READABLE comes with it, reading returns 0. */
export const HANGUP = 4;
/**
 * libuv saw POLLERR on the fd (a socket error pending, or the fd closed under
 * the watch) and stopped the watch: read the fd to learn the error, then
 * unwatch it or watch it again.
 */
export const ERROR = 16;

/**
 * Calls `onReady(events)` on this thread whenever `fd` is ready for any of
 * `events` (level-triggered: read until empty, or it fires again). Watching an
 * fd again replaces its callback and events. One watch per fd per thread.
 * @throws NativeError: uv_poll_init EBADF for a closed fd, EPERM for a
 * regular file, EEXIST for an fd Node itself already watches (a net socket).
 */
export function watch(fd: number, onReady: (events: number) => void, events = READABLE): void {
  requireNative('fd watch').watch(fd, events, onReady);
}

/** Stops this thread's watch of `fd`. @returns whether there was one (so a second call is harmless). */
export function unwatch(fd: number): boolean {
  return requireNative('fd watch').unwatch(fd);
}

/**
 * Unwatches `fd` on this thread and closes it. -1 is ignored, so an owner that
 * sets its field to -1 after closing may close again harmlessly. Closing a
 * number twice otherwise is a bug that may close someone else's new fd; the
 * shim reports EBADF only when the number is free. Unwatch an fd on every
 * other thread that watches it before closing it.
 * @throws NativeError (EBADF).
 */
export function closeFd(fd: number): void {
  requireNative('close').close(fd);
}
