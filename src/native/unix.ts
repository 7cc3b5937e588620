/**
 * AF_UNIX sockets that carry fds: SOCK_STREAM for vhost-user and
 * memif control channels, SOCK_SEQPACKET for DPDK telemetry v2. Node's net
 * module cannot pass fds (SCM_RIGHTS) nor open SOCK_SEQPACKET sockets.
 *
 * Every socket is non-blocking and close-on-exec, and so is every received fd.
 * Nothing here waits: wait for readiness with watch() (watch.ts) on the
 * calling thread's event loop, then accept / receive until it says "none".
 * Sockets and received fds are plain numbers the caller owns and closes with
 * closeFd. Errors are NativeError naming the call and the path (`@name` for an
 * abstract name) or the fd.
 *
 * Thread-safety: a socket fd may be used from any thread, but one socket's
 * reads (or writes) should stay on one thread, as for any stream.
 */
import { requireNative } from './native.js';

/** `stream`: SOCK_STREAM (vhost-user, memif); `seqpacket`: SOCK_SEQPACKET, message boundaries kept (telemetry v2). */
export type UnixSocketType = 'stream' | 'seqpacket';

/** Linux's SCM_MAX_FD: the most fds one message can carry (vhost-user's SET_MEM_TABLE needs 8). */
export const MAX_FDS_PER_MESSAGE = 253;

/** One received message (or, on a stream socket, the bytes that were there). */
export interface Received {
  /** Bytes written into `into`; 0 with no fds means the peer closed (stream) or sent an empty message (seqpacket). */
  readonly bytes: number;
  /** fds that came with it, close-on-exec, owned by the caller now: close every one. */
  readonly fds: number[];
  /** seqpacket: the message was longer than `into`; the rest is lost (MSG_TRUNC). */
  readonly truncated: boolean;
  /** The sender's fds did not all arrive (MSG_CTRUNC); those in `fds` did. */
  readonly fdsTruncated: boolean;
}

/**
 * A Linux abstract socket name: no file in the filesystem, gone when the last
 * socket bound to it closes; shown as `@name` in errors and by `ss`.
 * Pass the result wherever a path is taken.
 */
export function abstractName(name: string): string {
  return '\0' + name;
}

/**
 * socket + bind + listen. A path that exists is refused (EADDRINUSE): remove
 * a stale socket file first if that is the policy (DPDK's is to).
 * Paths take at most 107 bytes, abstract names 107 (ENAMETOOLONG).
 * @returns the listening fd: watch it READABLE, then unixAccept until -1.
 */
export function unixListen(path: string, type: UnixSocketType, backlog = 16): number {
  return requireNative(`unix socket ${shown(path)}`).unixListen(path, type, backlog);
}

/** accept4: the new connection's fd, or -1 when none is pending. */
export function unixAccept(listenFd: number): number {
  return requireNative('unix socket accept').unixAccept(listenFd);
}

/**
 * socket + connect: the connected fd. A unix connect completes or fails at
 * once: ENOENT or ECONNREFUSED when nothing listens, EAGAIN when the
 * listener's backlog is full (retry later).
 */
export function unixConnect(path: string, type: UnixSocketType): number {
  return requireNative(`unix socket ${shown(path)}`).unixConnect(path, type);
}

/**
 * sendmsg with `fds` attached as SCM_RIGHTS (at most MAX_FDS_PER_MESSAGE).
 * The peer gets its own copies; the caller still owns and closes `fds`.
 * @returns bytes sent, or -1 when the socket buffer is full (nothing sent:
 * watch WRITABLE and retry). On a stream socket it may send fewer than
 * `bytes.length`: the fds went with the first byte, send the rest without them.
 * A seqpacket message is sent whole or not at all.
 */
export function sendMsg(fd: number, bytes: Uint8Array, fds: readonly number[] = []): number {
  return requireNative('unix socket sendmsg').sendMsg(fd, bytes, fds);
}

/**
 * recvmsg into `into` (it may be a view of the heap), collecting fds.
 * On seqpacket one call returns one message; on a stream, whatever bytes are
 * there (fds arrive with the bytes they were sent with).
 * @returns the message, or null when nothing is pending.
 */
export function recvMsg(fd: number, into: Uint8Array): Received | null {
  return requireNative('unix socket recvmsg').recvMsg(fd, into);
}

function shown(path: string): string {
  return path.startsWith('\0') ? '@' + path.slice(1) : path;
}
