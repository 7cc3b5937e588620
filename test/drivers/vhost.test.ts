import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { ArgError, VhostError } from '../../src/errors.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Feature, VRING_AVAIL_F_NO_INTERRUPT, bit, has } from '../../src/virtio/virtio-net.js';
import { connect, listen } from '../../src/vhost/in-process.js';
import { VhostDev } from '../../src/vhost/vhost-dev.js';
import { Req } from '../../src/vhost/protocol.js';
import { PackedRxQueue, PackedTxQueue } from '../../src/drivers/virtio/virtio-packed.js';
import type { RxQueue, TxQueue } from '../../src/ethdev/driver.js';
import { PACKED_EVENT_FLAGS, RING_EVENT_FLAGS_DISABLE, RING_EVENT_FLAGS_ENABLE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from '../../src/virtio/packed.js';
import { assertFull, portUp } from '../helpers.js';

/** Packet sizes of the issue: 60 to 9000 B, chained above one mbuf. */
const SIZES = [60, 64, 65, 127, 128, 255, 256, 511, 1024, 1400, 1514, 1518, 2033, 2048, 2049, 4000, 8191, 9000];

function setup(vhostArgs = '', virtioArgs = '', datapath: 'wasm' | 'ts' = 'wasm') {
  const heap = Heap.create({ size: 64 << 20, datapath });
  const hostPool = Mempool.create(heap, { name: 'host', n: 4096, cacheSize: 64 });
  const guestPool = Mempool.create(heap, { name: 'guest', n: 4096, cacheSize: 64 });
  const ethdev = new Ethdev(heap, drivers);
  const mb = new Mbufs(heap);
  const host = ethdev.create(`net_vhost0,iface=/tmp/dpkit-test.sock${vhostArgs}`);
  const guest = ethdev.create(`virtio_user0,path=/tmp/dpkit-test.sock${virtioArgs}`);
  assert.equal(ethdev.linkUp(host), false, 'no link before the guest sets its rings up');
  ethdev.configure(host, 1, 1);
  ethdev.rxQueueSetup(host, 0, 0, hostPool);
  ethdev.txQueueSetup(host, 0, 0);
  ethdev.start(host);
  ethdev.configure(guest, 1, 1);
  ethdev.rxQueueSetup(guest, 0, 0, guestPool);
  ethdev.txQueueSetup(guest, 0, 0);
  ethdev.start(guest);
  assert.equal(ethdev.linkUp(host), true, 'link up once the guest is ready');
  const close = () => {
    ethdev.stop(guest);
    ethdev.close(guest);
    ethdev.stop(host);
    ethdev.close(host);
    assertFull(hostPool, guestPool);
  };
  return { heap, hostPool, guestPool, ethdev, mb, host, guest, close };
}

/** A packet of `len` bytes whose content names it (`seq`), chained in segments of at most `seg` bytes. */
function makePacket(mb: Mbufs, mp: Mempool, seq: number, len: number, seg = 2048): number {
  const bytes = content(seq, len);
  let head = 0;
  for (let off = 0; off < len; off += seg) {
    const m = mp.alloc();
    assert.notEqual(m, 0, 'pool has room for the test packet');
    assert.ok(mb.write(m, bytes.subarray(off, Math.min(len, off + seg))));
    if (head === 0) head = m;
    else assert.equal(mb.chain(head, m), 0);
  }
  return head;
}

function content(seq: number, len: number): Uint8Array {
  const b = new Uint8Array(len);
  for (let i = 0; i < len; i++) b[i] = (seq * 7 + i * 13 + (i >> 8)) & 0xff;
  b[0] = seq & 0xff;
  b[1] = (seq >> 8) & 0xff;
  return b;
}

/**
 * Sends `count` packets of `sizes` (cycled) from port `from` to port `to`,
 * polling both, and checks every byte of every packet arrives once, in order.
 */
function transfer(t: ReturnType<typeof setup>, from: number, to: number, pool: Mempool, count: number, sizes: number[], burst = 32): void {
  const { heap, ethdev, mb } = t;
  const tx = heap.burst(burst);
  const rx = heap.burst(64);
  let sent = 0;
  let recv = 0;
  let pending = 0; // built but not yet taken by tx
  for (let spins = 0; recv < count; spins++) {
    assert.ok(spins < count * 50 + 1000, `stalled: ${sent} sent, ${recv} received of ${count}`);
    while (pending < burst && sent + pending < count) {
      const seq = sent + pending;
      tx[pending++] = makePacket(mb, pool, seq, sizes[seq % sizes.length]!);
    }
    if (pending > 0) {
      const n = ethdev.txBurst(from, 0, tx, pending);
      tx.copyWithin(0, n, pending);
      pending -= n;
      sent += n;
    }
    const got = ethdev.rxBurst(to, 0, rx, 64);
    for (let i = 0; i < got; i++) {
      const h = rx[i]!;
      const want = content(recv, sizes[recv % sizes.length]!);
      const have = mb.read(h);
      assert.equal(have.length, want.length, `packet ${recv}: length`);
      assert.ok(Buffer.compare(Buffer.from(have), Buffer.from(want)) === 0, `packet ${recv}: bytes differ`);
      assert.equal(mb.port(h), to);
      recv++;
    }
    if (got > 0) mb.freeBulk(rx, got);
  }
  assert.equal(recv, count);
}

describe('vhost and virtio_user, in process', () => {
  for (const [label, vargs] of [
    ['mergeable rx, indirect tx', ''],
    ['no MRG_RXBUF (chained rx buffers), no INDIRECT', ',mrg_rxbuf=0,indirect=0,mtu=9000'],
    ['no EVENT_IDX, INDIRECT only', ',event_idx=0,mrg_rxbuf=0,mtu=9000'],
    ['no IN_ORDER (tx descriptors through the free list)', ',in_order=0'],
    ['packed rings, mergeable rx, IN_ORDER', ',packed_vq=1'],
    ['packed rings, no MRG_RXBUF (chained rx buffers)', ',packed_vq=1,mrg_rxbuf=0,mtu=9000'],
    ['packed rings, no IN_ORDER (buffer ids through the free list)', ',packed_vq=1,in_order=0'],
    ['packed rings, no INDIRECT (consecutive tx chains)', ',packed_vq=1,indirect=0'],
  ] as const) {
    const packed = vargs.includes('packed_vq=1');
    for (const datapath of packed ? (['wasm', 'ts'] as const) : (['wasm'] as const)) {
      const dp = datapath === 'ts' ? ', TypeScript datapath' : '';
      it(`host txonly -> guest rxonly delivers every byte of 60..9000 B packets (${label}${dp})`, () => {
        const t = setup('', vargs, datapath);
        assert.equal(t.ethdev.rxQueue(t.guest, 0) instanceof PackedRxQueue, packed, 'the ring kind asked for');
        transfer(t, t.host, t.guest, t.hostPool, 3000, SIZES);
        t.close();
      });
      it(`guest txonly -> host rxonly delivers every byte of 60..9000 B packets (${label}${dp})`, () => {
        const t = setup('', vargs, datapath);
        assert.equal(t.ethdev.txQueue(t.guest, 0) instanceof PackedTxQueue, packed, 'the ring kind asked for');
        transfer(t, t.guest, t.host, t.guestPool, 3000, SIZES);
        t.close();
      });
    }
  }

  for (const indirect of [true, false]) {
    it(`packed rings ${indirect ? 'with' : 'without'} INDIRECT: a chained packet goes out as ${indirect ? "one descriptor naming a table of packed descriptors" : 'consecutive descriptors'}, and arrives whole`, () => {
      const t = setup('', `,packed_vq=1${indirect ? '' : ',indirect=0'}`);
      const txq = t.ethdev.txQueue(t.guest, 0) as PackedTxQueue;
      const d = txq.descriptor();
      assert.equal(d.indirect, indirect, 'negotiated as asked');
      const b = t.heap.burst(1);
      b[0] = makePacket(t.mb, t.guestPool, 7, 5000); // three segments, the header pushed into the first
      assert.equal(t.ethdev.txBurst(t.guest, 0, b, 1), 1);
      const head = d.ring.desc;
      const flags = t.heap.u16[(head + 14) >>> 1]!;
      if (indirect) {
        assert.equal(flags & 4, 4, 'VRING_DESC_F_INDIRECT on the one ring descriptor');
        assert.equal(t.heap.u32[(head + 8) >>> 2], 3 * 16, 'a table of three packed descriptors');
      } else {
        assert.equal(flags & 4, 0);
        assert.equal(flags & 1, 1, 'VRING_DESC_F_NEXT: the chain goes on in the ring');
      }
      const rx = t.heap.burst(32);
      let got = 0;
      for (let i = 0; i < 100 && got === 0; i++) got = t.ethdev.rxBurst(t.host, 0, rx, 32);
      assert.equal(got, 1);
      assert.equal(t.mb.pktLen(rx[0]!), 5000);
      assert.ok(Buffer.from(t.mb.read(rx[0]!)).equals(Buffer.from(content(7, 5000))), 'every byte');
      t.mb.freeBulk(rx, 1);
      t.close();
    });
  }

  it('packed rings: a stop and start of the guest resumes where the backend stopped, both ways, with nothing lost', () => {
    const t = setup('', ',packed_vq=1');
    transfer(t, t.host, t.guest, t.hostPool, 700, SIZES);
    transfer(t, t.guest, t.host, t.guestPool, 700, SIZES);
    t.ethdev.stop(t.guest);
    assert.equal(t.ethdev.linkUp(t.host), false, 'the backend lost the rings');
    t.ethdev.start(t.guest);
    assert.equal(t.ethdev.linkUp(t.host), true);
    transfer(t, t.host, t.guest, t.hostPool, 700, SIZES);
    transfer(t, t.guest, t.host, t.guestPool, 700, SIZES);
    assert.equal(t.ethdev.xstats(t.guest)['virtio_bad_used'], 0);
    t.close();
  });

  it('negotiates what both sides offer: the backend and the guest each withhold what they are told to', () => {
    const heap = Heap.create({ size: 16 << 20 });
    const pool = Mempool.create(heap, { name: 'guest', n: 1024 });
    const dev = new VhostDev(heap, 'test_backend', { queues: 1, disable: bit(Feature.NET_F_MRG_RXBUF) });
    listen(heap, '/negotiate', dev, 'test_backend');
    const ethdev = new Ethdev(heap, drivers);
    const guest = portUp(ethdev, pool, ethdev.create('virtio_user0,path=/negotiate,in_order=0'));
    const f = dev.negotiated;
    assert.ok(has(f, Feature.F_VERSION_1) && has(f, Feature.RING_F_INDIRECT_DESC) && has(f, Feature.RING_F_EVENT_IDX), 'what both offer');
    assert.ok(!has(f, Feature.NET_F_MRG_RXBUF), 'withheld by the backend');
    assert.ok(!has(f, Feature.F_IN_ORDER), 'withheld by the guest');
    assert.ok(dev.ready(), 'rings set up with what was agreed');
    ethdev.stop(guest);
    ethdev.close(guest);
    assertFull(pool);
  });

  it('keeps going over many ring wrap-arounds in both directions on the TypeScript datapath too', () => {
    for (const dp of ['wasm', 'ts'] as const) {
      const t = setup('', dp === 'ts' ? ',queue_size=64,in_order=0' : ',queue_size=64', dp);
      // 64-entry rings, 70 000 packets: the 16-bit indices wrap, and the rings wrap ~1000 times.
      transfer(t, t.host, t.guest, t.hostPool, 70_000, [60, 64, 1518], 32);
      transfer(t, t.guest, t.host, t.guestPool, 70_000, [60, 64, 1518], 32);
      t.close();
    }
  });

  /** What net_stats=1 counts for packets `0..count` of `sizes` (transfer's): DPDK's size bins, multicast, broadcast. */
  function expectedPktStats(count: number, sizes: number[]): number[] {
    const e = new Array<number>(10).fill(0);
    for (let seq = 0; seq < count; seq++) {
      const len = sizes[seq % sizes.length]!;
      e[len >= 1024 ? 6 + (len > 1518 ? 1 : 0) : len <= 64 ? len >> 6 : 32 - Math.clz32(len) - 5]!++;
      const b = content(seq, len);
      if (b[0]! & 1) e[b.subarray(0, 6).every((x) => x === 0xff) ? 9 : 8]!++;
    }
    return e;
  }
  const PKT_STAT_NAMES = ['undersize', 'size_64', 'size_65_to_127', 'size_128_to_255', 'size_256_to_511', 'size_512_to_1023', 'size_1024_to_1518', 'size_1519_to_max', 'multicast', 'broadcast'];

  for (const datapath of ['wasm', 'ts'] as const) {
    it(`net_stats=1 counts every packet by size, multicast and broadcast, as DPDK's vhost and virtio do (${datapath})`, () => {
      const t = setup(',net_stats=1', ',net_stats=1', datapath);
      const sizes = [60, 64, 65, 200, 1518, 2049];
      transfer(t, t.guest, t.host, t.guestPool, 600, sizes);
      transfer(t, t.host, t.guest, t.hostPool, 300, sizes);
      const want = (n: number) => expectedPktStats(n, sizes);
      const got = (x: Record<string, number>, q: string) => PKT_STAT_NAMES.map((k) => x[`${q}_${k}_packets`]);
      const hx = t.ethdev.xstats(t.host);
      const gx = t.ethdev.xstats(t.guest);
      assert.deepEqual(got(gx, 'tx_q0'), want(600), 'guest tx');
      assert.deepEqual(got(hx, 'rx_q0'), want(600), 'host rx');
      assert.deepEqual(got(hx, 'tx_q0'), want(300), 'host tx');
      assert.deepEqual(got(gx, 'rx_q0'), want(300), 'guest rx');
      assert.ok(want(600)[8]! > 0, 'the test packets include multicast ones');
      t.close();
    });
  }

  it('without net_stats keeps no per-packet counters, as before', () => {
    const t = setup();
    transfer(t, t.guest, t.host, t.guestPool, 100, [64]);
    assert.equal(t.ethdev.xstats(t.host).rx_q0_size_64_packets, undefined);
    assert.equal(t.ethdev.xstats(t.guest).tx_q0_size_64_packets, undefined);
    t.close();
  });

  it('refuses a net_stats value that is not 0 or 1, naming it', () => {
    const heap = Heap.create({ size: 64 << 20 });
    const ethdev = new Ethdev(heap, drivers);
    assert.throws(() => ethdev.create('net_vhost0,iface=/tmp/dpkit-test-ns.sock,net_stats=2'), (e: unknown) => e instanceof ArgError && /net_stats/.test(e.message));
    assert.throws(() => ethdev.create('virtio_user0,path=/tmp/dpkit-test-ns.sock,net_stats=yes'), (e: unknown) => e instanceof ArgError && /net_stats/.test(e.message));
  });

  it('polling on both sides costs no notification', () => {
    const t = setup();
    transfer(t, t.host, t.guest, t.hostPool, 5000, [64]);
    transfer(t, t.guest, t.host, t.guestPool, 5000, [64]);
    const hx = t.ethdev.xstats(t.host);
    const gx = t.ethdev.xstats(t.guest);
    assert.equal(hx.guest_notifications, 0);
    assert.equal(gx.virtio_kicks, 0);
    t.close();
  });

  for (const [label, vargs, datapath] of [
    ['mergeable rx', '', 'wasm'],
    ['mergeable rx, TypeScript datapath', '', 'ts'],
    ['chained rx buffers', ',mrg_rxbuf=0,mtu=9000', 'wasm'],
  ] as const) {
    it(`the guest reposts rx buffers in the order the host used them, so an in-order host finds the avail ring as it was a lap ago (${label})`, () => {
      const t = setup('', vargs, datapath);
      transfer(t, t.host, t.guest, t.hostPool, 3000, [64, 1518], 24);
      const { heap, ethdev } = t;
      const ring = (ethdev.rxQueue(t.guest, 0).descriptor() as unknown as { ring: { avail: number; num: number } }).ring;
      const idx = Atomics.load(heap.u16, (ring.avail + 2) >>> 1);
      assert.ok(idx > ring.num, `the avail index (${idx}) has gone round the ring of ${ring.num}`);
      // Oldest to newest: the ring's entries ending at the last one published.
      const entries = Array.from({ length: ring.num }, (_, p) => heap.u16[(ring.avail + 4 + 2 * ((idx - ring.num + p) & (ring.num - 1))) >>> 1]!);
      const heads = [...new Set(entries)].sort((a, b) => a - b);
      const lap = entries.slice(-heads.length);
      const first = heads.indexOf(lap[0]!);
      assert.deepEqual(lap, heads.map((_, j) => heads[(first + j) % heads.length]), 'the last lap posts the heads in ring order');
      t.close();
    });
  }

  it('packed rings, as DPDK\'s polling virtio PMD: the driver event areas say DISABLE, and the guest kicks only when the device event area does not', () => {
    const t = setup('', ',packed_vq=1');
    const { heap, ethdev } = t;
    const ringOf = (q: RxQueue | TxQueue) => (q.descriptor() as unknown as { ring: { avail: number; used: number } }).ring;
    const rxRing = ringOf(ethdev.rxQueue(t.guest, 0));
    const txRing = ringOf(ethdev.txQueue(t.guest, 0));
    const flags = (area: number) => Atomics.load(heap.u16, (area + PACKED_EVENT_FLAGS) >>> 1);
    assert.deepEqual([flags(rxRing.avail), flags(txRing.avail)], [RING_EVENT_FLAGS_DISABLE, RING_EVENT_FLAGS_DISABLE], 'no calls wanted');
    assert.deepEqual([flags(rxRing.used), flags(txRing.used)], [RING_EVENT_FLAGS_DISABLE, RING_EVENT_FLAGS_DISABLE], "dpkit's backend polls: no kicks wanted");
    transfer(t, t.host, t.guest, t.hostPool, 5000, [64]);
    transfer(t, t.guest, t.host, t.guestPool, 5000, [64, 3000]);
    assert.equal(ethdev.xstats(t.host).guest_notifications, 0);
    assert.equal(ethdev.xstats(t.guest).virtio_kicks, 0);
    // A device that asks for kicks on its tx ring gets one per burst that made buffers available, and none once it stops asking.
    Atomics.store(heap.u16, (txRing.used + PACKED_EVENT_FLAGS) >>> 1, RING_EVENT_FLAGS_ENABLE);
    transfer(t, t.guest, t.host, t.guestPool, 40, [64], 8);
    const kicks = ethdev.xstats(t.guest).virtio_kicks!;
    assert.ok(kicks >= 5, `kicked: ${kicks}`);
    Atomics.store(heap.u16, (txRing.used + PACKED_EVENT_FLAGS) >>> 1, RING_EVENT_FLAGS_DISABLE);
    transfer(t, t.guest, t.host, t.guestPool, 40, [64], 8);
    assert.equal(ethdev.xstats(t.guest).virtio_kicks, kicks);
    t.close();
  });

  for (const datapath of ['wasm', 'ts'] as const) {
    it(`packed rings: used elements naming buffers the guest did not post are counted and skipped, never followed (${datapath})`, () => {
      const t = setup('', ',packed_vq=1', datapath);
      const { heap, ethdev } = t;
      const ring = (ethdev.rxQueue(t.guest, 0).descriptor() as unknown as { ring: { desc: number; num: number } }).ring;
      // Before the host takes anything: positions 0 and 1 turned into used elements (wrap 1) naming ids
      // beyond every posted buffer's; position 2 still holds a posted, not yet used, buffer.
      const used = (pos: number, id: number) => {
        heap.u32[(ring.desc + 16 * pos + 8) >>> 2] = 64;
        heap.u16[(ring.desc + 16 * pos + 12) >>> 1] = id;
        Atomics.store(heap.u16, (ring.desc + 16 * pos + 14) >>> 1, VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED);
      };
      used(0, ring.num + 5);
      used(1, 0x7fff);
      const b = heap.burst(32);
      assert.equal(ethdev.rxBurst(t.guest, 0, b, 32), 0, 'nothing received');
      assert.equal(ethdev.xstats(t.guest)['virtio_bad_used'], 2, 'both counted');
      assert.equal(ethdev.rxBurst(t.guest, 0, b, 32), 0);
      assert.equal(ethdev.xstats(t.guest)['virtio_bad_used'], 2, 'and skipped: not counted again');
      t.close(); // every posted mbuf, the two the device wrote over included, back in its pool
    });
  }

  for (const eventIdx of [true, false]) {
    it(`calls a guest that asks for it, and only then (${eventIdx ? 'used_event' : 'VRING_AVAIL_F_NO_INTERRUPT'})`, () => {
      const t = setup('', eventIdx ? '' : ',event_idx=0');
      const { heap, ethdev } = t;
      const ring = (ethdev.rxQueue(t.guest, 0).descriptor() as unknown as { ring: { avail: number; used: number; num: number } }).ring;
      const word = heap.reserve(64, 64, 'test call counter');
      const calls = () => Atomics.load(heap.i32, word >>> 2);
      const ch = connect(heap, '/tmp/dpkit-test.sock')!;
      ch.request({ req: Req.SET_VRING_CALL, index: 0, notifier: word });
      const usedIdx = () => Atomics.load(heap.u16, (ring.used + 2) >>> 1);
      const arm = (at: number) => {
        if (eventIdx) Atomics.store(heap.u16, (ring.avail + 4 + 2 * ring.num) >>> 1, at & 0xffff);
        else Atomics.store(heap.u16, ring.avail >>> 1, 0);
      };
      const disarm = () => {
        if (!eventIdx) Atomics.store(heap.u16, ring.avail >>> 1, VRING_AVAIL_F_NO_INTERRUPT);
      };
      const burst = (count: number) => transfer(t, t.host, t.guest, t.hostPool, count, [64], 8);
      disarm();
      if (eventIdx) arm(usedIdx() - 1); // "seen it all": behind what the host will publish
      burst(40);
      assert.equal(calls(), 0, 'a polling guest is not called');
      arm(usedIdx() + 3); // wake me when the 4th next packet is used
      burst(2);
      // With EVENT_IDX, only once the event index is passed; without, on the next used update.
      assert.equal(calls(), eventIdx ? 0 : 1);
      if (eventIdx) {
        burst(8);
        assert.equal(calls(), 1, 'once it is passed');
      }
      disarm();
      burst(40);
      assert.equal(calls(), 1, 'not again until asked again');
      assert.equal(ethdev.xstats(t.host).guest_notifications, 1);
      ch.request({ req: Req.SET_VRING_CALL, index: 0, notifier: -1 });
      t.close();
    });
  }

  it('a guest without room: the host keeps what does not fit and counts it', () => {
    const t = setup('', ',queue_size=64');
    const b = t.heap.burst(256);
    for (let i = 0; i < 200; i++) b[i] = makePacket(t.mb, t.hostPool, i, 64);
    const n = t.ethdev.txBurst(t.host, 0, b, 200);
    assert.equal(n, 64, 'one mergeable buffer per 64 B packet: the ring holds 64');
    assert.equal(t.ethdev.stats(t.host).oerrors, 136);
    t.mb.freeBulk(b, 200 - n, n);
    const rx = t.heap.burst(64);
    let got = 0;
    for (let k; (k = t.ethdev.rxBurst(t.guest, 0, rx, 64)) > 0; got += k) t.mb.freeBulk(rx, k);
    assert.equal(got, 64);
    t.close();
  });

  it('a host that does not poll: the guest fills its tx ring, keeps the rest, and sends it once the host takes what is queued', () => {
    const t = setup('', ',queue_size=64');
    const b = t.heap.burst(100);
    for (let i = 0; i < 100; i++) b[i] = makePacket(t.mb, t.guestPool, i, 60 + i);
    assert.equal(t.ethdev.txBurst(t.guest, 0, b, 100), 64, 'one descriptor per packet: the ring holds 64');
    assert.equal(t.ethdev.txBurst(t.guest, 0, t.heap.burstAt(b.byteOffset + 64 * 4, 36), 36), 0, 'nothing completed yet');
    const rx = t.heap.burst(64);
    let got = 0;
    const take = () => {
      for (let k; (k = t.ethdev.rxBurst(t.host, 0, rx, 64)) > 0; got += k) {
        for (let i = 0; i < k; i++) assert.deepEqual(t.mb.read(rx[i]!), content(got + i, 60 + got + i), `packet ${got + i}`);
        t.mb.freeBulk(rx, k);
      }
    };
    take();
    assert.equal(got, 64);
    assert.equal(t.ethdev.txBurst(t.guest, 0, t.heap.burstAt(b.byteOffset + 64 * 4, 36), 36), 36);
    take();
    assert.equal(got, 100);
    t.close();
  });

  it('a host out of mbufs: the guest\'s packets wait in its ring, counted in rx_nombuf, and arrive once mbufs are back', () => {
    const t = setup();
    const b = t.heap.burst(32);
    for (let i = 0; i < 32; i++) b[i] = makePacket(t.mb, t.guestPool, i, 64 + i);
    assert.equal(t.ethdev.txBurst(t.guest, 0, b, 32), 32);
    const held = t.heap.burst(4096);
    let h = 0;
    for (let m; (m = t.hostPool.alloc()) !== 0; ) held[h++] = m;
    const rx = t.heap.burst(64);
    assert.equal(t.ethdev.rxBurst(t.host, 0, rx, 64), 0);
    assert.equal(t.ethdev.rxBurst(t.host, 0, rx, 64), 0);
    assert.equal(t.ethdev.stats(t.host).rxNombuf, 2, 'one failed allocation per burst');
    t.mb.freeBulk(held, h);
    assert.equal(t.ethdev.rxBurst(t.host, 0, rx, 64), 32);
    for (let i = 0; i < 32; i++) assert.deepEqual(t.mb.read(rx[i]!), content(i, 64 + i), `packet ${i}`);
    t.mb.freeBulk(rx, 32);
    t.close();
  });

  it('refuses bad devargs and a missing backend with the device named', () => {
    const heap = Heap.create({ size: 16 << 20 });
    const ethdev = new Ethdev(heap, drivers);
    assert.throws(() => ethdev.create('net_vhost0'), (e: Error) => e instanceof ArgError && /net_vhost0: iface=SOCKET is required/.test(e.message));
    assert.throws(() => ethdev.create('virtio_user0,path=/x,queue_size=100'), /virtio_user0: queue_size=100: must be a power of two/);
    assert.throws(() => ethdev.create('virtio_user0,path=/x,packed_vq=2'), (e: Error) => e instanceof ArgError && /virtio_user0: packed_vq=2/.test(e.message));
    ethdev.close(ethdev.create('virtio_user9,path=/y,packed_vq=0'));
    const g = ethdev.create('virtio_user1,path=/nowhere');
    assert.throws(() => ethdev.configure(g, 1, 1), /virtio_user1: path=\/nowhere: no vhost-user backend listens there/);
    ethdev.create('net_vhost1,iface=/a');
    assert.throws(() => ethdev.create('net_vhost2,iface=/a'), /net_vhost2: iface=\/a: another vhost device already listens there/);
  });

  it('the backend refuses a frontend that breaks the protocol, naming the message', async () => {
    const { VhostDev } = await import('../../src/vhost/vhost-dev.js');
    const { Req } = await import('../../src/vhost/protocol.js');
    const heap = Heap.create({ size: 16 << 20 });
    const dev = new VhostDev(heap, 'net_vhost0', { queues: 1 });
    const offered = dev.handle({ req: Req.GET_FEATURES }) as bigint;
    assert.ok(has(offered, Feature.F_VERSION_1) && has(offered, Feature.NET_F_MRG_RXBUF) && has(offered, Feature.RING_F_EVENT_IDX) && has(offered, Feature.RING_F_INDIRECT_DESC));
    assert.throws(() => dev.handle({ req: Req.SET_FEATURES, features: 1n << 15n }), (e: Error) => e instanceof VhostError && /net_vhost0: SET_FEATURES: VIRTIO_F_VERSION_1 is required/.test(e.message));
    assert.throws(() => dev.handle({ req: Req.SET_FEATURES, features: (1n << 32n) | (1n << 40n) }), /features not offered/);
    assert.throws(() => dev.handle({ req: Req.SET_MEM_TABLE, regions: [] }), /SET_MEM_TABLE: SET_OWNER first/);
    assert.throws(() => dev.handle({ req: Req.SET_VRING_NUM, index: 2, num: 256 }), /SET_VRING_NUM: vring 2 does not exist \(device has 2\)/);
    assert.throws(() => dev.handle({ req: Req.SET_VRING_NUM, index: 0, num: 100 }), /size 100 is not a power of two/);
    dev.handle({ req: Req.SET_OWNER });
    assert.throws(() => dev.handle({ req: Req.SET_MEM_TABLE, regions: [{ gpa: 0, size: 1 << 30, userAddr: 0, heapOffset: 0 }] }), /SET_MEM_TABLE: guest memory: region 0 is not inside the heap/);
    dev.handle({ req: Req.SET_MEM_TABLE, regions: [{ gpa: 0x10000, size: 0x10000, userAddr: 0x7f0000, heapOffset: 1 << 20 }] });
    dev.handle({ req: Req.SET_VRING_NUM, index: 0, num: 256 });
    assert.throws(() => dev.handle({ req: Req.SET_VRING_ADDR, index: 0, desc: 0x900000, avail: 0x7f1000, used: 0x7f2000 }), /SET_VRING_ADDR: vring 0: its addresses are outside the memory table/);
    assert.equal(dev.ready(), false);
  });
});
