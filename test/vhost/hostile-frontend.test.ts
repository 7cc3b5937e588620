/**
 * net_vhost's socket against a hostile frontend: a raw vhost-user client in
 * this test sends malformed, oversized, out-of-order and lying messages. Each
 * must cost the frontend its connection, with one log line naming the
 * problem, and leave the port down, the process up, and no fd or window behind.
 */
import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mempool } from '../../src/mem/mempool.js';
import { memfdCreate } from '../../src/native/memory.js';
import { native } from '../../src/native/native.js';
import { recvMsg, sendMsg, unixConnect } from '../../src/native/unix.js';
import { closeFd } from '../../src/native/watch.js';
import { eventfdCreate } from '../../src/native/eventfd.js';
import { setVhostLog } from '../../src/vhost/log.js';
import { Req } from '../../src/vhost/protocol.js';
import { encodeMsg, type WireMsg } from '../../src/vhost/wire.js';
import { Feature, bit } from '../../src/virtio/virtio-net.js';
import { fdCount } from './dpdk.js';

const skip = !native() && 'the native shim is not built';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-hostile-'));
const sock = join(dir, 'vh.sock');
const lines: string[] = [];
const MB = 1 << 20;
/** The guest's memory: one region, at a user address like a real process's. */
const GUEST = MB;
const UA = 0x7f00_0000_0000;
const V1 = bit(Feature.F_VERSION_1);

let heap: Heap;
let ethdev: Ethdev;
let port: number;
let fds0 = 0;
/** fds the test itself holds (guest memfds): not the backend's. */
let held = 0;

function guestMem(size = GUEST): number {
  held++;
  return memfdCreate('guest', size);
}

function dropMem(fd: number): void {
  held--;
  closeFd(fd);
}

const tick = () => new Promise((r) => setTimeout(r, 1));

/** Mappings of the test's guest memfds in this process: the backend's windows (the test maps none itself). */
function guestWindows(): number {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((l) => l.includes('/memfd:guest')).length;
}

/** A raw frontend: bytes and fds as the test wants them, whatever the protocol says. */
class Raw {
  readonly fd = unixConnect(sock, 'stream');
  private readonly buf = new Uint8Array(64);

  send(m: WireMsg, fds: number[] = [], flags = 0): void {
    this.bytes(encodeMsg(m, flags), fds);
  }

  bytes(b: Uint8Array, fds: number[] = []): void {
    assert.equal(sendMsg(this.fd, b, fds), b.length);
  }

  /** Waits for the backend's answer (its 8-byte payload) or its close (null). */
  async reply(): Promise<DataView | null> {
    let have = 0;
    for (let spins = 0; ; spins++) {
      const r = recvMsg(this.fd, this.buf.subarray(have, 20));
      if (r === null) {
        assert.ok(spins < 100_000, 'the backend neither answered nor closed');
        await tick();
        continue;
      }
      for (const f of r.fds) closeFd(f);
      if (r.bytes === 0) return null;
      have += r.bytes;
      if (have === 20) return new DataView(this.buf.buffer, 12, 8);
    }
  }

  close(): void {
    closeFd(this.fd);
  }
}

/** The handshake of a well-behaved frontend, step by step (what DPDK's virtio_user sends), with a guest memfd. */
function handshake(mem: number): { m: WireMsg; fds: number[] }[] {
  const ring = (i: number) => UA + i * 0x10000;
  const steps: { m: WireMsg; fds: number[] }[] = [
    { m: { req: Req.GET_FEATURES }, fds: [] },
    { m: { req: Req.SET_OWNER }, fds: [] },
    { m: { req: Req.SET_FEATURES, features: V1 }, fds: [] },
    { m: { req: Req.SET_MEM_TABLE, regions: [{ gpa: 0, size: GUEST, userAddr: UA, mmapOffset: 0 }] }, fds: [mem] },
  ];
  for (let i = 0; i < 2; i++) {
    steps.push(
      { m: { req: Req.SET_VRING_CALL, index: i, nofd: true }, fds: [] },
      { m: { req: Req.SET_VRING_NUM, index: i, num: 256 }, fds: [] },
      { m: { req: Req.SET_VRING_BASE, index: i, num: 0 }, fds: [] },
      { m: { req: Req.SET_VRING_ADDR, index: i, flags: 0, desc: ring(i), avail: ring(i) + 4096, used: ring(i) + 8192, log: 0 }, fds: [] },
      { m: { req: Req.SET_VRING_KICK, index: i, nofd: true }, fds: [] },
    );
  }
  return steps;
}

/** Waits until the backend closed `raw` and logged a line matching `problem`; then the port must be down and nothing leaked. */
async function refused(raw: Raw, problem: RegExp, extraFds: number[] = [], opts: { closeFirst?: boolean; from?: number } = {}): Promise<void> {
  const from = opts.from ?? lines.length;
  if (!opts.closeFirst) while ((await raw.reply()) !== null);
  raw.close();
  for (const f of extraFds) closeFd(f);
  for (let i = 0; !lines.slice(from).some((l) => /connection closed/.test(l)); i++) {
    assert.ok(i < 100_000, 'no log line');
    await tick();
  }
  const said = lines.slice(from).filter((l) => /connection closed/.test(l));
  assert.equal(said.length, 1, `one line per refusal: ${said.join(' | ')}`);
  assert.match(said[0]!, problem);
  assert.equal(ethdev.linkUp(port), false, 'the port is down');
  assert.equal(fdCount(), fds0 + held, 'no fd leaked');
  assert.equal(guestWindows(), 0, 'no window of guest memory left mapped');
}

describe('net_vhost against a hostile vhost-user frontend', { skip }, () => {
  before(() => {
    setVhostLog((l) => lines.push(l));
    heap = Heap.create({ size: 96 * MB });
    const pool = Mempool.create(heap, { name: 'pool', n: 1024, cacheSize: 32 });
    ethdev = new Ethdev(heap, drivers);
    port = ethdev.create(`net_vhost0,iface=${sock}`);
    ethdev.configure(port, 1, 1);
    ethdev.rxQueueSetup(port, 0, 0, pool);
    ethdev.txQueueSetup(port, 0, 0);
    ethdev.start(port);
    fds0 = fdCount();
  });
  after(() => {
    ethdev.stop(port);
    ethdev.close(port);
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes a well-behaved frontend: link up after the first queue pair, down when it leaves', async () => {
    const mem = guestMem();
    const raw = new Raw();
    for (const s of handshake(mem)) {
      raw.send(s.m, s.fds);
      if (s.m.req === Req.GET_FEATURES) assert.ok((await raw.reply())!.getBigUint64(0, true) & V1);
    }
    raw.send({ req: Req.GET_QUEUE_NUM });
    assert.equal((await raw.reply())!.getBigUint64(0, true), 1n);
    while (!ethdev.linkUp(port)) await tick();
    assert.equal(guestWindows(), 1, "the guest's region is mapped while it is attached");
    raw.close();
    dropMem(mem);
    while (ethdev.linkUp(port)) await tick();
    assert.equal(fdCount(), fds0);
    assert.equal(guestWindows(), 0, 'its window is unmapped when it leaves');
  });

  it("keeps the windows when a frontend sends its table again (QEMU, each time it starts the device), and maps a changed table anew", async () => {
    const mem = guestMem();
    const raw = new Raw();
    const steps = handshake(mem);
    for (const s of steps) {
      raw.send(s.m, s.fds);
      if (s.m.req === Req.GET_FEATURES) await raw.reply();
    }
    while (!ethdev.linkUp(port)) await tick();
    const window = () => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.includes('/memfd:guest'));
    const first = window();
    assert.equal(first.length, 1);
    // The device stops (GET_VRING_BASE on each ring) and starts again with the same table, through another fd of the same memfd.
    for (const index of [0, 1]) {
      raw.send({ req: Req.GET_VRING_BASE, index });
      assert.notEqual(await raw.reply(), null);
    }
    while (ethdev.linkUp(port)) await tick();
    const again = openSync(`/proc/self/fd/${mem}`, 'r+');
    for (const s of steps.slice(3)) raw.send(s.m, s.m.req === Req.SET_MEM_TABLE ? [again] : s.fds);
    closeFd(again);
    while (!ethdev.linkUp(port)) await tick();
    assert.deepEqual(window(), first, 'the same window, not mapped again');
    // Another memfd: a new table, mapped anew, and the old window gone.
    const other = guestMem();
    raw.send({ req: Req.SET_MEM_TABLE, regions: [{ gpa: 0, size: GUEST, userAddr: UA, mmapOffset: 0 }] }, [other]);
    raw.send({ req: Req.GET_QUEUE_NUM });
    await raw.reply();
    const now = window();
    assert.equal(now.length, 1, 'one window: the old one released');
    assert.match(now[0]!, new RegExp(` ${fstatSync(other).ino} +/memfd:guest`), "it maps the new table's memfd");
    raw.close();
    dropMem(mem);
    dropMem(other);
    while (ethdev.linkUp(port)) await tick();
    assert.equal(fdCount(), fds0);
    assert.equal(guestWindows(), 0);
  });

  it('refuses malformed messages: truncated, oversized, wrong sizes, bad flags, unknown requests', async () => {
    let raw = new Raw();
    const from = lines.length;
    raw.bytes(new Uint8Array([1, 0, 0, 0, 1]));
    await refused(raw, /the peer closed in the middle of a message \(5 bytes of 12\)/, [], { closeFirst: true, from });
    raw = new Raw();
    const big = new Uint8Array(12);
    new DataView(big.buffer).setUint32(0, Req.SET_MEM_TABLE, true);
    new DataView(big.buffer).setUint32(4, 1, true);
    new DataView(big.buffer).setUint32(8, 1 << 20, true);
    raw.bytes(big);
    await refused(raw, /SET_MEM_TABLE: oversized payload of 1048576 bytes/);
    raw = new Raw();
    const short = encodeMsg({ req: Req.SET_VRING_ADDR, index: 0, flags: 0, desc: 0, used: 0, avail: 0, log: 0 });
    new DataView(short.buffer).setUint32(8, 16, true);
    raw.bytes(short.subarray(0, 28));
    await refused(raw, /SET_VRING_ADDR: payload of 16 bytes, expected 40/);
    raw = new Raw();
    raw.send({ req: Req.GET_FEATURES }, [], 0x4);
    await refused(raw, /GET_FEATURES: bad flags 0x5/);
    raw = new Raw();
    raw.bytes(new Uint8Array([99, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]));
    await refused(raw, /request 99: not supported/);
    raw = new Raw();
    const log = guestMem(4096);
    raw.send({ req: Req.SET_LOG_BASE }, [log]);
    held--;
    await refused(raw, /SET_LOG_BASE: .*not supported/, [log]);
  });

  it('refuses wrong fd counts', async () => {
    let raw = new Raw();
    raw.send({ req: Req.SET_OWNER });
    raw.send({ req: Req.SET_VRING_KICK, index: 0, nofd: false });
    await refused(raw, /SET_VRING_KICK: 0 fd\(s\) passed, expected 1/);
    raw = new Raw();
    const e1 = eventfdCreate();
    const e2 = eventfdCreate();
    raw.send({ req: Req.SET_VRING_CALL, index: 0, nofd: false }, [e1, e2]);
    await refused(raw, /SET_VRING_CALL: 2 fd\(s\) passed, expected 1/, [e1, e2]);
    raw = new Raw();
    const mem = guestMem();
    raw.send({ req: Req.SET_OWNER }, [mem]);
    held--;
    await refused(raw, /SET_OWNER: 1 fd\(s\) passed, expected 0/, [mem]);
  });

  it('refuses bad memory tables: empty, overlapping, larger than the fd, larger than the heap', async () => {
    const mem = guestMem();
    const table = async (regions: { gpa: number; size: number; mmapOffset?: number }[], problem: RegExp) => {
      const raw = new Raw();
      raw.send({ req: Req.SET_OWNER });
      raw.send({ req: Req.SET_MEM_TABLE, regions: regions.map((r, i) => ({ userAddr: UA + i * GUEST * 2, mmapOffset: 0, ...r })) }, regions.map(() => mem));
      await refused(raw, problem);
    };
    await table([{ gpa: 0, size: 0 }], /region 0 is empty/);
    await table([{ gpa: 0, size: GUEST }, { gpa: 4096, size: 4096 }], /overlap/);
    await table([{ gpa: 0, size: 2 * GUEST }], /region 0 .* cannot be mapped/);
    await table([{ gpa: 0, size: 4096, mmapOffset: 2 * GUEST }], /region 0 .* cannot be mapped/);
    await table([{ gpa: 0, size: 3 * 1024 * MB }], /do not fit: the heap has \d+ bytes free .* 4 GiB/);
    dropMem(mem);
    assert.equal(fdCount(), fds0);
  });

  it('refuses ring addresses outside every region, sizes that are not powers of two, requests out of order', async () => {
    const mem = guestMem();
    const steps = handshake(mem).slice(0, 4);
    let raw = new Raw();
    for (const s of steps) raw.send(s.m, s.fds);
    raw.send({ req: Req.SET_VRING_NUM, index: 0, num: 256 });
    raw.send({ req: Req.SET_VRING_ADDR, index: 0, flags: 0, desc: UA + GUEST, avail: UA, used: UA + 8192, log: 0 });
    await refused(raw, /SET_VRING_ADDR: vring 0: its addresses are outside the memory table/);
    raw = new Raw();
    raw.send({ req: Req.SET_VRING_NUM, index: 0, num: 100 });
    await refused(raw, /vring 0: size 100 is not a power of two/);
    raw = new Raw();
    raw.send({ req: Req.SET_VRING_NUM, index: 7, num: 256 });
    await refused(raw, /vring 7 does not exist/);
    raw = new Raw();
    raw.send(steps[3]!.m, steps[3]!.fds); // SET_MEM_TABLE before SET_OWNER
    await refused(raw, /SET_MEM_TABLE: SET_OWNER first/);
    dropMem(mem);
    assert.equal(fdCount(), fds0);
  });

  it('survives a close at every step of the handshake, and serves the next frontend', async () => {
    const mem = guestMem();
    const steps = handshake(mem);
    for (let k = 0; k <= steps.length; k++) {
      const raw = new Raw();
      const from = lines.length;
      for (const s of steps.slice(0, k)) raw.send(s.m, s.fds);
      if (k > 0) await raw.reply(); // GET_FEATURES' answer: the backend is reading
      await refused(raw, /the frontend closed the connection/, [], { closeFirst: true, from });
    }
    dropMem(mem);
    assert.equal(fdCount(), fds0);
  });

  it('survives 10^4 seeded random message sequences: each connection refused or closed, nothing leaked', async () => {
    let seed = 0x5eed;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const mem = guestMem();
    const valid = handshake(mem);
    const reqs = [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 40];
    for (let n = 0; n < 10_000; n++) {
      const raw = new Raw();
      const from = lines.length;
      const len = 1 + rnd(6);
      for (let i = 0; i < len; i++) {
        const pick = rnd(4);
        if (pick < 2) {
          const s = valid[rnd(valid.length)]!;
          raw.send(s.m, s.fds);
        } else {
          // Random header and payload, sometimes with an fd.
          const size = rnd(3) === 0 ? rnd(600) : [0, 8, 40, 264][rnd(4)]!;
          const b = new Uint8Array(12 + Math.min(size, 300));
          for (let j = 12; j < b.length; j++) b[j] = rnd(256);
          const v = new DataView(b.buffer);
          v.setUint32(0, reqs[rnd(reqs.length)]!, true);
          v.setUint32(4, rnd(8) === 0 ? rnd(16) : 1, true);
          v.setUint32(8, size, true);
          try {
            sendMsg(raw.fd, b, rnd(3) === 0 ? [mem] : []);
          } catch {
            break; // the backend already closed this one
          }
        }
      }
      raw.close();
      while (!lines.slice(from).some((l) => /connection closed/.test(l))) await tick();
    }
    dropMem(mem);
    assert.equal(ethdev.linkUp(port), false);
    assert.equal(fdCount(), fds0, 'no fd leaked over 10^4 connections');
    assert.equal(guestWindows(), 0, 'no window left mapped over 10^4 connections');
  });
});
