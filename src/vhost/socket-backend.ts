/**
 * The backend's end of vhost-user on a unix socket (DPDK's lib/vhost
 * socket.c + vhost_user.c): listens at iface (or, as a client, connects and
 * reconnects), reads one frontend's messages on the event loop of the control
 * thread, maps the regions of SET_MEM_TABLE into windows of the heap and
 * hands the device (vhost-dev.ts) the same typed messages the in-process
 * channel does, with heap offsets where the wire carried fds.
 *
 * A frontend that breaks the protocol (a malformed or unknown message, wrong
 * fd counts, a table that does not fit, an address outside every region) gets
 * one log line naming the problem and its connection closed; the device goes
 * down with it (link down), its windows are unmapped and every fd it sent is
 * closed. The process, the port and the listening socket stay.
 *
 * Thread-safety: control thread only. Lcores see the device through its vring
 * state blocks: a closing connection unpublishes the rings before it unmaps
 * the windows they point into (an lcore mid-burst then reads zero pages, never
 * unmapped memory).
 */
import { fstatSync } from 'node:fs';
import { NoMemError, VhostError } from '../errors.js';
import { alignUp, type Heap } from '../eal/heap.js';
import { mapWindow, pageSize, unmapWindow } from '../native/memory.js';
import { NativeError, requireNative } from '../native/native.js';
import { sendMsg, unixAccept, unixConnect, unixListen } from '../native/unix.js';
import { READABLE, closeFd, watch } from '../native/watch.js';
import { vhostLog } from './log.js';
import { removeSocketFile, removeStaleSocket } from './socket-path.js';
import { MsgReader, type Frame } from './msg-reader.js';
import { NotifyRelay } from './notify-relay.js';
import { NO_NOTIFIER, Req, reqName, type MemRegion, type VhostUserMsg } from './protocol.js';
import type { VhostDev } from './vhost-dev.js';
import { Feature, has } from '../virtio/virtio-net.js';
import { FLAG_NEED_REPLY, FLAG_REPLY, FLAG_VERSION, FLAG_VERSION_MASK, PROTOCOL_F_REPLY_ACK, decodeMsg, encodeReply, fdsExpected, replyKind, type WireRegion } from './wire.js';

/** Where windows start: huge-page aligned, so a hugetlbfs region (QEMU's guest RAM) maps too. */
const WINDOW_ALIGN = 2 << 20;
/** A client backend retries its connect this often (DPDK's vhost reconnect: 1 s). */
const RECONNECT_MS = 1000;

export interface BackendSocketOptions {
  /** The socket path (net_vhost's iface). */
  path: string;
  /** Connect to a frontend that listens (client=1), reconnecting, instead of listening. */
  client: boolean;
}

/** One mapped region: the heap range it occupies. */
interface Mapped {
  offset: number;
  length: number;
}

/**
 * The heap range guest regions are mapped into, reserved once and reused by
 * every table that fits (heap memzones are never freed), and the windows now
 * mapped in it.
 */
class GuestWindows {
  private area = { offset: 0, length: 0 };
  private mapped: Mapped[] = [];

  constructor(
    private readonly heap: Heap,
    private readonly name: string,
  ) {}

  /**
   * Maps `regions` (their fds in `fds`, same order) and returns them as the
   * device's regions. All or nothing: on a throw nothing new stays mapped.
   * The previous table stays mapped until `release(previous)`.
   */
  map(regions: WireRegion[], fds: number[]): { regions: MemRegion[]; windows: Mapped[] } {
    const page = pageSize();
    const plan = regions.map((r) => {
      const fdOffset = r.mmapOffset - (r.mmapOffset % page);
      const length = Math.ceil((r.mmapOffset - fdOffset + r.size) / page) * page;
      return { r, fdOffset, length, delta: r.mmapOffset - fdOffset };
    });
    // Each window has a guard page on each side (mapWindow's guard): a kernel that strays past a region traps.
    const guard = page;
    let need = 0;
    for (const p of plan) need = alignUp(need + 2 * guard, WINDOW_ALIGN) + p.length;
    need += guard;
    // The new table goes beside the old one, which stays mapped until the device has let go of it.
    const areaEnd = this.area.offset + this.area.length;
    let used = this.area.offset;
    for (const m of this.mapped) if (m.offset >= this.area.offset && m.offset < areaEnd) used = Math.max(used, m.offset + m.length);
    let at = alignUp(used, WINDOW_ALIGN);
    if (at + need > areaEnd) {
      this.grow(need, regions);
      at = this.area.offset;
    }
    const windows: Mapped[] = [];
    const out: MemRegion[] = [];
    try {
      plan.forEach((p, i) => {
        at = alignUp(at + 2 * guard, WINDOW_ALIGN);
        const w = { offset: at, length: p.length };
        try {
          mapWindow(this.heap.memory!, { offset: w.offset, length: w.length, fd: fds[i]!, fdOffset: p.fdOffset, guard });
        } catch (e) {
          throw new VhostError(this.name, `SET_MEM_TABLE: region ${i} (gpa 0x${p.r.gpa.toString(16)}, ${p.r.size} bytes at fd offset ${p.r.mmapOffset}) cannot be mapped: ${(e as Error).message}`);
        }
        windows.push(w);
        out.push({ gpa: p.r.gpa, size: p.r.size, userAddr: p.r.userAddr, heapOffset: w.offset + p.delta });
        at += p.length;
      });
    } catch (e) {
      for (const w of windows) unmapWindow(this.heap.memory!, w);
      throw e;
    }
    this.mapped.push(...windows);
    return { regions: out, windows };
  }

  /** A fresh area for `need` bytes; refuses, naming the budget, when the heap has no room. */
  private grow(need: number, regions: WireRegion[]): void {
    try {
      const offset = this.heap.reserve(need, WINDOW_ALIGN, 'vhost-user guest memory');
      this.area = { offset, length: need };
    } catch (e) {
      if (!(e instanceof NoMemError)) throw e;
      const biggest = regions.reduce((a, r, i) => (r.size > regions[a]!.size ? i : a), 0);
      throw new VhostError(
        this.name,
        `SET_MEM_TABLE: the guest's ${regions.length} region(s), ${need} bytes mapped (region ${biggest} alone ${regions[biggest]!.size}), do not fit: the heap has ` +
          `${this.heap.free()} bytes free of ${this.heap.size}; a wasm32 heap plus the guest memory it maps must fit in 4 GiB, so give dpkit a heap large enough for the guest`,
      );
    }
  }

  /** Unmaps `windows` (a table the device no longer uses). */
  release(windows: Mapped[]): void {
    for (const w of windows) {
      unmapWindow(this.heap.memory!, w);
      this.mapped.splice(this.mapped.indexOf(w), 1);
    }
  }
}

/** A region as the frontend declared it, with the file its fd named (device and inode). */
interface TableEntry extends WireRegion {
  file: string;
}

/** The file an fd refers to, as `dev:ino`: a frontend's second fd for the same memfd names the same file. */
function fileOf(fd: number, name: string, region: number): string {
  try {
    const st = fstatSync(fd, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch (e) {
    throw new VhostError(name, `SET_MEM_TABLE: region ${region}: its fd cannot be examined: ${(e as Error).message}`);
  }
}

/** Whether two declared tables are the same regions of the same files, in the same order. */
function sameTable(a: TableEntry[], b: TableEntry[]): boolean {
  return a.length === b.length && a.every((r, i) => r.gpa === b[i]!.gpa && r.size === b[i]!.size && r.userAddr === b[i]!.userAddr && r.mmapOffset === b[i]!.mmapOffset && r.file === b[i]!.file);
}

/** One frontend's connection: its socket, the fds it passed, the windows of its table. */
class Connection {
  private readonly reader = new MsgReader();
  private windows: Mapped[] = [];
  /** The table now mapped, as declared (to recognise it when it comes again), and as the device has it. */
  private table: TableEntry[] = [];
  private tableRegions: MemRegion[] = [];
  private readonly callFds: number[];
  private readonly relays: (NotifyRelay | null)[];
  private open = true;

  constructor(
    private readonly owner: BackendSocket,
    private readonly fd: number,
  ) {
    const n = owner.dev.vringCount;
    this.callFds = new Array<number>(n).fill(-1);
    this.relays = new Array<NotifyRelay | null>(n).fill(null);
    watch(fd, () => this.onReadable(), READABLE);
  }

  private onReadable(): void {
    while (this.open) {
      const r = this.reader.next(this.fd);
      if (r === 'again') return;
      if (r === 'eof') return this.close('the frontend closed the connection');
      if (typeof r === 'string') return this.close(r);
      try {
        this.dispatch(r);
      } catch (e) {
        if (!(e instanceof VhostError || e instanceof NativeError)) throw e;
        return this.close(e.message.startsWith(this.owner.name + ': ') ? e.message.slice(this.owner.name.length + 2) : e.message);
      }
    }
  }

  /** Handles one frame; the frame's fds are closed here unless kept (SET_VRING_CALL's). */
  private dispatch(f: Frame): void {
    const kept = new Set<number>();
    try {
      if ((f.flags & FLAG_VERSION_MASK) !== FLAG_VERSION || (f.flags & FLAG_REPLY) !== 0) throw this.error(`${reqName(f.req)}: bad flags 0x${f.flags.toString(16)} (version 1, no REPLY bit, expected)`);
      const m = decodeMsg(f.req, f.payload);
      if (typeof m === 'string') throw this.error(m);
      const want = fdsExpected(m);
      if (f.fds.length !== want) throw this.error(`${reqName(f.req)}: ${f.fds.length} fd(s) passed, expected ${want}`);
      const dev = this.owner.dev;
      let reply: bigint | { index: number; num: number } | undefined;
      switch (m.req) {
        case Req.SET_LOG_BASE:
          throw this.error('SET_LOG_BASE: dirty-page logging (live migration) is not supported (LOG_ALL and LOG_SHMFD are never offered)');
        case Req.SET_MEM_TABLE: {
          const table = m.regions.map((r, i) => ({ ...r, file: fileOf(f.fds[i]!, this.owner.name, i) }));
          // QEMU sends its table again each time it starts the device (a guest's driver reset,
          // a reboot): the same regions of the same files keep their windows, as DPDK's vhost
          // keeps its mappings. A new table maps beside the old until the device lets go of it.
          if (this.windows.length > 0 && sameTable(table, this.table)) {
            dev.handle({ req: Req.SET_MEM_TABLE, regions: this.tableRegions });
            break;
          }
          const old = this.windows;
          const mapped = this.owner.windows.map(m.regions, f.fds);
          try {
            dev.handle({ req: Req.SET_MEM_TABLE, regions: mapped.regions });
          } catch (e) {
            this.owner.windows.release(mapped.windows);
            throw e;
          }
          this.windows = mapped.windows;
          this.table = table;
          this.tableRegions = mapped.regions;
          this.owner.windows.release(old);
          break;
        }
        case Req.SET_VRING_KICK:
          // dpkit's lcores poll the rings: the kick fd is not needed, only the fact that it was set.
          dev.handle({ req: m.req, index: m.index, notifier: NO_NOTIFIER });
          break;
        case Req.SET_VRING_CALL: {
          this.checkVring(m.req, m.index);
          this.dropCall(m.index);
          const counter = m.nofd ? NO_NOTIFIER : this.owner.callCounter(m.index);
          dev.handle({ req: m.req, index: m.index, notifier: counter });
          if (!m.nofd) {
            const fd = f.fds[0]!;
            kept.add(fd);
            this.callFds[m.index] = fd;
            this.relays[m.index] = new NotifyRelay(this.owner.heap, counter, fd);
          }
          break;
        }
        case Req.SET_VRING_ERR:
          this.checkVring(m.req, m.index);
          break;
        case Req.SET_VRING_ADDR:
          dev.handle({ req: m.req, index: m.index, desc: m.desc, used: m.used, avail: m.avail });
          break;
        case Req.GET_VRING_BASE: {
          const num = dev.handle({ req: m.req, index: m.index }) as number;
          this.dropCall(m.index);
          reply = { index: m.index, num };
          break;
        }
        default: {
          const v = dev.handle(m as VhostUserMsg);
          if (v !== undefined) reply = BigInt(v);
        }
      }
      if (replyKind(f.req) !== 'none') this.send(encodeReply(f.req, reply ?? 0n));
      else if ((f.flags & FLAG_NEED_REPLY) !== 0 && (dev.negotiatedProtocol & (1n << BigInt(PROTOCOL_F_REPLY_ACK))) !== 0n) this.send(encodeReply(f.req, 0n));
      if (f.req === Req.RESET_OWNER) this.dropAllCalls();
    } finally {
      for (const fd of f.fds) if (!kept.has(fd)) closeFd(fd);
    }
    this.owner.linkChanged();
  }

  private checkVring(req: number, index: number): void {
    if (index >= this.callFds.length) throw this.error(`${reqName(req)}: vring ${index} does not exist (device has ${this.callFds.length})`);
  }

  private error(problem: string): VhostError {
    return new VhostError(this.owner.name, problem);
  }

  private send(bytes: Uint8Array): void {
    const n = sendMsg(this.fd, bytes);
    if (n !== bytes.length) throw this.error(`the frontend does not read its replies (socket full)`);
  }

  private dropCall(index: number): void {
    this.relays[index]?.stop();
    this.relays[index] = null;
    closeFd(this.callFds[index]!);
    this.callFds[index] = -1;
  }

  private dropAllCalls(): void {
    for (let i = 0; i < this.callFds.length; i++) this.dropCall(i);
  }

  /** Ends the connection: device down (rings unpublished), then windows unmapped and every fd closed. */
  close(why: string): void {
    if (!this.open) return;
    this.open = false;
    this.owner.dev.disconnect();
    this.dropAllCalls();
    this.owner.windows.release(this.windows);
    this.windows = [];
    this.table = [];
    this.tableRegions = [];
    this.reader.dropFds();
    closeFd(this.fd);
    this.owner.connectionClosed(this, why);
  }
}

/**
 * net_vhost's socket: a listening server (one frontend at a time, as DPDK's
 * vhost) or a client that reconnects every second while no frontend listens.
 */
export class BackendSocket {
  readonly windows: GuestWindows;
  private listenFd = -1;
  private conn: Connection | null = null;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly counters: number;
  /** Called on every link change (for a port that wants to know, e.g. tests). */
  onLink: ((up: boolean) => void) | undefined;
  private wasUp = false;

  constructor(
    readonly heap: Heap,
    readonly dev: VhostDev,
    readonly name: string,
    readonly opts: BackendSocketOptions,
  ) {
    requireNative(name);
    if (!heap.memory) throw new VhostError(name, 'the heap has no WebAssembly memory to map guest regions into');
    this.windows = new GuestWindows(heap, name);
    this.counters = heap.reserve(64 * dev.vringCount, 64, 'vhost-user call counters');
    if (opts.client) this.tryConnect();
    else this.listen();
  }

  /** Heap byte offset of vring `index`'s call counter (what the data path bumps, relayed to the call eventfd). */
  callCounter(index: number): number {
    return this.counters + 64 * index;
  }

  get connected(): boolean {
    return this.conn !== null;
  }

  private listen(): void {
    const path = this.opts.path;
    removeStaleSocket(path);
    this.listenFd = unixListen(path, 'stream');
    watch(this.listenFd, () => this.onAccept(), READABLE);
  }

  private onAccept(): void {
    for (;;) {
      const fd = unixAccept(this.listenFd);
      if (fd < 0) return;
      if (this.conn !== null) {
        vhostLog(`${this.name}: vhost-user ${this.opts.path}: a second frontend connected while one is attached; refused`);
        closeFd(fd);
        continue;
      }
      this.attach(fd);
    }
  }

  private tryConnect(): void {
    this.timer = undefined;
    if (this.closed || this.conn !== null) return;
    let fd: number;
    try {
      fd = unixConnect(this.opts.path, 'stream');
    } catch (e) {
      if (!(e instanceof NativeError)) throw e;
      this.timer = setTimeout(() => this.tryConnect(), RECONNECT_MS);
      return;
    }
    this.attach(fd);
  }

  private attach(fd: number): void {
    vhostLog(`${this.name}: vhost-user ${this.opts.path}: frontend connected`);
    this.conn = new Connection(this, fd);
  }

  /** A connection ended (peer closed, protocol error, port close). */
  connectionClosed(c: Connection, why: string): void {
    if (this.conn !== c) return;
    this.conn = null;
    vhostLog(`${this.name}: vhost-user ${this.opts.path}: ${why}; connection closed, link down`);
    this.linkChanged();
    if (this.opts.client && !this.closed) this.timer = setTimeout(() => this.tryConnect(), RECONNECT_MS);
  }

  linkChanged(): void {
    const up = this.dev.ready();
    if (up === this.wasUp) return;
    this.wasUp = up;
    if (up) vhostLog(`${this.name}: vhost-user ${this.opts.path}: link up (${has(this.dev.negotiated, Feature.F_RING_PACKED) ? 'packed' : 'split'} rings)`);
    this.onLink?.(up);
  }

  /** Stops listening (the socket file is removed) or reconnecting, and closes the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.conn?.close('port closed');
    if (this.listenFd >= 0) {
      closeFd(this.listenFd);
      this.listenFd = -1;
      removeSocketFile(this.opts.path);
    }
  }
}
