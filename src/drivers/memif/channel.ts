/**
 * memif's control channel: one connected SOCK_SEQPACKET socket, watched on
 * the main thread's event loop, carrying 128-byte messages (protocol.ts) and
 * their fds. As DPDK's memif_socket.c does, a channel answers each received
 * message and then sends one message from its queue, so a client's
 * conversation moves in lock step with the server's ACKs.
 *
 * Also the socket registry: every interface on one socket (path or abstract
 * name) in this process shares one listener (servers) and one id space
 * (two interfaces with the same id need different roles).
 */
import { rmSync } from 'node:fs';
import { ArgError } from '../../errors.js';
import { NativeError } from '../../native/native.js';
import { recvMsg, sendMsg, unixAccept, unixConnect, unixListen } from '../../native/unix.js';
import { READABLE, closeFd, watch } from '../../native/watch.js';
import { MAX_LOG2_RING_SIZE, MAX_QUEUE_PAIRS, MEMIF_VERSION, MSG_SIZE, MemifError, MsgType, decode, encodeDisconnect, encodeHello, typeName, type Msg } from './protocol.js';
import { MEMIF_MAX_REGIONS } from './memif-layout.js';

/** Where net_memif's one-line reports go (stderr; tests collect them). */
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n');

/** Reports one line: a connection, a disconnect and its reason, a refused message. */
export function memifLog(line: string): void {
  sink(line);
}

/** Sends net_memif's report lines to `f` instead (tests). @returns the previous sink. */
export function setMemifLog(f: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = f;
  return prev;
}

/**
 * What handles a channel's messages. `fds` came with the message: the
 * handler takes the ones it keeps out of the array (shift/pop), and the
 * channel closes what is left. Throw MemifError to disconnect with its reason.
 */
export type MsgHandler = (msg: Msg, fds: number[]) => void;

export class Channel {
  private readonly queue: { b: Uint8Array; fd: number }[] = [];
  /** One byte more than a message, so a longer datagram shows as truncated, not as a valid one. */
  private readonly buf = new Uint8Array(MSG_SIZE + 1);
  private open = true;

  constructor(
    readonly fd: number,
    /** Who speaks on it, for log lines: `net_memif0`, or `memif socket @/run/memif.sock` before INIT. */
    public name: string,
    public handler: MsgHandler,
    /** Called once when the channel closes, whoever closed it; `reason` when it went down on an error or a DISCONNECT. */
    public onClose: (reason: string) => void,
  ) {
    watch(fd, () => this.readable(), READABLE);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Queues a message (with one fd to pass, or -1); it goes out after the next received message, or now with `sendNext`. */
  enqueue(b: Uint8Array, fd = -1): void {
    this.queue.push({ b, fd });
  }

  /** Sends the first queued message, if any. @throws MemifError when the socket refuses it. */
  sendNext(): void {
    const m = this.queue.shift();
    if (!m || !this.open) return;
    let sent: number;
    try {
      sent = sendMsg(this.fd, m.b, m.fd >= 0 ? [m.fd] : []);
    } catch (e) {
      throw new MemifError(this.name, 'Send failed', (e as Error).message);
    }
    if (sent !== m.b.length) throw new MemifError(this.name, 'Send failed', 'socket buffer full');
  }

  /**
   * Sends DISCONNECT with `reason` (best effort: the peer may be gone), logs
   * it, and closes. Nothing queued goes out.
   */
  disconnect(reason: string): void {
    if (!this.open) return;
    memifLog(`${this.name}: disconnecting: ${reason}`);
    this.queue.length = 0;
    try {
      sendMsg(this.fd, encodeDisconnect({ code: 0, reason }));
    } catch {
      // The peer is gone already; closing is all that is left.
    }
    this.close(reason);
  }

  /** Unwatches and closes the socket, then tells the owner. */
  close(reason = ''): void {
    if (!this.open) return;
    this.open = false;
    this.queue.length = 0;
    closeFd(this.fd);
    this.onClose(reason);
  }

  private readable(): void {
    while (this.open) {
      let r;
      try {
        r = recvMsg(this.fd, this.buf);
      } catch (e) {
        memifLog(`${this.name}: control socket: ${(e as Error).message}`);
        this.close((e as NativeError).code ?? 'receive failed');
        return;
      }
      if (r === null) return;
      const fds = r.fds;
      try {
        if (r.bytes === 0 && fds.length === 0 && !r.truncated) {
          memifLog(`${this.name}: peer closed the control socket`);
          this.close('Peer closed the socket');
          return;
        }
        const msg = decode(this.name, this.buf, r.truncated ? MSG_SIZE + 1 : r.bytes);
        if (msg.type === MsgType.DISCONNECT) {
          memifLog(`${this.name}: peer disconnected: ${msg.disconnect.reason || '(no reason)'}`);
          this.close(`Peer: ${msg.disconnect.reason}`);
          return;
        }
        if (msg.type === 'unknown') throw new MemifError(this.name, 'Unknown message type', typeName(msg.raw));
        this.handler(msg, fds);
        this.sendNext();
      } catch (e) {
        if (!(e instanceof MemifError) && !(e instanceof NativeError) && !(e instanceof ArgError)) throw e;
        const reason = e instanceof MemifError ? e.reason : 'Device error';
        if (e instanceof MemifError) memifLog(e.message);
        else memifLog(`${this.name}: ${e.message}`);
        this.disconnect(reason);
      } finally {
        for (const fd of fds) closeFd(fd);
      }
    }
  }
}

/** What a socket needs of an interface on it. */
export interface SocketMember {
  readonly id: number;
  readonly role: 'server' | 'client';
  readonly name: string;
  /** Server: takes the channel a client opened with INIT for this id, or throws MemifError (the reason goes back). */
  accept?(ch: Channel, msg: Extract<Msg, { type: typeof MsgType.INIT }>): void;
}

/** A unix socket address as the shim takes it, and as log lines show it. */
export function socketAddress(path: string, abstract: boolean): { addr: string; shown: string } {
  return abstract ? { addr: '\0' + path, shown: `@${path}` } : { addr: path, shown: path };
}

/** One socket's interfaces in this process, and its listener once a server is on it. */
export class MemifSocket {
  private static readonly all = new Map<string, MemifSocket>();
  private readonly members: SocketMember[] = [];
  private listenFd = -1;
  /** Channels accepted and not yet claimed by an interface (before INIT). */
  private readonly pending = new Set<Channel>();

  private constructor(
    readonly path: string,
    readonly abstract: boolean,
  ) {}

  get shown(): string {
    return socketAddress(this.path, this.abstract).shown;
  }

  /**
   * Adds `m` to the socket at `path`, creating the socket (and, for a
   * server, its listener) on first use.
   * @throws ArgError when the socket already has an interface with this id
   * and role, or cannot listen (another process has it).
   */
  static join(path: string, abstract: boolean, m: SocketMember): MemifSocket {
    const key = (abstract ? '@' : '') + path;
    let s = MemifSocket.all.get(key);
    if (!s) {
      s = new MemifSocket(path, abstract);
      MemifSocket.all.set(key, s);
    }
    if (s.members.some((o) => o.id === m.id && o.role === m.role)) {
      if (s.members.length === 0) MemifSocket.all.delete(key);
      throw new ArgError(`${m.name}: socket ${s.shown} already has a ${m.role} with id=${m.id} (two interfaces with the same id need different roles)`);
    }
    if (m.role === 'server' && s.listenFd < 0) s.listen(m.name);
    s.members.push(m);
    return s;
  }

  /** Removes `m`; the last one out closes the listener and removes its file. */
  leave(m: SocketMember): void {
    const i = this.members.indexOf(m);
    if (i >= 0) this.members.splice(i, 1);
    if (this.members.length > 0) return;
    MemifSocket.all.delete((this.abstract ? '@' : '') + this.path);
    for (const ch of [...this.pending]) ch.close();
    if (this.listenFd >= 0) {
      closeFd(this.listenFd);
      this.listenFd = -1;
      if (!this.abstract) rmSync(this.path, { force: true });
    }
  }

  /** Client side: a new connected socket to this address. @throws NativeError (ENOENT, ECONNREFUSED...). */
  connect(): number {
    return unixConnect(socketAddress(this.path, this.abstract).addr, 'seqpacket');
  }

  private listen(who: string): void {
    const { addr } = socketAddress(this.path, this.abstract);
    try {
      this.listenFd = unixListen(addr, 'seqpacket', 16);
    } catch (e) {
      if (!(e instanceof NativeError) || e.code !== 'EADDRINUSE' || this.abstract || !stale(addr)) {
        throw new ArgError(`${who}: cannot listen on ${this.shown}: ${(e as Error).message}`);
      }
      rmSync(this.path, { force: true }); // a socket file nobody listens on: left by a process that died
      this.listenFd = unixListen(addr, 'seqpacket', 16);
    }
    watch(this.listenFd, () => this.acceptAll(), READABLE);
  }

  private acceptAll(): void {
    for (;;) {
      let fd: number;
      try {
        fd = unixAccept(this.listenFd);
      } catch (e) {
        memifLog(`memif socket ${this.shown}: accept: ${(e as Error).message}`);
        return;
      }
      if (fd < 0) return;
      const ch: Channel = new Channel(fd, `memif socket ${this.shown}`, (msg, fds) => this.init(ch, msg, fds), () => this.pending.delete(ch));
      this.pending.add(ch);
      try {
        ch.enqueue(hello());
        ch.sendNext();
      } catch (e) {
        memifLog(`${ch.name}: ${(e as Error).message}`);
        ch.close();
      }
    }
  }

  /** The one message a fresh channel may carry: INIT, naming the interface by id. */
  private init(ch: Channel, msg: Msg, _fds: number[]): void {
    if (msg.type !== MsgType.INIT) throw new MemifError(ch.name, 'Unexpected message', `${typeName(msg.type === 'unknown' ? msg.raw : msg.type)} before INIT`);
    const m = this.members.find((o) => o.role === 'server' && o.id === msg.init.id);
    if (!m?.accept) throw new MemifError(ch.name, 'ID not found', `id=${msg.init.id}`);
    this.pending.delete(ch);
    m.accept(ch, msg);
  }
}

/** A socket file that exists but has no listener. */
function stale(path: string): boolean {
  try {
    closeFd(unixConnect(path, 'seqpacket'));
    return false;
  } catch (e) {
    return e instanceof NativeError && e.code === 'ECONNREFUSED';
  }
}

/** dpkit's limits, as DPDK's memif_msg_enq_hello states them. */
function hello(): Uint8Array {
  return encodeHello({
    name: 'dpkit',
    minVersion: MEMIF_VERSION,
    maxVersion: MEMIF_VERSION,
    maxRegion: MEMIF_MAX_REGIONS - 1,
    maxS2cRing: MAX_QUEUE_PAIRS,
    maxC2sRing: MAX_QUEUE_PAIRS,
    maxLog2RingSize: MAX_LOG2_RING_SIZE,
  });
}
