// net_memif's server against a hostile client, at random: seeded sequences of
// valid and invalid control messages with random fds and region sizes, and
// connections whose descriptors and ring indices lie while traffic runs.
// Whatever comes, dpkit answers with one DISCONNECT and its reason, leaks no
// fd, and writes nothing outside the peer's region or past an mbuf's data.
import assert from 'node:assert/strict';
import { openSync, readdirSync, writeSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { seededRandom } from '../../src/apps/bench/stats.js';
import {
  MEMIF_COOKIE,
  MEMIF_DESC_FLAG_NEXT,
  MEMIF_DESC_SIZE,
  MEMIF_RING_HDR_SIZE,
  MDESC_FLAGS,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MDESC_REGION,
  MRING_COOKIE,
  MRING_HEAD,
  MRING_TAIL,
} from '../../src/drivers/memif/memif-layout.js';
import { MEMIF_VERSION, MSG_SIZE, MsgType, encodeAck, encodeAddRegion, encodeConnect, encodeDisconnect, encodeInit } from '../../src/drivers/memif/protocol.js';
import { Heap } from '../../src/eal/heap.js';
import { eventfdCreate } from '../../src/native/eventfd.js';
import { mapWindow, memfdCreate, unmapWindow } from '../../src/native/memory.js';
import { closeFd } from '../../src/native/watch.js';
import { portUp } from '../helpers.js';
import { Raw, init, ring } from './memif-raw.js';
import { collectLog, noShim, packet, payload, until, world } from './memif-util.js';

const fdCount = () => readdirSync('/proc/self/fd').length;
const ID = 5;
const SECRET = 'good';
/** The well-behaved client's region: C2S ring at 0, S2C ring at S2C_AT, buffers from BUF_AT. */
const REGION = 65536;
const LOG2 = 4;
const S2C_AT = 1024;
const BUF_AT = 4096;

/** A sealed memfd of `size` bytes with the memif cookie written at each ring offset (pwrite: no mapping needed). */
function regionFd(size: number, rings: number[]): number {
  const fd = memfdCreate('fuzz', size, { sealSize: true });
  const cookie = Buffer.alloc(4);
  cookie.writeUInt32LE(MEMIF_COOKIE);
  for (const at of rings) if (at + 4 <= size) writeSync(fd, cookie, 0, 4, at + MRING_COOKIE);
  return fd;
}

describe('net_memif server against random hostile clients', { skip: noShim }, () => {
  let log: ReturnType<typeof collectLog>;
  before(() => (log = collectLog()));
  after(() => log.restore());

  it('10^4 seeded random message sequences: each ends in one DISCONNECT with its reason, one log line, no fd leaked', async () => {
    const rnd = seededRandom(0x6d656d69);
    const path = `/tmp/dpkit-memif-fuzz-${process.pid}.sock`;
    const { ethdev, mp } = world('wasm', 256, 100);
    const p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path},id=${ID},secret=${SECRET}`));
    const fds0 = fdCount();
    const reasons = new Map<string, number>();
    let connected = 0;

    /** An fd to attach: nothing, an eventfd, a sealed or unsealed memfd of a random size, a file that takes no seals. */
    const someFd = (): number => {
      switch (rnd(6)) {
        case 0:
          return eventfdCreate();
        case 1:
          return memfdCreate('fuzz', 1 + rnd(1 << 18));
        case 2:
          return regionFd([4096, REGION, 1 << 20, 1 + rnd(1 << 17)][rnd(4)]!, [0, S2C_AT]);
        case 3:
          return openSync('/dev/null', 'r');
        default:
          return -1;
      }
    };
    /** The next message: the well-behaved conversation's next step most often, else something random. */
    const next = (step: number): { b: Uint8Array; fds: number[] } => {
      const fd = someFd();
      const fds = fd >= 0 ? [fd] : [];
      if (rnd(3) !== 0) {
        switch (step) {
          case 0:
            return { b: init(rnd(8) === 0 ? rnd(8) : ID, rnd(8) === 0 ? 'bad' : SECRET), fds };
          case 1:
            return { b: encodeAddRegion({ index: rnd(6) === 0 ? 1 : 0, size: rnd(6) === 0 ? rnd(1 << 21) : REGION }), fds: rnd(8) === 0 ? fds : [regionFd(REGION, [0, S2C_AT]), ...fds] };
          case 2:
          case 3: {
            const ev = eventfdCreate();
            const c2s = step === 2;
            return { b: ring(rnd(8) === 0 ? rnd(4) : 0, rnd(6) === 0 ? rnd(REGION + 4096) & ~7 : c2s ? 0 : S2C_AT, rnd(8) === 0 ? 1 : 0, rnd(8) === 0 ? rnd(16) : LOG2, c2s), fds: [ev, ...fds] };
          }
          default:
            return { b: encodeConnect(MsgType.CONNECT, 'fuzz'), fds };
        }
      }
      const b = new Uint8Array(rnd(4) === 0 ? rnd(MSG_SIZE * 2) : MSG_SIZE);
      for (let i = 0; i < b.length; i++) b[i] = rnd(4) === 0 ? rnd(256) : 0;
      if (b.length >= 2) b[0] = rnd(12); // mostly a known type with random fields
      const pick = rnd(8);
      if (pick === 0) return { b: encodeAck(), fds };
      if (pick === 1) return { b: encodeDisconnect({ code: rnd(4), reason: 'fuzz' }), fds };
      if (pick === 2) return { b: encodeInit({ version: rnd(2) === 0 ? MEMIF_VERSION : rnd(0x10000), id: ID, mode: rnd(3), secret: SECRET, name: 'fuzz' }), fds };
      return { b, fds };
    };

    for (let n = 0; n < 10_000; n++) {
      const from = log.lines.length;
      const c = new Raw(path);
      assert.equal((await c.recv())?.type, MsgType.HELLO);
      const len = 1 + rnd(7);
      let open = true;
      let peerLeft = false;
      for (let i = 0; i < len && open; i++) {
        const m = next(i);
        // DISCONNECT, or an empty datagram: recvmsg reads it as the socket closing (as DPDK's does).
        peerLeft ||= (m.b.length === MSG_SIZE && m.b[0] === MsgType.DISCONNECT && m.b[1] === 0) || (m.b.length === 0 && m.fds.length === 0);
        open = c.trySend(m.b, m.fds);
        for (const fd of m.fds) closeFd(fd);
      }
      // Always wrong (every memif message is 128 bytes): the server must end every conversation.
      c.trySend(new Uint8Array(1 + rnd(MSG_SIZE - 1)));
      let reason = '';
      for (;;) {
        const m = await c.recv();
        if (m === null) break;
        if (m.type === MsgType.CONNECTED) connected++;
        if (m.type === MsgType.DISCONNECT) {
          reason = m.disconnect.reason;
          assert.equal(await c.recv(), null, 'the server closes right after DISCONNECT');
          break;
        }
      }
      c.close();
      const lines = log.lines.slice(from);
      const said = lines.filter((l) => l.includes(': disconnecting: ')).map((l) => l.slice(l.indexOf(': disconnecting: ') + 17));
      for (const r of said) reasons.set(r, (reasons.get(r) ?? 0) + 1);
      if (said.length === 0) {
        // Only a client that said DISCONNECT itself (or sent what reads as a close) is let go without one; the server logs that.
        assert.ok(peerLeft && lines.some((l) => /peer disconnected|peer closed/.test(l)), `sequence ${n}: closed without DISCONNECT: ${lines.join(' | ')}`);
      } else {
        assert.equal(said.length, 1, `sequence ${n}: one reason line: ${lines.join(' | ')}`);
        // What the peer read, unless Linux dropped it (ECONNRESET: it closed with our messages unread).
        if (!c.reset) assert.equal(reason, said[0], `sequence ${n}: the DISCONNECT carries the logged reason`);
      }
      await until(() => !ethdev.linkUp(p) && fdCount() === fds0, `sequence ${n}: link down and every fd closed (${fdCount()} open, ${fds0} before)`);
    }
    // The generator reached every kind of refusal and, sometimes, a whole connection.
    for (const r of ['Invalid message size', 'Unexpected message', 'ID not found', 'Incorrect secret', 'Region not sealed', 'Region cannot be mapped', 'Invalid region index', 'Ring outside its region', 'Invalid ring size']) {
      assert.ok((reasons.get(r) ?? 0) > 0, `some sequence was refused with ${r}: ${[...reasons].join(', ')}`);
    }
    assert.ok(connected > 0, 'some sequences connected');
    assert.equal(ethdev.isStarted(p), true, 'the port is still there for the next client');
    ethdev.close(p);
    mp.checkLeaks();
  });

  it('a duplicate id refused; lying descriptors and ring indices: nothing written outside the region, no mbuf byte past its data, the good packets intact', async () => {
    const rnd = seededRandom(0x0b0b);
    const path = `/tmp/dpkit-memif-oob-${process.pid}.sock`;
    const { ethdev, mp, mb, heap, burst } = world('wasm', 512, 100);
    const cap = mp.bufLen - mp.headroom;
    const TAIL = 0xa5;
    const GUARD = 0x5a;
    // Every mbuf's data room painted, so a byte written past a packet's data shows.
    const paint = () => {
      for (let m = mp.alloc(); m !== 0; m = mp.alloc()) heap.u8.fill(TAIL, mb.mtod(m), mb.mtod(m) + cap);
      for (let h = mp.firstHandle; h < mp.firstHandle + mp.size; h++) mb.free(h);
    };
    paint();
    // A guard just before the port's window arena (reserved next, 64 KiB aligned) and past the region in it.
    const guard = heap.reserve(65536, 65536, 'guard');
    heap.u8.fill(GUARD, guard, guard + 65536);
    const p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path},id=${ID},secret=${SECRET}`));
    const arena = guard + 65536;
    heap.u8.fill(GUARD, arena + REGION, arena + REGION + (1 << 20));
    const guardsIntact = (what: string) => {
      for (const [a, b] of [
        [guard, arena],
        [arena + REGION, arena + REGION + (1 << 20)],
      ] as const) {
        const bad = heap.u8.subarray(a, b).findIndex((x) => x !== GUARD);
        assert.equal(bad, -1, `${what}: heap byte ${a + bad} outside the region changed`);
      }
    };
    const fds0 = fdCount();
    // The raw client's view of its region: the same memfd in a window of a second heap.
    const h2 = Heap.create({ size: 4 << 20 });
    const at = h2.reserve(REGION, 65536);
    const desc = (ringAt: number, i: number) => at + ringAt + MEMIF_RING_HDR_SIZE + (i & ((1 << LOG2) - 1)) * MEMIF_DESC_SIZE;
    const setDesc = (d: number, region: number, offset: number, length: number, flags: number) => {
      h2.u16[(d + MDESC_FLAGS) >>> 1] = flags;
      h2.u16[(d + MDESC_REGION) >>> 1] = region;
      h2.u32[(d + MDESC_OFFSET) >>> 2] = offset >>> 0;
      h2.u32[(d + MDESC_LENGTH) >>> 2] = length >>> 0;
    };
    /** A descriptor that lies: past the region, wrapping u32, huge, or in a region that does not exist. */
    const lie = (d: number, flags = 0) => {
      const k = rnd(5);
      if (k === 0) setDesc(d, 0, REGION - rnd(64), 64 + rnd(2000), flags);
      else if (k === 1) setDesc(d, 0, 0xffffffff - rnd(256), 512, flags);
      else if (k === 2) setDesc(d, 0, BUF_AT, 0x80000000 + rnd(0x7fffffff), flags);
      else if (k === 3) setDesc(d, 1 + rnd(0xfffe), BUF_AT, 64, flags);
      else setDesc(d, 0, REGION + rnd(1 << 20), 1, flags);
    };
    let rxGood = 0;
    let txGood = 0;
    for (let round = 0; round < 200; round++) {
      const fd = regionFd(REGION, [0, S2C_AT]);
      mapWindow(h2.memory!, { offset: at, length: REGION, fd });
      const c = new Raw(path);
      assert.equal((await c.recv())?.type, MsgType.HELLO);
      c.send(init(ID, SECRET));
      c.send(encodeAddRegion({ index: 0, size: REGION }), [fd]);
      c.sendWithEventfd(ring(0, 0, 0, LOG2, true));
      c.sendWithEventfd(ring(0, S2C_AT, 0, LOG2, false));
      c.send(encodeConnect(MsgType.CONNECT, 'oob'));
      for (let m = await c.recv(); m?.type !== MsgType.CONNECTED; m = await c.recv()) assert.equal(m?.type, MsgType.ACK);
      await until(() => ethdev.linkUp(p), `round ${round}: link up`);
      if (round === 0) {
        // A second client for the same id is refused; the first stays connected.
        const dup = new Raw(path);
        assert.equal((await dup.recv())?.type, MsgType.HELLO);
        dup.send(init(ID, SECRET));
        assert.equal(await dup.disconnectReason(), 'Already connected');
        dup.close();
        assert.equal(ethdev.linkUp(p), true);
      }
      const bad0 = ethdev.xstats(p)['bad_descriptors'] ?? 0;
      const fault = () => (ethdev.xstats(p)['bad_descriptors'] ?? 0) > bad0;

      // Client → dpkit: packets in random slots, one in three a lie (sometimes the head itself lies).
      const k = 1 + rnd(1 << LOG2);
      const want: Uint8Array[] = [];
      let lied = false;
      for (let i = 0, slot = 0; i < k && slot < 1 << LOG2; i++) {
        const bytes = payload(round * 100 + i, 1 + rnd(3000));
        const segs = Math.ceil(bytes.length / 2048);
        if (slot + segs > 1 << LOG2) break;
        const liar = rnd(3) === 0 ? rnd(segs) : -1;
        for (let s = 0; s < segs; s++) {
          const part = bytes.subarray(s * 2048, (s + 1) * 2048);
          const off = BUF_AT + (slot + s) * 2048;
          h2.u8.set(part, at + off);
          setDesc(desc(0, slot + s), 0, off, part.length, s < segs - 1 ? MEMIF_DESC_FLAG_NEXT : 0);
          if (s === liar) lie(desc(0, slot + s), s < segs - 1 ? MEMIF_DESC_FLAG_NEXT : 0);
        }
        // A lying slot drops its whole packet; the packets after it still arrive (the link drops later).
        if (liar < 0) want.push(bytes);
        else lied = true;
        slot += segs;
        Atomics.store(h2.u16, (at + MRING_HEAD) >>> 1, slot);
      }
      const headLies = rnd(10) === 0;
      if (headLies) Atomics.store(h2.u16, (at + MRING_HEAD) >>> 1, (1 << LOG2) + 1 + rnd(1000)); // more than the ring holds
      const got: Uint8Array[] = [];
      for (let tries = 0; tries < 4; tries++) {
        const n = ethdev.rxBurst(p, 0, burst, 32);
        for (let i = 0; i < n; i++) {
          got.push(mb.read(burst[i]!));
          for (let m = burst[i]!; m !== 0; m = mb.next(m)) {
            const end = mb.mtod(m) + cap;
            const tail = heap.u8.subarray(mb.mtod(m) + mb.dataLen(m), end).findIndex((x) => x !== TAIL);
            assert.equal(tail, -1, `round ${round}: mbuf ${m} written past its data length`);
            heap.u8.fill(TAIL, mb.mtod(m), end);
          }
        }
        mb.freeBulk(burst, n);
      }
      if (headLies) assert.equal(got.length, 0, `round ${round}: a head past the ring gives nothing`);
      else {
        assert.equal(got.length, want.length, `round ${round}: every good packet, and only those`);
        got.forEach((b, i) => assert.deepEqual(b, want[i], `round ${round}: good packet ${i} intact`));
        rxGood += want.length;
      }
      if (lied || headLies) assert.ok(fault(), `round ${round}: the lie was counted`);
      guardsIntact(`round ${round}, rx`);

      // dpkit → client: the client posts S2C buffers, some of them lies, and dpkit sends into them.
      if (ethdev.linkUp(p) && !fault()) {
        const posted = 1 + rnd(1 << LOG2);
        const firstLie = rnd(2) === 0 ? rnd(posted) : posted;
        for (let i = 0; i < posted; i++) {
          if (i === firstLie) lie(desc(S2C_AT, i));
          else setDesc(desc(S2C_AT, i), 0, BUF_AT + i * 2048, 2048, 0);
        }
        Atomics.store(h2.u16, (at + S2C_AT + MRING_HEAD) >>> 1, posted);
        const sizes = Array.from({ length: 1 + rnd(20) }, () => 60 + rnd(1400));
        const pkts = sizes.map((len, i) => packet(mb, mp, payload(round * 1000 + i, len)));
        for (let i = 0; i < pkts.length; i++) burst[i] = pkts[i]!;
        const sent = ethdev.txBurst(p, 0, burst, pkts.length);
        mb.freeBulk(burst, pkts.length - sent, sent);
        assert.equal(sent, Math.min(pkts.length, firstLie), `round ${round}: dpkit sends into the good buffers before the first lie, no further`);
        assert.equal(Atomics.load(h2.u16, (at + S2C_AT + MRING_TAIL) >>> 1), sent);
        for (let i = 0; i < sent; i++) {
          const d = desc(S2C_AT, i);
          assert.equal(h2.u32[(d + MDESC_LENGTH) >>> 2], sizes[i]);
          assert.deepEqual(h2.u8.slice(at + BUF_AT + i * 2048, at + BUF_AT + i * 2048 + sizes[i]!), payload(round * 1000 + i, sizes[i]!));
        }
        txGood += sent;
        if (firstLie < Math.min(pkts.length, posted)) assert.ok(fault(), `round ${round}: the tx lie was counted`);
        guardsIntact(`round ${round}, tx`);
      }
      c.close();
      await until(() => !ethdev.linkUp(p), `round ${round}: link down`);
      unmapWindow(h2.memory!, { offset: at, length: REGION });
      closeFd(fd);
      assert.equal(mp.inUse(), 0, `round ${round}: every mbuf back in the pool`);
      paint(); // the packets dpkit sent left their bytes in their mbufs
    }
    assert.ok(rxGood > 0 && txGood > 0, `good packets went both ways (${rxGood} in, ${txGood} out)`);
    await until(() => fdCount() === fds0, 'every fd closed');
    guardsIntact('the end');
    ethdev.close(p);
    mp.checkLeaks();
  });
});
