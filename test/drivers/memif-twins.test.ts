import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memifLoopback } from '../../src/drivers/memif/loopback.js';
import { memifOps } from '../../src/drivers/memif/memif.twin.js';
import { attachQueueRing, newQueueBlock, writeRegionTable } from '../../src/drivers/memif/queue-block.js';
import {
  MEMIF_COOKIE,
  MEMIF_DESC_SIZE,
  MEMIF_RING_HDR_SIZE,
  MDESC_LENGTH,
  MDESC_OFFSET,
  MQ_D_BAD_DESC,
  MQ_NO_FD,
  MQ_W_DONE,
  MQ_W_NB_DONE,
  MQ_W_SLOTS,
  MQ_W_RING,
  MQ_W_STATS,
  MRING_COOKIE,
  MRING_FLAGS,
  MRING_HEAD,
} from '../../src/drivers/memif/memif-layout.js';
import { RXQ_NOMBUF } from '../../src/ethdev/stats-layout.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { packet, payload } from './memif-util.js';

const LOG2 = 4;
const BSIZE = 256;

/** One heap with the loopback region (plain heap memory, no window) and its four queues. No native shim needed. */
function rig(datapath: 'wasm' | 'ts', dataRoomSize?: number) {
  const heap = Heap.create({ size: 8 << 20, datapath });
  const mp = Mempool.create(heap, { name: 'p', n: 1024, cacheSize: 32, ...(dataRoomSize ? { dataRoomSize } : {}) });
  const mb = new Mbufs(heap);
  const lb = memifLoopback(heap, mp, { log2: LOG2, bsize: BSIZE, port: 3 });
  return { heap, mp, mb, lb, q: lb.q, rxOps: memifOps(heap, mb, mp), txOps: memifOps(heap, mb, null), burst: heap.burst(32), lc: heap.lcore };
}

describe('net_memif kernels and twins', () => {
  it('leave two heaps byte for byte equal after the same random traffic, chains and bad descriptors included', () => {
    const a = rig('wasm');
    const b = rig('ts');
    assert.ok(a.heap.kernels && !b.heap.kernels);
    let seed = 12345;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    let delivered = 0;
    for (let step = 0; step < 400; step++) {
      const op = rnd(5);
      const tx = op < 2;
      const c2s = rnd(2) === 0;
      const n = 1 + rnd(20);
      const lens = Array.from({ length: n }, () => rnd(1200));
      const corrupt = rnd(40) === 0 ? rnd(1 << LOG2) : -1;
      const results = [a, b].map((r) => {
        if (corrupt >= 0) {
          // The peer writes a descriptor pointing past the region.
          const ring = r.lb.rings[c2s ? 0 : 1];
          r.heap.u32[(ring + MEMIF_RING_HDR_SIZE + corrupt * MEMIF_DESC_SIZE + MDESC_OFFSET) >>> 2] = r.lb.size - 8;
        }
        if (tx) {
          for (let i = 0; i < n; i++) r.burst[i] = packet(r.mb, r.mp, payload(step * 100 + i, lens[i]!), 400);
          const sent = r.txOps.tx(c2s ? r.q.cliTx : r.q.srvTx, r.lc, r.burst.byteOffset, n);
          r.mb.freeBulk(r.burst, n);
          return sent;
        }
        const got = r.rxOps.rx(c2s ? r.q.srvRx : r.q.cliRx, r.lc, r.burst.byteOffset, n);
        r.mb.freeBulk(r.burst, got);
        return got;
      });
      assert.equal(results[0], results[1], `step ${step}: kernel and twin agree`);
      if (!tx) delivered += results[0]!;
      assert.ok(Buffer.from(a.heap.buffer).equals(Buffer.from(b.heap.buffer)), `step ${step}: heaps differ`);
    }
    assert.ok(delivered > 50, `traffic flowed (${delivered} packets)`);
    a.mp.checkLeaks();
    b.mp.checkLeaks();
  });

  it("write a client's tx into the buffers it laid out, whatever the server rewrote into the C2S descriptors", () => {
    for (const datapath of ['wasm', 'ts'] as const) {
      const r = rig(datapath);
      const ring = r.lb.rings[0];
      const desc = (slot: number, field: number) => (ring + MEMIF_RING_HDR_SIZE + slot * MEMIF_DESC_SIZE + field) >>> 2;
      const own = (slot: number) => r.heap.u32[desc(slot, MDESC_OFFSET)]!;
      const buf0 = r.lb.base + own(0);
      const buf5 = r.lb.base + own(5);
      // A server that points slot 0 at slot 5's buffer and slot 1 past the region.
      r.heap.u32[desc(0, MDESC_OFFSET)] = own(5);
      r.heap.u32[desc(1, MDESC_OFFSET)] = r.lb.size - 8;
      const bytes = [payload(1, 200), payload(2, 250)];
      bytes.forEach((b, i) => (r.burst[i] = packet(r.mb, r.mp, b, 400)));
      assert.equal(r.txOps.tx(r.q.cliTx, r.lc, r.burst.byteOffset, 2), 2, `${datapath}: both sent`);
      r.mb.freeBulk(r.burst, 2);
      assert.ok(Buffer.from(r.heap.u8.subarray(buf0, buf0 + 200)).equals(Buffer.from(bytes[0]!)), `${datapath}: slot 0's own buffer holds the packet`);
      assert.ok(r.heap.u8.subarray(buf5, buf5 + BSIZE).every((x) => x === 0), `${datapath}: slot 5's buffer untouched`);
      assert.equal(r.heap.f64[(r.q.cliTx >>> 3) + MQ_D_BAD_DESC], 0, `${datapath}: no bad descriptor counted`);
      assert.equal(r.heap.u32[desc(1, MDESC_LENGTH)], 250, `${datapath}: slot 1's length written`);
      r.mp.checkLeaks();
    }
  });

  it('deliver a chain whose last slot the peer publishes after rx has seen its first ones', () => {
    for (const datapath of ['wasm', 'ts'] as const) {
      const r = rig(datapath);
      const head = (r.lb.rings[0] + MRING_HEAD) >>> 1;
      const bytes = [payload(7, 100), payload(8, 2 * BSIZE + 88)]; // one slot, then a chain of three
      bytes.forEach((b, i) => (r.burst[i] = packet(r.mb, r.mp, b, 400)));
      assert.equal(r.txOps.tx(r.q.cliTx, r.lc, r.burst.byteOffset, 2), 2);
      r.mb.freeBulk(r.burst, 2);
      r.heap.u16[head] = 3; // the chain's last slot not yet published
      assert.equal(r.rxOps.rx(r.q.srvRx, r.lc, r.burst.byteOffset, 1), 1, `${datapath}: the one-slot packet`);
      r.mb.freeBulk(r.burst, 1);
      assert.equal(r.rxOps.rx(r.q.srvRx, r.lc, r.burst.byteOffset, 1), 0, `${datapath}: the chain waits for its last slot`);
      r.heap.u16[head] = 4;
      assert.equal(r.rxOps.rx(r.q.srvRx, r.lc, r.burst.byteOffset, 1), 1, `${datapath}: the chain, once published`);
      assert.ok(Buffer.from(r.mb.read(r.burst[0]!)).equals(Buffer.from(bytes[1]!)), `${datapath}: its bytes`);
      r.mb.freeBulk(r.burst, 1);
      r.mp.checkLeaks();
    }
  });

  it('agree when rx runs short of mbufs for a burst or in the middle of a chain, and lose none', () => {
    // 512-byte mbufs: a packet of up to 1200 B is a chain of up to three. Before each
    // rx every mbuf but a few is held elsewhere, so the burst's heads cannot all be
    // had at once and a chain can find the pool empty half way.
    const a = rig('wasm', 128 + 512);
    const b = rig('ts', 128 + 512);
    let seed = 777;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    const hold = [a, b].map((r) => r.heap.burst(1024));
    let delivered = 0;
    let sent = 0;
    for (let step = 0; step < 300; step++) {
      const n = 1 + rnd(8);
      const lens = Array.from({ length: n }, () => 60 + rnd(1140));
      const left = rnd(8);
      const want = 1 + rnd(20);
      const results = [a, b].map((r, i) => {
        for (let j = 0; j < n; j++) r.burst[j] = packet(r.mb, r.mp, payload(step * 100 + j, lens[j]!), 400);
        const took = r.txOps.tx(r.q.cliTx, r.lc, r.burst.byteOffset, n);
        r.mb.freeBulk(r.burst, n);
        const h = hold[i]!;
        let held = 0;
        while (r.mp.allocBulk(h, 1, held) === 1) held++;
        const back = Math.min(left, held);
        r.mb.freeBulk(h, back, held - back);
        held -= back;
        const got = r.rxOps.rx(r.q.srvRx, r.lc, r.burst.byteOffset, want);
        for (let j = 0; j < got; j++) assert.equal(r.mb.pktLen(r.burst[j]!) > 0, true);
        r.mb.freeBulk(r.burst, got);
        r.mb.freeBulk(h, held);
        return [took, got];
      });
      assert.deepEqual(results[0], results[1], `step ${step}: kernel and twin agree`);
      sent += results[0]![0]!;
      delivered += results[0]![1]!;
      assert.ok(Buffer.from(a.heap.buffer).equals(Buffer.from(b.heap.buffer)), `step ${step}: heaps differ`);
    }
    const nombuf = a.heap.f64[(a.heap.u32[(a.q.srvRx >>> 2) + MQ_W_STATS]! >>> 3) + RXQ_NOMBUF]!;
    assert.ok(nombuf > 0, 'rx found the pool short');
    // With the pool whole again the ring drains: every packet sent arrives once.
    for (let got = 1; got > 0; ) {
      got = a.rxOps.rx(a.q.srvRx, a.lc, a.burst.byteOffset, 32);
      a.mb.freeBulk(a.burst, got);
      delivered += got;
    }
    assert.ok(delivered > 100, `traffic flowed (${delivered} packets)`);
    assert.equal(delivered, sent, 'every packet the ring took arrived');
    a.mp.checkLeaks();
    b.mp.checkLeaks();
  });
});

/**
 * Zero-copy: one heap is both sides. Region 0 is the heap itself (base 0, as
 * a zero-copy client offers its heap's prefix); a C2S and an S2C ring in it;
 * the client's queues zero-copy (tx hands mbufs to C2S, rx posts mbufs on
 * S2C), the server's copy mode over the same region table.
 */
function zcRig(datapath: 'wasm' | 'ts') {
  const heap = Heap.create({ size: 8 << 20, datapath });
  const mp = Mempool.create(heap, { name: 'p', n: 1024, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const hdr = MEMIF_RING_HDR_SIZE + (MEMIF_DESC_SIZE << LOG2);
  const rings = [heap.reserve(hdr, 64), heap.reserve(hdr, 64)];
  const table = heap.reserve(64, 64);
  const limit = heap.size - heap.free();
  writeRegionTable(heap, table, [{ base: 0, size: limit }]);
  rings.forEach((ring, r) => {
    heap.u32[(ring + MRING_COOKIE) >>> 2] = MEMIF_COOKIE;
    heap.u16[(ring + MRING_FLAGS) >>> 1] = r;
  });
  // Blocks made as the driver makes them.
  const queue = (ring: number, c2s: boolean, pool: Mempool | null, zc: boolean) => {
    const q = newQueueBlock(heap, { name: 'zc rig', stats: heap.reserve(64, 64), pool, port: 3, c2s, regions: table, zeroCopyLog2: zc ? LOG2 : undefined });
    attachQueueRing(heap, q, ring, LOG2, BSIZE, MQ_NO_FD);
    return q;
  };
  const q = { cliTx: queue(rings[0]!, true, null, true), srvRx: queue(rings[0]!, true, mp, false), srvTx: queue(rings[1]!, false, null, false), cliRx: queue(rings[1]!, false, mp, true) };
  return { heap, mp, mb, q, rxOps: memifOps(heap, mb, mp), txOps: memifOps(heap, mb, null), burst: heap.burst(32), lc: heap.lcore };
}

/** What a zero-copy client holds when it disconnects: every handle in the slots and in `done`, freed. */
function returnInFlight(r: ReturnType<typeof zcRig>): void {
  for (const q of [r.q.cliTx, r.q.cliRx]) {
    const w = q >>> 2;
    const slots = r.heap.burstAt(r.heap.u32[w + MQ_W_SLOTS]!, 1 << LOG2);
    r.mb.freeBulk(slots, slots.length);
    slots.fill(0);
  }
}

describe('net_memif zero-copy kernels and twins', () => {
  it('leave two heaps byte for byte equal after the same random traffic both ways, chains and a lying server included; pools full after', () => {
    const a = zcRig('wasm');
    const b = zcRig('ts');
    assert.ok(a.heap.kernels && !b.heap.kernels);
    for (const r of [a, b]) assert.equal(r.rxOps.refillZc(r.q.cliRx, r.lc), 1 << LOG2, 'the whole S2C ring is posted at connect');
    let seed = 777;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % n;
    let up = 0;
    let down = 0;
    for (let step = 0; step < 400; step++) {
      const op = rnd(4);
      const n = 1 + rnd(20);
      const lens = Array.from({ length: n }, () => 1 + rnd(1200));
      const lie = rnd(60) === 0 ? rnd(1 << LOG2) : -1;
      const results = [a, b].map((r) => {
        if (lie >= 0) {
          // The server writes a length past the posted buffer on the S2C ring.
          const ring = r.heap.u32[(r.q.cliRx >>> 2) + MQ_W_RING]!;
          r.heap.u32[(ring + MEMIF_RING_HDR_SIZE + lie * MEMIF_DESC_SIZE + MDESC_LENGTH) >>> 2] = 1 << 20;
        }
        let got: number;
        if (op === 0) {
          // Client tx, zero-copy: 400-byte segments make chains; the consumed ones come back in done.
          for (let i = 0; i < n; i++) r.burst[i] = packet(r.mb, r.mp, payload(step * 100 + i, lens[i]!), 400);
          got = r.txOps.txZc(r.q.cliTx, r.lc, r.burst.byteOffset, n);
          r.mb.freeBulk(r.burst, n - got, got);
          const w = r.q.cliTx >>> 2;
          r.mb.freeBulk(r.heap.burstAt(r.heap.u32[w + MQ_W_DONE]!, 2 << LOG2), r.heap.u32[w + MQ_W_NB_DONE]!);
        } else if (op === 1) {
          got = r.rxOps.rx(r.q.srvRx, r.lc, r.burst.byteOffset, n);
          r.mb.freeBulk(r.burst, got);
        } else if (op === 2) {
          for (let i = 0; i < n; i++) r.burst[i] = packet(r.mb, r.mp, payload(step * 100 + i, lens[i]!), 400);
          got = r.txOps.tx(r.q.srvTx, r.lc, r.burst.byteOffset, n);
          r.mb.freeBulk(r.burst, n);
        } else {
          got = r.rxOps.rxZc(r.q.cliRx, r.lc, r.burst.byteOffset, n);
          r.mb.freeBulk(r.burst, got);
        }
        return got;
      });
      assert.equal(results[0], results[1], `step ${step}: kernel and twin agree`);
      if (op === 1) up += results[0]!;
      if (op === 3) down += results[0]!;
      assert.ok(Buffer.from(a.heap.buffer).equals(Buffer.from(b.heap.buffer)), `step ${step} (op ${op}): heaps differ`);
    }
    assert.ok(up > 50 && down > 50, `traffic flowed both ways (${up} up, ${down} down)`);
    for (const r of [a, b]) {
      returnInFlight(r);
      r.mp.checkLeaks();
    }
  });
});
