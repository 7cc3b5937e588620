/**
 * The frontend's end of vhost-user on a unix socket (DPDK's virtio_user
 * vhost_user.c): the same `Channel` as the in-process transport, speaking the
 * wire format to a backend in another process (DPDK's net_vhost, OVS-DPDK, a
 * dpkit net_vhost elsewhere).
 *
 * What the in-process channel passes as heap offsets travels as fds: the
 * memory region is the heap's memfd (shared-heap.ts) at mmap_offset = the
 * region's heap offset; a kick notifier (a heap counter) becomes an eventfd
 * the relay writes whenever the data path bumps the counter; NO_NOTIFIER
 * travels as "no fd" (the side polls).
 *
 * Requests are synchronous, as the Channel is (and as DPDK's virtio_user is):
 * a request that has a reply, or a REPLY_ACK once negotiated, waits for it on
 * the calling thread, up to REPLY_TIMEOUT_MS. Between requests the socket is
 * watched on the event loop, so a backend that goes away is noticed (onClose).
 */
import { VhostError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { eventfdCreate } from '../native/eventfd.js';
import { NativeError } from '../native/native.js';
import { sendMsg } from '../native/unix.js';
import { HANGUP, READABLE, closeFd, unwatch, watch } from '../native/watch.js';
import { MsgReader } from './msg-reader.js';
import { NotifyRelay } from './notify-relay.js';
import { NO_NOTIFIER, Req, reqName, type Channel, type VhostUserMsg, type VhostUserReply } from './protocol.js';
import { sharedHeapFd } from './shared-heap.js';
import { FLAG_NEED_REPLY, FLAG_REPLY, FLAG_VERSION, PROTOCOL_F_REPLY_ACK, encodeMsg, replyKind, type WireMsg } from './wire.js';

/** How long a request waits for its reply: DPDK answers in microseconds; a backend that takes this long is gone. */
const REPLY_TIMEOUT_MS = 10_000;

/** A short sleep of the calling thread while a reply is on its way (a control-plane wait, never on an lcore). */
const sleeper = new Int32Array(new SharedArrayBuffer(4));

export class SocketChannel implements Channel {
  private readonly reader = new MsgReader();
  private open = true;
  private replyAck = false;
  /** Kick eventfds by heap counter, each with its relay. */
  private readonly kicks = new Map<number, { fd: number; relay: NotifyRelay }>();

  /**
   * Takes over the connected socket `fd`. `onClose(why)` runs once, on the
   * event loop, when the backend closes or breaks the protocol between requests.
   */
  constructor(
    private readonly heap: Heap,
    private readonly fd: number,
    private readonly name: string,
    private readonly path: string,
    private readonly onClose: (why: string) => void,
  ) {
    watch(fd, (ev) => this.onEvent(ev), READABLE | HANGUP);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Nothing is expected between requests: readable means the backend closed, or talks out of turn. */
  private onEvent(_events: number): void {
    if (!this.open) return;
    const r = this.reader.next(this.fd);
    if (r === 'again') return;
    if (typeof r === 'object') for (const f of r.fds) closeFd(f);
    this.shut(r === 'eof' ? 'the backend closed the connection' : typeof r === 'string' ? r : `unexpected ${reqName(r.req)} from the backend`);
  }

  request(msg: VhostUserMsg): VhostUserReply {
    if (!this.open) throw this.error(`${reqName(msg.req)}: not connected`);
    const fds: number[] = [];
    const wire = this.toWire(msg, fds);
    const kind = replyKind(msg.req);
    const ack = kind === 'none' && this.replyAck;
    const bytes = encodeMsg(wire, ack ? FLAG_NEED_REPLY : 0);
    let sent: number;
    try {
      sent = sendMsg(this.fd, bytes, fds);
    } catch (e) {
      if (!(e instanceof NativeError)) throw e;
      throw this.fail(`${reqName(msg.req)}: ${e.message}`);
    }
    if (sent !== bytes.length) throw this.fail(`${reqName(msg.req)}: the backend does not read (socket full)`);
    if (msg.req === Req.SET_PROTOCOL_FEATURES) this.replyAck = (msg.features & (1n << BigInt(PROTOCOL_F_REPLY_ACK))) !== 0n;
    if (kind === 'none' && !ack) return undefined;
    const v = this.awaitReply(msg.req);
    if (kind === 'u64') return msg.req === Req.GET_QUEUE_NUM ? Number(v.getBigUint64(0, true)) : v.getBigUint64(0, true);
    if (kind === 'state') return v.getUint32(4, true);
    const status = v.getBigUint64(0, true);
    if (status !== 0n) throw this.error(`${reqName(msg.req)}: the backend refused it (status ${status})`);
    return undefined;
  }

  /** The message as it travels, its fds appended to `fds`. */
  private toWire(msg: VhostUserMsg, fds: number[]): WireMsg {
    switch (msg.req) {
      case Req.SET_MEM_TABLE: {
        const fd = sharedHeapFd(this.heap, this.name);
        for (let i = 0; i < msg.regions.length; i++) fds.push(fd);
        return { req: msg.req, regions: msg.regions.map((r) => ({ gpa: r.gpa, size: r.size, userAddr: r.userAddr, mmapOffset: r.heapOffset })) };
      }
      case Req.SET_VRING_ADDR:
        return { req: msg.req, index: msg.index, flags: 0, desc: msg.desc, used: msg.used, avail: msg.avail, log: 0 };
      case Req.SET_VRING_KICK:
        if (msg.notifier === NO_NOTIFIER) return { req: msg.req, index: msg.index, nofd: true };
        fds.push(this.kickFd(msg.notifier));
        return { req: msg.req, index: msg.index, nofd: false };
      case Req.SET_VRING_CALL:
        // dpkit's rings poll: a call would have no one to wake.
        if (msg.notifier !== NO_NOTIFIER) throw this.error('SET_VRING_CALL: only polling (no call fd) is supported by this frontend');
        return { req: msg.req, index: msg.index, nofd: true };
      default:
        return msg;
    }
  }

  /** The eventfd relayed from heap counter `counter` (one per counter, shared by the vrings that kick through it). */
  private kickFd(counter: number): number {
    let k = this.kicks.get(counter);
    if (!k) {
      const fd = eventfdCreate();
      k = { fd, relay: new NotifyRelay(this.heap, counter, fd) };
      this.kicks.set(counter, k);
    }
    return k.fd;
  }

  /** Waits for the reply to `req`: its 8-byte payload. */
  private awaitReply(req: number): DataView {
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    for (;;) {
      const r = this.reader.next(this.fd);
      if (typeof r === 'object') {
        for (const f of r.fds) closeFd(f);
        if (r.req !== req || r.flags !== (FLAG_VERSION | FLAG_REPLY) || r.payload.byteLength !== 8) {
          throw this.fail(`${reqName(req)}: bad reply (${reqName(r.req)}, flags 0x${r.flags.toString(16)}, ${r.payload.byteLength} bytes)`);
        }
        return r.payload;
      }
      if (r === 'eof') throw this.fail(`${reqName(req)}: the backend closed the connection`);
      if (r !== 'again') throw this.fail(`${reqName(req)}: ${r}`);
      if (Date.now() > deadline) throw this.fail(`${reqName(req)}: no reply in ${REPLY_TIMEOUT_MS / 1000} s`);
      Atomics.wait(sleeper, 0, 0, 1);
    }
  }

  private error(problem: string): VhostError {
    return new VhostError(this.name, `vhost-user ${this.path}: ${problem}`);
  }

  /** A broken connection: closed now (onClose runs), and the error to throw. */
  private fail(problem: string): VhostError {
    const e = this.error(problem);
    this.shut(problem);
    return e;
  }

  private shut(why: string): void {
    if (!this.open) return;
    this.release();
    this.onClose(why);
  }

  private release(): void {
    this.open = false;
    unwatch(this.fd);
    closeFd(this.fd);
    this.reader.dropFds();
    for (const k of this.kicks.values()) {
      k.relay.stop();
      closeFd(k.fd);
    }
    this.kicks.clear();
  }

  /** Closes the connection (the backend sees the device go away); onClose is not called. */
  close(): void {
    if (this.open) this.release();
  }
}
