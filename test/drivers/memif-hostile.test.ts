import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { MEMIF_COOKIE, MEMIF_DESC_SIZE, MEMIF_RING_HDR_SIZE, MDESC_LENGTH, MDESC_OFFSET, MRING_COOKIE, MRING_HEAD } from '../../src/drivers/memif/memif-layout.js';
import { MSG_SIZE, MsgType, encodeAddRegion, encodeConnect } from '../../src/drivers/memif/protocol.js';
import { eventfdCreate } from '../../src/native/eventfd.js';
import { memfdCreate } from '../../src/native/memory.js';
import { closeFd } from '../../src/native/watch.js';
import { portUp } from '../helpers.js';
import { collectLog, noShim, until, world } from './memif-util.js';
import { Raw, init, ring } from './memif-raw.js';

describe('net_memif server against a hostile client', { skip: noShim }, () => {
  let log: ReturnType<typeof collectLog>;
  before(() => (log = collectLog()));
  after(() => log.restore());
  const path = `/tmp/dpkit-memif-hostile-${process.pid}.sock`;
  const { ethdev, mp, heap } = world();
  const p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path},id=5,secret=good`));
  const fds = readdirSync('/proc/self/fd').length;

  /** Runs `script` on a fresh raw client; expects one DISCONNECT with `reason`, one log line naming it, no fd left. */
  const refused = async (reason: string, script: (c: Raw) => Promise<void> | void) => {
    const before = log.lines.length;
    const c = new Raw(path);
    assert.equal((await c.recv())?.type, MsgType.HELLO);
    await script(c);
    assert.equal(await c.disconnectReason(), reason);
    c.close();
    const lines = log.lines.slice(before).filter((l) => l.includes(reason));
    assert.ok(lines.length >= 1, `a log line says ${reason}: ${log.lines.slice(before).join(' | ')}`);
    await until(() => readdirSync('/proc/self/fd').length === fds, 'every fd of the connection closed');
    assert.equal(ethdev.linkUp(p), false);
  };

  it('a message of the wrong length', () => refused('Invalid message size', (c) => c.send(new Uint8Array(10))));
  it('an unknown message type', () => refused('Unknown message type', (c) => c.send(Uint8Array.from({ length: MSG_SIZE }, (_, i) => (i === 0 ? 99 : 0)))));
  it('ADD_RING before INIT', () => refused('Unexpected message', (c) => c.sendWithEventfd(ring(0, 0))));
  it('an id nobody serves', () => refused('ID not found', (c) => c.send(init(6, 'good'))));
  it('no secret', () => refused('Secret required', (c) => c.send(init(5))));
  it('a wrong secret', () => refused('Incorrect secret', (c) => c.send(init(5, 'bad'))));
  const withInit = async (c: Raw) => {
    c.send(init(5, 'good'));
    assert.equal((await c.recv())?.type, MsgType.ACK);
  };
  it('ADD_REGION without its fd', () => refused('Missing region fd', async (c) => (await withInit(c), c.send(encodeAddRegion({ index: 0, size: 65536 })))));
  it('a region index out of order', () =>
    refused('Invalid region index', async (c) => {
      await withInit(c);
      const fd = memfdCreate('r', 65536);
      c.send(encodeAddRegion({ index: 1, size: 65536 }), [fd]);
      closeFd(fd);
    }));
  it('a region fd smaller than declared', () =>
    refused('Region cannot be mapped', async (c) => {
      await withInit(c);
      const fd = memfdCreate('r', 4096, { sealSize: true });
      c.send(encodeAddRegion({ index: 0, size: 1 << 20 }), [fd]);
      closeFd(fd);
    }));
  it('a region memfd not sealed against shrinking (it could be truncated under the mapping)', () =>
    refused('Region not sealed', async (c) => {
      await withInit(c);
      const fd = memfdCreate('r', 65536);
      c.send(encodeAddRegion({ index: 0, size: 65536 }), [fd]);
      closeFd(fd);
    }));
  it('a region fd that is not a memfd (a file that takes no seals)', () =>
    refused('Region not sealed', async (c) => {
      await withInit(c);
      const fd = openSync('/proc/self/stat', 'r');
      c.send(encodeAddRegion({ index: 0, size: 4096 }), [fd]);
      closeSync(fd);
    }));
  const withRegion = async (c: Raw, size = 65536) => {
    await withInit(c);
    const fd = memfdCreate('r', size, { sealSize: true });
    c.send(encodeAddRegion({ index: 0, size }), [fd]);
    assert.equal((await c.recv())?.type, MsgType.ACK);
    return fd;
  };
  it('a ring in a region that was not added', () => refused('Invalid region index', async (c) => (closeFd(await withRegion(c)), c.sendWithEventfd(ring(0, 0, 1)))));
  it('a ring index past the queues', () => refused('Invalid ring index', async (c) => (closeFd(await withRegion(c)), c.sendWithEventfd(ring(4, 0)))));
  it('a ring offset outside its region', () => refused('Ring outside its region', async (c) => (closeFd(await withRegion(c)), c.sendWithEventfd(ring(0, 65536 - 64)))));
  it('a huge ring size', () => refused('Invalid ring size', async (c) => (closeFd(await withRegion(c)), c.sendWithEventfd(ring(0, 0, 0, 20)))));
  it('a ring without the memif cookie', () =>
    refused('Wrong ring', async (c) => {
      closeFd(await withRegion(c));
      const efd = eventfdCreate();
      c.send(ring(0, 0), [efd]);
      closeFd(efd);
      assert.equal((await c.recv())?.type, MsgType.ACK);
      c.send(encodeConnect(MsgType.CONNECT, 'raw'));
    }));

  it('descriptors outside the region or with huge lengths: no packet, no mbuf taken, counted, disconnected', async () => {
    const size = 65536;
    await refused('Bad descriptor', async (c) => {
      await withInit(c);
      const fd = memfdCreate('r', size, { sealSize: true });
      c.send(encodeAddRegion({ index: 0, size }), [fd]);
      assert.equal((await c.recv())?.type, MsgType.ACK);
      const efd = eventfdCreate();
      c.send(ring(0, 0), [efd]);
      closeFd(efd);
      assert.equal((await c.recv())?.type, MsgType.ACK);
      // The raw client's view of its region: the same memfd in a window of a second heap.
      const { heap: h2 } = world('wasm', 64, 8);
      const at = h2.reserve(size, 65536);
      const { mapWindow, unmapWindow } = await import('../../src/native/memory.js');
      mapWindow(h2.memory!, { offset: at, length: size, fd });
      h2.u32[(at + MRING_COOKIE) >>> 2] = MEMIF_COOKIE;
      c.send(encodeConnect(MsgType.CONNECT, 'raw'));
      assert.equal((await c.recv())?.type, MsgType.CONNECTED);
      await until(() => ethdev.linkUp(p), 'link up');
      const d = (i: number) => at + MEMIF_RING_HDR_SIZE + i * MEMIF_DESC_SIZE;
      h2.u32[(d(0) + MDESC_OFFSET) >>> 2] = size - 10; // 100 bytes from 10 before the end
      h2.u32[(d(0) + MDESC_LENGTH) >>> 2] = 100;
      h2.u32[(d(1) + MDESC_OFFSET) >>> 2] = 4096;
      h2.u32[(d(1) + MDESC_LENGTH) >>> 2] = 0xffffffff;
      Atomics.store(h2.u16, (at + MRING_HEAD) >>> 1, 2);
      const burst = heap.burst(32);
      assert.equal(ethdev.rxBurst(p, 0, burst, 32), 0, 'no packet from bad descriptors');
      assert.equal(ethdev.xstats(p)['bad_descriptors'], 2);
      await until(() => !ethdev.linkUp(p), 'the fault to disconnect');
      unmapWindow(h2.memory!, { offset: at, length: size });
      closeFd(fd);
    });
    assert.equal(mp.inUse(), 0);
  });

  it('stays up for the next, well-behaved client', () => {
    assert.equal(ethdev.isStarted(p), true);
    ethdev.close(p);
    mp.checkLeaks();
  });
});
