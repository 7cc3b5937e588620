/**
 * Guard pages around a mapped guest window: a wasm kernel that reaches past
 * the window (here made to by a memory table that claims more than was
 * mapped, the kind of bug a bounds check could have) traps on the PROT_NONE
 * page instead of writing into the heap beside it. The vhost queue catches
 * the trap: one line, the ring stopped, the link down, the process alive,
 * every mbuf back in its pool.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { MapRefusedError } from '../../src/native/native.js';
import { mapWindow, memfdCreate, pageSize, unmapWindow } from '../../src/native/memory.js';
import { closeFd } from '../../src/native/watch.js';
import { setVhostLog } from '../../src/vhost/log.js';
import { Req } from '../../src/vhost/protocol.js';
import { VhostDev } from '../../src/vhost/vhost-dev.js';
import { VhostQueue } from '../../src/vhost/vhost-queue.js';
import { Feature, bit } from '../../src/virtio/virtio-net.js';
import { VRING_DESC_F_WRITE, vringSizes } from '../../src/virtio/vring.js';
import { assertFull } from '../helpers.js';
import { noShim } from '../native/util.js';

const GPA = 0x4000_0000;
const UA = 0x7f00_0000_0000;
const WINDOW = 64 * 1024;

describe('guard pages around a mapped guest window', { skip: noShim }, () => {
  for (const qp of [0, 1]) {
    it(`a wasm kernel writing past the window traps on queue pair ${qp}; reported in one line, ring stopped, link down, process alive`, () => {
      const page = pageSize();
      const heap = Heap.create({ size: 16 << 20, datapath: 'wasm' });
      const pool = Mempool.create(heap, { name: 'host', n: 256, cacheSize: 0 });
      const mb = new Mbufs(heap);
      const area = heap.reserve(WINDOW + 2 * page, page, 'guest window with guards');
      const off = area + page;
      const fd = memfdCreate('guest', WINDOW);
      mapWindow(heap.memory!, { offset: off, length: WINDOW, fd, guard: page });
      // Guards may not overlap another window or its guards.
      assert.throws(() => mapWindow(heap.memory!, { offset: off + WINDOW + page, length: page, fd, guard: page }), MapRefusedError);
      const lines: string[] = [];
      const prev = setVhostLog((l) => lines.push(l));
      try {
        const dev = new VhostDev(heap, 'net_vhost0', { queues: 2 });
        dev.handle({ req: Req.SET_OWNER });
        dev.handle({ req: Req.SET_FEATURES, features: bit(Feature.F_VERSION_1) });
        // The bug under test: a table that claims the guard page above the window as guest memory.
        dev.handle({ req: Req.SET_MEM_TABLE, regions: [{ gpa: GPA, size: WINDOW + page, userAddr: UA, heapOffset: off }] });
        const s = vringSizes(16);
        // Every vring of both pairs set up; the link is the first pair's.
        for (const index of [0, 1, 2, 3]) {
          const at = index * 4096;
          dev.handle({ req: Req.SET_VRING_NUM, index, num: 16 });
          dev.handle({ req: Req.SET_VRING_BASE, index, num: 0 });
          dev.handle({ req: Req.SET_VRING_ADDR, index, desc: UA + at, avail: UA + at + s.desc, used: UA + at + 2048 });
          dev.handle({ req: Req.SET_VRING_KICK, index, notifier: -1 });
          dev.handle({ req: Req.SET_VRING_ENABLE, index, enable: true });
        }
        assert.ok(dev.ready(), 'link up before');
        // The guest's one rx buffer: device-writable, at the window's end, so the packet lands on the guard page.
        const v = heap.view;
        const ring = off + 2 * qp * 4096; // queue pair qp's rx vring
        v.setUint32(ring, (GPA + WINDOW) % 2 ** 32, true);
        v.setUint32(ring + 4, Math.floor((GPA + WINDOW) / 2 ** 32), true);
        v.setUint32(ring + 8, 2048, true);
        v.setUint16(ring + 12, VRING_DESC_F_WRITE, true);
        v.setUint16(ring + s.desc + 4, 0, true); // avail ring[0] = descriptor 0
        v.setUint16(ring + s.desc + 2, 1, true); // avail idx = 1
        const q = new VhostQueue(heap, dev.queueDesc(2 * qp, 0));
        const b = heap.burst(1);
        b[0] = pool.alloc();
        mb.append(b[0]!, 64);
        assert.equal(q.enqueueBurst(b, 1), 0, 'nothing enqueued');
        mb.freeBulk(b, 1);
        assert.equal(lines.length, 1, `one line:\n${lines.join('\n')}`);
        assert.match(lines[0]!, /trapped \(.*out of bounds.*\); ring stopped, link down/);
        assert.ok(!dev.ready(), 'link down');
        // The queue stays stopped (no second trap, no second line) until the ring is set up again.
        b[0] = pool.alloc();
        assert.equal(q.enqueueBurst(b, 1), 0);
        mb.freeBulk(b, 1);
        assert.equal(lines.length, 1);
      } finally {
        setVhostLog(prev);
        unmapWindow(heap.memory!, { offset: off, length: WINDOW });
        closeFd(fd);
      }
      // The guard pages are heap again: readable and writable from TypeScript.
      heap.u8[off - 1] = 1;
      heap.u8[off + WINDOW] = 1;
      assertFull(pool);
    });
  }
});
