/**
 * The socket file of a listening vhost-user end (net_vhost's server, virtio_user's server=1).
 */
import { lstatSync, unlinkSync } from 'node:fs';
import { unixConnect } from '../native/unix.js';
import { closeFd } from '../native/watch.js';

/**
 * Removes a socket file at `path` that nobody listens on any more (a dead
 * run's), so listen can bind. A live socket stays (listen then fails with
 * EADDRINUSE), and so does anything that is not a socket.
 */
export function removeStaleSocket(path: string): void {
  try {
    if (!lstatSync(path).isSocket()) return;
  } catch {
    return; // nothing there
  }
  try {
    closeFd(unixConnect(path, 'stream'));
  } catch {
    unlinkSync(path);
  }
}

/** Removes our own socket file when we stop listening (gone already is fine). */
export function removeSocketFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
