/**
 * The telemetry v2 socket (telemetry.c's socket_listener and client_handler):
 * a SOCK_SEQPACKET unix socket at DPDK's path, serviced on the main thread's
 * event loop through fd watches. No data-path thread is involved: handlers
 * read the shared counters from here.
 *
 * Each client gets the handshake on connect, then one reply per message. A
 * client over MAX_CONNECTIONS is closed at once, as DPDK's; an empty message,
 * a hang-up, a socket error, fds it tries to pass (closed unread) or a socket
 * buffer it lets fill up end its connection. Nothing a client sends reaches
 * further than TelemetryRegistry.reply.
 */
import { lstatSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NativeError } from '../native/native.js';
import { recvMsg, sendMsg, unixAccept, unixConnect, unixListen } from '../native/unix.js';
import { closeFd, ERROR, HANGUP, READABLE, watch } from '../native/watch.js';
import { MAX_CONNECTIONS, MAX_INPUT_LEN, type TelemetryRegistry } from './telemetry.js';

/** The socket's file name in the runtime directory (DPDK's "dpdk_telemetry.v2"). */
export const TELEMETRY_SOCKET = 'dpdk_telemetry.v2';

/**
 * EAL's runtime directory (eal_create_runtime_dir): `/var/run/dpdk/<prefix>`
 * for root, else `$XDG_RUNTIME_DIR/dpdk/<prefix>`, or `/tmp/dpdk/<prefix>`
 * without XDG_RUNTIME_DIR.
 */
export function runtimeDir(filePrefix: string): string {
  const base = process.getuid?.() === 0 ? '/var/run' : (process.env['XDG_RUNTIME_DIR'] ?? '/tmp');
  return join(base, 'dpdk', filePrefix);
}

/** Thrown when another live process answers on the socket path (DPDK: "socket in use"). */
export class TelemetryInUseError extends Error {}

export class TelemetryServer {
  /** The listening socket's path. */
  readonly path: string;
  private listenFd: number;
  /** The inode bound, so close() removes our file and never a successor's. */
  private readonly ino: number;
  private readonly clients = new Set<number>();
  private readonly buf = new Uint8Array(MAX_INPUT_LEN + 1);

  /**
   * Creates the runtime directory and listens (telemetry_v2_init). A stale
   * socket file (nothing accepts on it) is replaced, as DPDK does.
   * @throws TelemetryInUseError when a live process listens on the path;
   * NativeError (e.g. EACCES) when the socket cannot be made.
   */
  constructor(
    readonly registry: TelemetryRegistry,
    filePrefix: string,
  ) {
    const dir = runtimeDir(filePrefix);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.path = join(dir, TELEMETRY_SOCKET);
    if (lstatSync(this.path, { throwIfNoEntry: false })) {
      if (isLive(this.path)) throw new TelemetryInUseError(`telemetry: ${this.path} is in use by another process`);
      rmSync(this.path, { force: true });
    }
    this.listenFd = unixListen(this.path, 'seqpacket');
    this.ino = statSync(this.path).ino;
    watch(this.listenFd, () => this.acceptAll());
  }

  /** Connected clients now. */
  get connections(): number {
    return this.clients.size;
  }

  private acceptAll(): void {
    for (let fd = unixAccept(this.listenFd); fd >= 0; fd = unixAccept(this.listenFd)) {
      if (this.clients.size >= MAX_CONNECTIONS) {
        closeFd(fd);
        continue;
      }
      this.clients.add(fd);
      if (!this.send(fd, this.registry.handshake())) continue;
      watch(fd, (events) => this.serve(fd, events), READABLE | HANGUP);
    }
  }

  /** Answers every pending message of one client; ends the connection on hang-up, error or an empty message. */
  private serve(fd: number, events: number): void {
    if (events & ERROR) return this.drop(fd);
    for (;;) {
      let m;
      try {
        m = recvMsg(fd, this.buf);
      } catch {
        return this.drop(fd);
      }
      if (m === null) break;
      for (const passed of m.fds) closeFd(passed);
      // DPDK's loop ends on read() <= 0: an empty message closes the connection.
      if (m.bytes === 0) return this.drop(fd);
      if (!this.send(fd, this.registry.reply(this.buf.subarray(0, m.bytes)))) return;
    }
    if (events & HANGUP) this.drop(fd);
  }

  /** @returns false when the client is gone (peer closed, or its buffer is full: it does not read). */
  private send(fd: number, text: string): boolean {
    try {
      if (sendMsg(fd, Buffer.from(text)) >= 0) return true;
    } catch (e) {
      if (!(e instanceof NativeError)) throw e;
    }
    this.drop(fd);
    return false;
  }

  private drop(fd: number): void {
    if (!this.clients.delete(fd)) return;
    closeFd(fd);
  }

  /** Closes every connection and the listener and removes the socket file (if it is still ours). Idempotent. */
  close(): void {
    for (const fd of [...this.clients]) this.drop(fd);
    if (this.listenFd < 0) return;
    closeFd(this.listenFd);
    this.listenFd = -1;
    if (statSync(this.path, { throwIfNoEntry: false })?.ino === this.ino) rmSync(this.path, { force: true });
  }
}

/** Whether a process accepts on the socket at `path` (DPDK connects to tell a live socket from a stale file). */
function isLive(path: string): boolean {
  try {
    closeFd(unixConnect(path, 'seqpacket'));
    return true;
  } catch (e) {
    // EAGAIN: a full backlog is still a live listener.
    return e instanceof NativeError && e.code === 'EAGAIN';
  }
}
