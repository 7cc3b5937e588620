// A raw memif client for the hostile-peer tests: it sends whatever it is
// told, whatever the protocol says, and reads the server's answers.
import assert from 'node:assert/strict';
import { ADD_RING_FLAG_C2S, MEMIF_VERSION, MODE_ETHERNET, MSG_SIZE, MsgType, decode, encodeAddRing, encodeInit, type Msg } from '../../src/drivers/memif/protocol.js';
import { eventfdCreate } from '../../src/native/eventfd.js';
import { recvMsg, sendMsg, unixConnect } from '../../src/native/unix.js';
import type { NativeError } from '../../src/native/native.js';
import { closeFd } from '../../src/native/watch.js';

/** Longest a raw client waits for the server's answer (a hang, not a timing assertion). */
const WAIT_MS = 60_000;

export class Raw {
  readonly fd: number;
  private readonly buf = new Uint8Array(MSG_SIZE);
  /** Connects to the abstract socket `path`, as DPDK's default socket-abstract=yes does. */
  constructor(path: string) {
    this.fd = unixConnect('\0' + path, 'seqpacket');
  }
  send(b: Uint8Array, fds: number[] = []): void {
    assert.equal(sendMsg(this.fd, b, fds), b.length);
  }
  /** Sends `b` with `fds`; false when the server has closed the socket already. */
  trySend(b: Uint8Array, fds: number[] = []): boolean {
    try {
      return sendMsg(this.fd, b, fds) === b.length;
    } catch {
      return false;
    }
  }
  /** Sends `b` with a fresh eventfd (the server gets its own copy; ours is closed). */
  sendWithEventfd(b: Uint8Array): void {
    const fd = eventfdCreate();
    this.send(b, [fd]);
    closeFd(fd);
  }
  /**
   * True once a recv met ECONNRESET: the server closed while messages we sent
   * were still unread in its socket, and Linux then drops what it had sent us
   * (its DISCONNECT included).
   */
  reset = false;
  /** The next message, or null once the server closed the socket. Yields to the event loop (the server runs on it) between tries. */
  async recv(): Promise<Msg | null> {
    const end = Date.now() + WAIT_MS;
    let r = this.tryRecv();
    while (r === null) {
      if (Date.now() > end) throw new Error(`no message from the server in ${WAIT_MS} ms`);
      await new Promise((res) => setImmediate(res));
      r = this.tryRecv();
    }
    if (r === 'reset') return null;
    for (const fd of r.fds) closeFd(fd);
    return r.bytes === 0 ? null : decode('raw', this.buf, r.bytes);
  }
  private tryRecv(): ReturnType<typeof recvMsg> | 'reset' {
    try {
      return recvMsg(this.fd, this.buf);
    } catch (e) {
      if ((e as NativeError).code !== 'ECONNRESET') throw e;
      this.reset = true;
      return 'reset';
    }
  }
  /** Reads up to the DISCONNECT and the close: its reason. */
  async disconnectReason(): Promise<string> {
    for (;;) {
      const m = await this.recv();
      if (m === null) return '(closed without DISCONNECT)';
      if (m.type === MsgType.DISCONNECT) {
        assert.equal(await this.recv(), null, 'the server closes after DISCONNECT');
        return m.disconnect.reason;
      }
    }
  }
  close(): void {
    closeFd(this.fd);
  }
}

export const init = (id = 0, secret = '') => encodeInit({ version: MEMIF_VERSION, id, mode: MODE_ETHERNET, secret, name: 'raw' });
export const ring = (index: number, offset: number, region = 0, log2 = 4, c2s = true) =>
  encodeAddRing({ flags: c2s ? ADD_RING_FLAG_C2S : 0, index, region, offset, log2RingSize: log2, privateHdrSize: 0 });
