/**
 * The vhost backend over packed virtqueues, driven by a small packed-ring
 * guest written here (the driver's side of virtio 1.1 2.8: descriptors made
 * available with the driver's wrap counter, used elements read back with its
 * own). Traffic both ways must arrive intact, chains, indirect tables and
 * mergeable buffers included; the wasm kernels must leave the heap byte for
 * byte as their TypeScript twins do; and a hostile guest writing random
 * descriptors must get nothing but refusals: no throw, no byte written outside
 * its memory, no mbuf lost.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../src/apps/bench/stats.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Req } from '../../src/vhost/protocol.js';
import { VhostDev } from '../../src/vhost/vhost-dev.js';
import { VhostQueue } from '../../src/vhost/vhost-queue.js';
import { S_BAD_CHAINS, S_DROPS } from '../../src/vhost/vring-state.js';
import { PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED, encodeBase } from '../../src/virtio/packed.js';
import { Feature, HDR_NUM_BUFFERS, NET_HDR_SIZE, bit } from '../../src/virtio/virtio-net.js';
import { VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE } from '../../src/virtio/vring.js';
import { assertFull, firstHeapDifference } from '../helpers.js';

const KiB = 1024;
const NUM = 64;
const BUF = 2048;
const GUARD = 16 * KiB;
const CANARY = 0xa5;
const GPA = 0x1_4000_0000; // above 4 GiB: descriptors carry a high word
const UA = 0x7f00_0000_0000;
const REGION = 2 * NUM * BUF + 64 * KiB;
const BASE_FEATURES = bit(Feature.F_VERSION_1) | bit(Feature.F_RING_PACKED) | bit(Feature.RING_F_INDIRECT_DESC);

/** The driver's side of one packed ring in guest memory: post chains, reap used elements. */
class PackedGuest {
  pos = 0;
  wrap = 1;
  usedPos = 0;
  usedWrap = 1;
  /** Descriptors each buffer id's chain took (what its used element frees). */
  readonly ndescs = new Uint16Array(NUM);
  readonly free: number[] = Array.from({ length: NUM }, (_, i) => i);
  inFlight = 0;

  constructor(
    readonly heap: Heap,
    /** Heap offsets of the ring and of this ring's buffers (BUF bytes per id) and indirect tables (4 entries per id). */
    readonly ring: number,
    readonly bufs: number,
    readonly tables: number,
    readonly gpaOf: (heapOff: number) => number,
  ) {}

  private writeDesc(at: number, gpa: number, len: number, id: number, flags: number): void {
    const v = this.heap.view;
    v.setUint32(at, gpa % 4294967296, true);
    v.setUint32(at + 4, Math.floor(gpa / 4294967296), true);
    v.setUint32(at + 8, len, true);
    v.setUint16(at + 12, id, true);
    v.setUint16(at + 14, flags, true);
  }

  private availFlags(wrap: number): number {
    return wrap ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED;
  }

  /** Free descriptors on the ring (a chain of k needs k). */
  get room(): number {
    let used = 0;
    for (let id = 0; id < NUM; id++) if (!this.free.includes(id)) used += this.ndescs[id]!;
    return NUM - used;
  }

  /**
   * Makes buffer `id`'s bytes available as `parts` (lengths) in ring
   * descriptors, or in one indirect table. The head's flags are written last.
   */
  post(parts: number[], write: boolean, indirect: boolean): number | null {
    const need = indirect ? 1 : parts.length;
    if (this.free.length === 0 || this.room < need) return null;
    const id = this.free.shift()!;
    const wf = write ? VRING_DESC_F_WRITE : 0;
    const buf = this.bufs + id * BUF;
    const head = this.pos;
    const headWrap = this.wrap;
    let headFlags = 0;
    if (indirect) {
      const t = this.tables + id * 4 * PDESC_SIZE;
      let off = 0;
      parts.forEach((len, i) => {
        this.writeDesc(t + i * PDESC_SIZE, this.gpaOf(buf + off), len, 0, wf);
        off += len;
      });
      this.writeDesc(this.ring + head * PDESC_SIZE, this.gpaOf(t), parts.length * PDESC_SIZE, id, 0);
      headFlags = VRING_DESC_F_INDIRECT | this.availFlags(headWrap);
      this.step();
    } else {
      let off = 0;
      parts.forEach((len, i) => {
        const flags = wf | (i < parts.length - 1 ? VRING_DESC_F_NEXT : 0) | this.availFlags(this.wrap);
        this.writeDesc(this.ring + this.pos * PDESC_SIZE, this.gpaOf(buf + off), len, id, i === 0 ? 0 : flags);
        if (i === 0) headFlags = flags;
        off += len;
        this.step();
      });
    }
    this.ndescs[id] = need;
    Atomics.store(this.heap.u16, (this.ring + head * PDESC_SIZE + 14) >>> 1, headFlags);
    this.inFlight++;
    return id;
  }

  private step(): void {
    if (++this.pos === NUM) {
      this.pos = 0;
      this.wrap ^= 1;
    }
  }

  /** The next used element as [id, len], or null. */
  reap(): [number, number] | null {
    const at = this.ring + this.usedPos * PDESC_SIZE;
    const flags = Atomics.load(this.heap.u16, (at + 14) >>> 1);
    const a = (flags & VRING_PACKED_DESC_F_AVAIL) !== 0 ? 1 : 0;
    const u = (flags & VRING_PACKED_DESC_F_USED) !== 0 ? 1 : 0;
    if (a !== u || a !== this.usedWrap) return null;
    const id = this.heap.view.getUint16(at + 12, true);
    const len = this.heap.view.getUint32(at + 8, true);
    assert.ok(id < NUM && !this.free.includes(id), `used element names buffer ${id}, which is not in flight`);
    this.usedPos += this.ndescs[id]!;
    if (this.usedPos >= NUM) {
      this.usedPos -= NUM;
      this.usedWrap ^= 1;
    }
    this.free.push(id);
    this.inFlight--;
    return [id, len];
  }
}

function setup(datapath: 'wasm' | 'ts', features: bigint) {
  const heap = Heap.create({ size: 16 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'host', n: 2048, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const base = heap.reserve(GUARD + REGION + GUARD, 4096, 'guest memory with guards');
  const r0 = base + GUARD;
  heap.u8.fill(CANARY, base, r0);
  heap.u8.fill(CANARY, r0 + REGION, r0 + REGION + GUARD);
  const gpaOf = (off: number) => GPA + (off - r0);
  const dev = new VhostDev(heap, 'net_vhost0', { queues: 1 });
  dev.handle({ req: Req.SET_OWNER });
  dev.handle({ req: Req.SET_FEATURES, features });
  dev.handle({ req: Req.SET_MEM_TABLE, regions: [{ gpa: GPA, size: REGION, userAddr: UA, heapOffset: r0 }] });
  const guests: PackedGuest[] = [];
  for (const index of [0, 1]) {
    const ring = r0 + index * 2 * KiB; // 64 descriptors = 1 KiB, then the two event areas
    dev.handle({ req: Req.SET_VRING_NUM, index, num: NUM });
    dev.handle({ req: Req.SET_VRING_BASE, index, num: encodeBase(0, 1) });
    dev.handle({ req: Req.SET_VRING_ADDR, index, desc: UA + (ring - r0), avail: UA + (ring - r0) + NUM * PDESC_SIZE, used: UA + (ring - r0) + NUM * PDESC_SIZE + 4 });
    dev.handle({ req: Req.SET_VRING_KICK, index, notifier: -1 });
    dev.handle({ req: Req.SET_VRING_ENABLE, index, enable: true });
    guests.push(new PackedGuest(heap, ring, r0 + 4 * KiB + index * NUM * BUF, r0 + 4 * KiB + 2 * NUM * BUF + index * NUM * 4 * PDESC_SIZE, gpaOf));
  }
  assert.ok(dev.ready(), 'both packed rings are ready');
  const host = (index: number) => new VhostQueue(heap, dev.queueDesc(index, 0));
  const guardsIntact = () => {
    for (let i = base; i < r0; i++) if (heap.u8[i] !== CANARY) return false;
    for (let i = r0 + REGION; i < r0 + REGION + GUARD; i++) if (heap.u8[i] !== CANARY) return false;
    return true;
  };
  return { heap, pool, mb, dev, rxGuest: guests[0]!, txGuest: guests[1]!, enq: host(0), deq: host(1), r0, guardsIntact };
}

const pattern = (seq: number, i: number) => (seq * 31 + i * 7) & 0xff;

/** Random traffic both ways through the packed rings; checks every byte and returns the heap. */
function traffic(datapath: 'wasm' | 'ts', seed: number, features: bigint): Heap {
  const t = setup(datapath, features);
  const { heap, pool, mb, rxGuest, txGuest, enq, deq } = t;
  const mrg = (features & bit(Feature.NET_F_MRG_RXBUF)) !== 0n;
  const rand = seededRandom(seed);
  const b = heap.burst(32);
  let hostSeq = 0;
  let guestRx = 0;
  let guestSeq = 0;
  let hostRx = 0;
  const txLen = new Map<number, [number, number]>(); // id -> [seq, len]
  const shape = (len: number): [number[], boolean] => {
    const r = rand(8);
    if (r === 0 && len > 100) return [[40, len - 40], false]; // a chain of two
    if (r === 1 && len > 200) return [[12, 100, len - 112], true]; // an indirect table of three
    return [[len], false];
  };
  let pendingRx: [number, number][] = [];
  for (let round = 0; round < 300; round++) {
    // Guest: keep rx buffers posted, send some packets.
    for (let k = rand(12); k > 0; k--) {
      const [parts, ind] = shape(BUF);
      if (rxGuest.post(parts, true, ind) === null) break;
    }
    for (let k = rand(12); k > 0; k--) {
      const len = 60 + rand(1400);
      const [parts, ind] = shape(NET_HDR_SIZE + len);
      const id = txGuest.post(parts, false, ind);
      if (id === null) break;
      const buf = txGuest.bufs + id * BUF;
      heap.u8.fill(0, buf, buf + NET_HDR_SIZE);
      for (let i = 0; i < len; i++) heap.u8[buf + NET_HDR_SIZE + i] = pattern(guestSeq, i);
      txLen.set(id, [guestSeq++, len]);
    }
    // Host: dequeue and check, enqueue some packets (chained, some bigger than one guest buffer).
    for (let got; (got = deq.dequeueBurst(pool, b, 1 + rand(32))) > 0; ) {
      for (let i = 0; i < got; i++) {
        const bytes = mb.read(b[i]!);
        const seq = hostRx++;
        assert.equal(bytes.length, txLen.get([...txLen.keys()][0]!)![1], `host packet ${seq}: length`);
        const first = [...txLen.keys()][0]!;
        const [s] = txLen.get(first)!;
        txLen.delete(first);
        for (let j = 0; j < bytes.length; j++) if (bytes[j] !== pattern(s, j)) assert.fail(`host packet ${s}: byte ${j} changed`);
      }
      mb.freeBulk(b, got);
    }
    while (txGuest.reap() !== null);
    const n = 1 + rand(24);
    for (let i = 0; i < n; i++) {
      const len = mrg && rand(6) === 0 ? 2100 + rand(3000) : 60 + rand(1500);
      let head = 0;
      for (let off = 0; off < len; off += 1024) {
        const m = pool.alloc();
        const seg = Math.min(1024, len - off);
        const at = mb.append(m, seg);
        for (let j = 0; j < seg; j++) heap.u8[at + j] = pattern(hostSeq + i, off + j);
        if (head === 0) head = m;
        else mb.chain(head, m);
      }
      b[i] = head;
    }
    const took = enq.enqueueBurst(b, n);
    mb.freeBulk(b, n);
    hostSeq += took;
    // The packets the enqueue did not take are dropped here; their sequence numbers are reused.
    for (let u; (u = rxGuest.reap()) !== null; ) pendingRx.push(u);
    // Read whole packets: num_buffers elements each.
    while (pendingRx.length > 0) {
      const [id0] = pendingRx[0]!;
      const nbuf = mrg ? heap.view.getUint16(rxGuest.bufs + id0 * BUF + HDR_NUM_BUFFERS, true) : 1;
      if (pendingRx.length < nbuf) break;
      const bytes: number[] = [];
      for (let k = 0; k < nbuf; k++) {
        const [id, len] = pendingRx[k]!;
        const buf = rxGuest.bufs + id * BUF;
        for (let j = k === 0 ? NET_HDR_SIZE : 0; j < len; j++) bytes.push(heap.u8[buf + j]!);
      }
      pendingRx = pendingRx.slice(nbuf);
      for (let j = 0; j < bytes.length; j++) if (bytes[j] !== pattern(guestRx, j)) assert.fail(`guest packet ${guestRx}: byte ${j} of ${bytes.length} changed`);
      guestRx++;
    }
  }
  assert.ok(hostRx > 500 && guestRx > 500, `traffic flowed both ways (host got ${hostRx}, guest got ${guestRx})`);
  assert.equal(hostSeq, guestRx, 'every packet the host enqueued reached the guest whole');
  assert.equal(heap.f64[t.dev.queueDesc(0, 0).state + S_DROPS], 0);
  assert.ok(t.guardsIntact(), 'nothing written outside guest memory');
  assertFull(pool);
  return heap;
}

describe('vhost over packed virtqueues', () => {
  for (const [label, features] of [
    ['mergeable', BASE_FEATURES | bit(Feature.NET_F_MRG_RXBUF)],
    ['no MRG_RXBUF', BASE_FEATURES],
  ] as const) {
    it(`carries traffic both ways, chains and indirect tables included, every byte intact (${label}, wasm and twins)`, () => {
      for (const datapath of ['wasm', 'ts'] as const) traffic(datapath, 7, features);
    });
    it(`the packed kernels leave the heap byte for byte as their twins do (${label})`, () => {
      for (const seed of [1, 2, 3]) {
        const w = traffic('wasm', seed, features);
        const s = traffic('ts', seed, features);
        const skip = ['vhost copy list', 'vhost packet addresses', 'vhost extra segments', 'vhost header slots'].map((k) => {
          const x = w.scratch(k, 1);
          return [x.byteOffset, x.byteOffset + x.byteLength] as const;
        });
        assert.equal(firstHeapDifference(w, s, skip), -1, `seed ${seed}: heaps differ`);
      }
    });
  }

  it("takes SET_VRING_BASE in QEMU's 32-bit form (the device's position in the upper half) and gives both halves back on GET_VRING_BASE; a split ring's base stays 16 bits", () => {
    const { dev } = setup('wasm', BASE_FEATURES);
    const both = (pos: number, wrap: number) => ((encodeBase(pos, wrap) << 16) | encodeBase(pos, wrap)) >>> 0;
    assert.equal(dev.handle({ req: Req.GET_VRING_BASE, index: 0 }), both(0, 1), 'a fresh ring: position 0, wrap counters 1');
    dev.handle({ req: Req.SET_VRING_BASE, index: 0, num: both(5, 0) }); // QEMU's 0x80008000 form, here past a wrap
    assert.equal(dev.handle({ req: Req.GET_VRING_BASE, index: 0 }), both(5, 0));
    const split = new VhostDev(Heap.create({ size: 4 << 20 }), 'net_vhost1', { queues: 1 });
    split.handle({ req: Req.SET_OWNER });
    split.handle({ req: Req.SET_FEATURES, features: BASE_FEATURES & ~bit(Feature.F_RING_PACKED) });
    assert.throws(() => split.handle({ req: Req.SET_VRING_BASE, index: 0, num: 0x10000 }), /base 65536 is not a u16/);
  });

  for (const datapath of ['wasm', 'ts'] as const) {
    it(`a hostile guest's random packed descriptors are refused and counted: no throw, no write outside its memory, no lost mbuf (${datapath})`, () => {
      const t = setup(datapath, BASE_FEATURES | bit(Feature.NET_F_MRG_RXBUF));
      const { heap, pool, mb, rxGuest, txGuest, enq, deq } = t;
      const rand = seededRandom(0xbad);
      const b = heap.burst(32);
      const v = heap.view;
      const addrs = () => {
        switch (rand(6)) {
          case 0:
            return GPA - 16 - rand(64); // just before the region
          case 1:
            return GPA + REGION - rand(64); // running off its end
          case 2:
            return rand(1 << 30) * 4096; // anywhere
          case 3:
            return 2 ** 53 + rand(100); // beyond what an f64 holds exactly
          default:
            return GPA + rand(REGION);
        }
      };
      const lens = () => [0, 1, 12, 64, 2048, 65536, 0xffffffff, rand(REGION)][rand(8)]!;
      for (let iter = 0; iter < 3000; iter++) {
        for (const g of [rxGuest, txGuest]) {
          for (let k = rand(NUM); k > 0; k--) {
            const at = g.ring + rand(NUM) * PDESC_SIZE;
            const a = addrs();
            v.setUint32(at, a % 4294967296, true);
            v.setUint32(at + 4, Math.floor(a / 4294967296), true);
            v.setUint32(at + 8, lens(), true);
            v.setUint16(at + 12, rand(0x10000), true);
            // Random flags, mostly with the AVAIL/USED pair the device is waiting for, often NEXT (chains, loops round the ring) or INDIRECT.
            v.setUint16(at + 14, (rand(2) ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED) | (rand(3) === 0 ? rand(0x10000) : rand(8)), true);
          }
          // Indirect tables too: random entries where tables point.
          for (let k = rand(8); k > 0; k--) {
            const at = g.tables + rand(NUM * 4) * PDESC_SIZE;
            const a = addrs();
            v.setUint32(at, a % 4294967296, true);
            v.setUint32(at + 4, Math.floor(a / 4294967296), true);
            v.setUint32(at + 8, lens(), true);
            v.setUint16(at + 14, rand(8), true);
          }
        }
        const n = 1 + rand(32);
        assert.equal(pool.allocBulk(b, n), n);
        for (let i = 0; i < n; i++) mb.append(b[i]!, 60 + rand(1400));
        enq.enqueueBurst(b, n);
        mb.freeBulk(b, n);
        const got = deq.dequeueBurst(pool, b, 1 + rand(32));
        if (got > 0) mb.freeBulk(b, got);
      }
      assert.ok(t.guardsIntact(), 'nothing written outside guest memory');
      const st = (i: number) => t.dev.queueDesc(i, 0).state;
      assert.ok(heap.f64[st(0) + S_BAD_CHAINS]! + heap.f64[st(1) + S_BAD_CHAINS]! > 0, 'bad chains were counted');
      assertFull(pool);
    });
  }
});
