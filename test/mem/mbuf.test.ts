import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MbufError } from '../../src/errors.js';
import { Mempool } from '../../src/mem/mempool.js';
import { H_NB_SEGS, H_POOL, H_REFCNT, MBUF_HALF_SHIFT, OlFlags, OlFlagsHi, PKTMBUF_HEADROOM, PORT_INVALID } from '../../src/mem/mbuf-layout.js';
import { assertFull, burstOf, setup } from '../helpers.js';

const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('pktmbuf alloc and reset', () => {
  it('allocates mbufs as rte_pktmbuf_alloc leaves them', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    assert.notEqual(h, 0);
    assert.equal(mb.refcnt(h), 1);
    assert.equal(mb.nbSegs(h), 1);
    assert.equal(mb.next(h), 0);
    assert.equal(mb.port(h), PORT_INVALID);
    assert.equal(mb.dataOff(h), PKTMBUF_HEADROOM);
    assert.equal(mb.dataLen(h), 0);
    assert.equal(mb.pktLen(h), 0);
    assert.equal(mb.olFlags(h), 0);
    assert.equal(mb.headroom(h), 128);
    assert.equal(mb.tailroom(h), 2048);
    mb.free(h);
    assertFull(mp);
  });

  it('clears what the previous user left when the mbuf is allocated again', () => {
    const { mp, mb } = setup({ n: 2, cacheSize: 0 });
    const burst = mp.heap.burst(2);
    assert.equal(mp.allocBulk(burst, 2), 2);
    for (const h of burst) {
      mb.write(h, bytes(60));
      mb.setPort(h, 3);
      mb.setVlanTci(h, 100);
      mb.setVlanTciOuter(h, 7);
      mb.setOlFlags(h, OlFlags.RX_VLAN | OlFlags.RX_RSS_HASH);
      mb.setOlFlagsHi(h, OlFlagsHi.TX_IPV4 | OlFlagsHi.TX_IP_CKSUM);
      mb.setPktType(h, 0x11);
      mb.setTxOffload(h, 14, 20, 8);
      mb.setTsoSegsz(h, 1400);
      mb.prepend(h, 10);
    }
    mb.freeBulk(burst, 2);
    assert.equal(mp.allocBulk(burst, 2), 2);
    for (const h of burst) {
      assert.equal(mb.dataLen(h), 0);
      assert.equal(mb.pktLen(h), 0);
      assert.equal(mb.dataOff(h), 128);
      assert.equal(mb.port(h), PORT_INVALID);
      assert.equal(mb.vlanTci(h), 0);
      assert.equal(mb.vlanTciOuter(h), 0);
      assert.equal(mb.olFlags(h), 0);
      assert.equal(mb.olFlagsHi(h), 0);
      assert.equal(mb.pktType(h), 0);
      assert.deepEqual([mb.l2Len(h), mb.l3Len(h), mb.l4Len(h), mb.tsoSegsz(h)], [0, 0, 0, 0]);
    }
    mb.freeBulk(burst, 2);
    assertFull(mp);
  });

  it('reset keeps the reference count and the buffer', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    mb.write(h, bytes(100));
    mb.refcntUpdate(h, 1);
    const buf = mb.bufAddr(h);
    mb.reset(h);
    assert.equal(mb.refcnt(h), 2);
    assert.equal(mb.bufAddr(h), buf);
    assert.equal(mb.pktLen(h), 0);
    mb.free(h);
    mb.free(h);
    assertFull(mp);
  });

  it('allocBulk fails whole and leaves the pool unchanged when short', () => {
    const { mp, mb } = setup({ n: 10 });
    const burst = mp.heap.burst(11);
    assert.equal(mp.allocBulk(burst, 11), 0);
    assert.ok(mp.full());
    assert.equal(mp.allocBulk(burst, 10), 10);
    assert.equal(mp.alloc(), 0);
    mb.freeBulk(burst, 10);
    assertFull(mp);
  });

  it('reserves the headroom the pool was created with, also on reset', () => {
    const { mp, mb } = setup({ headroom: 64, dataRoomSize: 1088 });
    const h = mp.alloc();
    assert.equal(mb.headroom(h), 64);
    assert.equal(mb.tailroom(h), 1024);
    mb.write(h, bytes(10));
    mb.reset(h);
    assert.equal(mb.dataOff(h), 64);
    mb.free(h);
    assertFull(mp);
  });

  it('refuses a headroom larger than the buffer', () => {
    assert.throws(() => setup({ headroom: 300, dataRoomSize: 256 }), /headroom 300 must be in \[0, data room size 256\]/);
  });

  it('honours the data room size: a small buffer gets a small headroom', () => {
    const { mp, mb } = setup({ dataRoomSize: 100 });
    const h = mp.alloc();
    assert.equal(mb.headroom(h), 100);
    assert.equal(mb.tailroom(h), 0);
    mb.free(h);
    assertFull(mp);
  });
});

describe('data edits follow DPDK failure rules: fail and change nothing', () => {
  it('prepend uses headroom, and past it fails', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    mb.write(h, bytes(20));
    const at = mb.prepend(h, 14);
    assert.equal(at, mb.mtod(h));
    assert.equal(mb.dataLen(h), 34);
    assert.equal(mb.pktLen(h), 34);
    assert.equal(mb.prepend(h, 115), -1, 'only 114 bytes of headroom left');
    assert.equal(mb.dataLen(h), 34);
    assert.equal(mb.headroom(h), 114);
    assert.notEqual(mb.prepend(h, 114), -1);
    assert.equal(mb.headroom(h), 0);
    mb.free(h);
    assertFull(mp);
  });

  it('append uses tailroom, and past it fails', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    const at = mb.append(h, 2000);
    assert.equal(at, mb.mtod(h));
    assert.equal(mb.append(h, 49), -1);
    assert.equal(mb.pktLen(h), 2000);
    assert.notEqual(mb.append(h, 48), -1);
    assert.equal(mb.tailroom(h), 0);
    mb.free(h);
    assertFull(mp);
  });

  it('adj removes from the front of the first segment only', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    mb.write(h, bytes(50));
    assert.equal(mb.adj(h, 51), -1);
    assert.equal(mb.dataLen(h), 50);
    const at = mb.adj(h, 14);
    assert.equal(at, mb.mtod(h));
    assert.deepEqual(mb.read(h), bytes(50).subarray(14));
    mb.free(h);
    assertFull(mp);
  });

  it('trim removes from the end of the last segment only', () => {
    const { mp, mb } = setup();
    const a = mp.alloc();
    const b = mp.alloc();
    mb.write(a, bytes(100));
    mb.write(b, bytes(30, 7));
    mb.chain(a, b);
    assert.equal(mb.trim(a, 31), -1, 'the last segment has only 30 bytes');
    assert.equal(mb.pktLen(a), 130);
    assert.equal(mb.trim(a, 30), 0);
    assert.equal(mb.pktLen(a), 100);
    assert.equal(mb.dataLen(b), 0);
    mb.free(a);
    assertFull(mp);
  });

  it('rejects negative lengths', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    mb.write(h, bytes(10));
    assert.equal(mb.prepend(h, -1), -1);
    assert.equal(mb.append(h, -1), -1);
    assert.equal(mb.adj(h, -1), -1);
    assert.equal(mb.trim(h, -1), -1);
    assert.equal(mb.pktLen(h), 10);
    mb.free(h);
    assertFull(mp);
  });
});

describe('chains', () => {
  it('pktLen spans the chain and read() returns every segment in order', () => {
    const { mp, mb } = setup();
    const segs = [mp.alloc(), mp.alloc(), mp.alloc()];
    segs.forEach((h, i) => mb.write(h, bytes(100 + i, i)));
    assert.equal(mb.chain(segs[0]!, segs[1]!), 0);
    assert.equal(mb.chain(segs[0]!, segs[2]!), 0);
    assert.equal(mb.nbSegs(segs[0]!), 3);
    assert.equal(mb.pktLen(segs[0]!), 303);
    assert.equal(mb.lastSeg(segs[0]!), segs[2]);
    assert.deepEqual(mb.read(segs[0]!), Uint8Array.from([...bytes(100, 0), ...bytes(101, 1), ...bytes(102, 2)]));
    const at = mb.append(segs[0]!, 5);
    assert.equal(at, mb.mtod(segs[2]!) + 102, 'append goes to the last segment');
    assert.equal(mb.pktLen(segs[0]!), 308);
    mb.free(segs[0]!);
    assertFull(mp);
  });

  it('refuses a chain of more than 65535 segments', () => {
    const { mp, mb } = setup();
    const a = mp.alloc();
    const b = mp.alloc();
    mb.u16[(a << MBUF_HALF_SHIFT) + H_NB_SEGS] = 0xffff; // pretend a is already at the limit
    assert.equal(mb.chain(a, b), -1);
    assert.equal(mb.next(a), 0, 'nothing changed');
    mb.u16[(a << MBUF_HALF_SHIFT) + H_NB_SEGS] = 1;
    mb.free(a);
    mb.free(b);
    assertFull(mp);
  });

  it('freeing the head frees every segment, also through freeBulk', () => {
    const { mp, mb } = setup({ n: 64, cacheSize: 8 });
    const heads = mp.heap.burst(10);
    for (let i = 0; i < 10; i++) {
      heads[i] = mp.alloc();
      for (let k = 0; k < i % 4; k++) mb.chain(heads[i]!, mp.alloc());
    }
    assert.equal(mp.inUse(), 10 + 0 + 1 + 2 + 3 + 0 + 1 + 2 + 3 + 0 + 1);
    mb.freeBulk(heads, 10);
    assertFull(mp);
  });

  it('free ignores the NULL handle', () => {
    const { mp, mb } = setup();
    mb.free(0);
    assertFull(mp);
  });
});

describe('reference counts', () => {
  it('an mbuf with two references returns to the pool on the second free', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    assert.equal(mb.refcntUpdate(h, 1), 2);
    mb.free(h);
    assert.equal(mp.inUse(), 1);
    assert.equal(mb.refcnt(h), 1);
    mb.free(h);
    assertFull(mp);
  });

  it('a double free throws naming the handle, and the pool stays consistent', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    mb.free(h);
    assert.throws(() => mb.free(h), (e: unknown) => e instanceof MbufError && e.handle === h && /freed with refcnt 0/.test(e.message));
    assertFull(mp);
  });

  it('freeBulk returns what it already released when it meets a double free', () => {
    const { mp, mb } = setup({ n: 16 });
    const burst = mp.heap.burst(3);
    mp.allocBulk(burst, 3);
    mb.free(burst[2]!);
    assert.throws(() => mb.freeBulk(burst, 3), MbufError);
    assertFull(mp);
  });

  it('refcnt underflow and overflow throw and leave the count as it was', () => {
    const { mp, mb } = setup();
    const h = mp.alloc();
    assert.throws(() => mb.refcntUpdate(h, -2), /refcnt underflow \(1 - 2\)/);
    assert.equal(mb.refcnt(h), 1);
    mb.refcntUpdate(h, 2);
    assert.throws(() => mb.refcntUpdate(h, -4), /refcnt underflow \(3 - 4\)/);
    assert.equal(mb.refcnt(h), 3);
    assert.throws(() => mb.refcntUpdate(h, 0xffff), /refcnt overflow/);
    assert.equal(mb.refcnt(h), 3);
    mb.free(h);
    mb.free(h);
    mb.free(h);
    assertFull(mp);
  });
});

describe('clone and attach (indirect mbufs)', () => {
  it('a clone shares the data; the direct buffer returns with its last reference', () => {
    const { heap, mp, mb } = setup();
    const clones = Mempool.create(heap, { name: 'clones', n: 16 });
    const m = mp.alloc();
    mb.write(m, bytes(64));
    mb.setPort(m, 2);
    mb.setHash(m, 0xdeadbeef);
    const c = mb.clone(m, clones);
    assert.notEqual(c, 0);
    assert.ok(mb.isIndirect(c));
    assert.equal(mb.directOf(c), m);
    assert.equal(mb.refcnt(m), 2);
    assert.equal(mb.mtod(c), mb.mtod(m), 'same bytes');
    assert.equal(mb.port(c), 2);
    assert.equal(mb.hash(c), 0xdeadbeef);
    assert.equal(mb.pktLen(c), 64);
    mb.u8[mb.mtod(m)] = 0xaa;
    assert.equal(mb.read(c)[0], 0xaa);
    mb.free(m);
    assert.equal(mp.inUse(), 1, 'the clone still holds the direct buffer');
    assert.deepEqual(mb.read(c).subarray(1), bytes(64).subarray(1));
    mb.free(c);
    assertFull(mp, clones);
  });

  it('a clone of a chain is a chain of indirect mbufs', () => {
    const { heap, mp, mb } = setup();
    const clones = Mempool.create(heap, { name: 'clones', n: 16 });
    const a = mp.alloc();
    const b = mp.alloc();
    mb.write(a, bytes(40));
    mb.write(b, bytes(50, 3));
    mb.chain(a, b);
    const c = mb.clone(a, clones);
    assert.equal(mb.nbSegs(c), 2);
    assert.equal(mb.pktLen(c), 90);
    assert.deepEqual(mb.read(c), mb.read(a));
    mb.free(c);
    assert.equal(mb.refcnt(a), 1);
    assert.equal(mb.refcnt(b), 1);
    mb.free(a);
    assertFull(mp, clones);
  });

  it('a clone of a clone references the original direct mbuf', () => {
    const { mp, mb } = setup();
    const m = mp.alloc();
    mb.write(m, bytes(10));
    const c1 = mb.clone(m, mp);
    const c2 = mb.clone(c1, mp);
    assert.equal(mb.directOf(c2), m);
    assert.equal(mb.refcnt(m), 3);
    mb.free(m);
    mb.free(c1);
    assert.deepEqual(mb.read(c2), bytes(10));
    mb.free(c2);
    assertFull(mp);
  });

  it('clone returns NULL and leaks nothing when the clone pool runs out mid-chain', () => {
    const { heap, mp, mb } = setup();
    const clones = Mempool.create(heap, { name: 'clones', n: 2 });
    const head = mp.alloc();
    for (let i = 0; i < 3; i++) mb.chain(head, mp.alloc());
    assert.equal(mb.clone(head, clones), 0);
    assert.equal(mb.refcnt(head), 1, 'references taken by the partial clone are dropped');
    mb.free(head);
    assertFull(mp, clones);
  });

  it('detach gives the indirect mbuf its own buffer back', () => {
    const { mp, mb } = setup();
    const m = mp.alloc();
    const mi = mp.alloc();
    const own = mb.bufAddr(mi);
    mb.write(m, bytes(30));
    mb.attach(mi, m);
    assert.equal(mb.bufAddr(mi), mb.bufAddr(m));
    mb.detach(mi);
    assert.equal(mb.bufAddr(mi), own);
    assert.ok(mb.isDirect(mi));
    assert.equal(mb.dataLen(mi), 0);
    assert.equal(mb.refcnt(m), 1);
    mb.free(mi);
    mb.free(m);
    assertFull(mp);
  });

  it('attach refuses an mbuf that is not direct or is shared', () => {
    const { mp, mb } = setup();
    const m = mp.alloc();
    const mi = mp.alloc();
    mb.refcntUpdate(mi, 1);
    assert.throws(() => mb.attach(mi, m), /attach needs a direct mbuf with refcnt 1/);
    assert.equal(mb.refcnt(m), 1, 'the direct mbuf gained no reference');
    mb.free(mi);
    mb.free(mi);
    mb.free(m);
    assertFull(mp);
  });
});

describe('freeBulk', () => {
  it('returns mbufs of several pools, interleaved, each to its own pool', () => {
    const { heap, mp, mb } = setup({ n: 300, cacheSize: 32 });
    const mp2 = Mempool.create(heap, { name: 'second', n: 300, cacheSize: 32 });
    const burst = mp.heap.burst(400);
    for (let i = 0; i < 400; i++) burst[i] = (i % 3 === 0 ? mp2 : mp).alloc();
    mb.freeBulk(burst, 400);
    assertFull(mp, mp2);
  });

  it('frees from an offset in the burst, as after a partial txBurst', () => {
    const { mp, mb } = setup();
    const burst = mp.heap.burst(32);
    mp.allocBulk(burst, 32);
    mb.freeBulk(burst, 32 - 20, 20);
    assert.equal(mp.inUse(), 20);
    mb.freeBulk(burst, 20);
    assertFull(mp);
  });

  it('names a handle that belongs to no pool', () => {
    const { mp, mb } = setup();
    const fake = burstOf(mp.heap, [mp.firstHandle + mp.size + 5000]);
    mb.u16[(fake[0]! << MBUF_HALF_SHIFT) + H_REFCNT] = 1; // looks referenced
    mb.u16[(fake[0]! << MBUF_HALF_SHIFT) + H_POOL] = 7; // pool id nobody has
    assert.throws(() => mb.freeBulk(fake, 1), /not an mbuf of any pool \(pool id 7\)/);
    assertFull(mp);
  });
});

describe('pktmbuf from bytes', () => {
  it('builds a chain of tailroom-sized (or seg-sized) segments holding the bytes, an empty packet included', () => {
    const { mp, mb } = setup();
    const data = bytes(5000, 7);
    const whole = mb.fromBytes(mp, data);
    assert.equal(mb.nbSegs(whole), 3);
    assert.equal(mb.pktLen(whole), 5000);
    assert.deepEqual(mb.read(whole), data);
    const small = mb.fromBytes(mp, data, 400);
    assert.equal(mb.nbSegs(small), 13);
    assert.equal(mb.dataLen(small), 400);
    assert.deepEqual(mb.read(small), data);
    const empty = mb.fromBytes(mp, new Uint8Array(0));
    assert.equal(mb.nbSegs(empty), 1);
    assert.equal(mb.pktLen(empty), 0);
    mb.free(whole);
    mb.free(small);
    mb.free(empty);
    assertFull(mp);
  });

  it('returns 0 and keeps nothing when the pool runs dry half way or the room is none', () => {
    const { mp, mb } = setup({ n: 2, cacheSize: 0 });
    assert.equal(mb.fromBytes(mp, bytes(5000)), 0);
    assertFull(mp);
    assert.equal(mb.fromBytes(mp, bytes(100), 0), 0);
    assertFull(mp);
  });
});
