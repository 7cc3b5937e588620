// The vhost descriptor walk as a fuzz target (`npm run fuzz`, same budget as inputs.test.ts):
// fast-check generates a whole hostile guest — a memory table of 1 to 4 regions (adjacent,
// sparse, above 4 GiB, ending just under 2^53), split or packed rings of any size, and rounds of
// descriptor writes (chains, loops, indirect tables nested or misaligned, addresses off every
// region's edge or beyond 2^64), avail indices that lie, and host traffic both ways. Each scenario
// runs twice, on a wasm heap (the kernels) and a TypeScript heap (the twins). Properties: neither
// throws, neither writes a byte outside the guest's regions (canaries around each), every mbuf is
// back in the pool, and the two heaps end byte for byte the same.
//
// Scenarios are plain JSON. test/fuzz/corpus/vhost-walk.json holds the regression inputs (hand-made
// edge cases and anything a campaign found): each runs first, every run. A failure prints the
// counterexample; append it to that file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Req } from '../../src/vhost/protocol.js';
import { VhostDev } from '../../src/vhost/vhost-dev.js';
import { VhostQueue } from '../../src/vhost/vhost-queue.js';
import { S_BAD_CHAINS, S_LAST_AVAIL, STATE_SLOTS } from '../../src/vhost/vring-state.js';
import { PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED, encodeBase } from '../../src/virtio/packed.js';
import { Feature, bit } from '../../src/virtio/virtio-net.js';
import { DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE } from '../../src/virtio/vring.js';
import { assertFull, firstHeapDifference } from '../helpers.js';
import { budget, report, runs, trace } from './budget.js';


const KiB = 1024;
const GUARD = 4 * KiB;
const CANARY = 0xa5;
/** Each vring's area at the start of region 0 (desc, avail/driver event, used/device event). */
const RING_AREA = 8 * KiB;
/** Where "good" buffers sit in region 0, past both rings: 24 of 2 KiB. */
const GOOD = 2 * RING_AREA;
const GOOD_SLOTS = 24;
/** Then the well-behaved guest's indirect tables: 4 entries for each descriptor of each ring. */
const TABLES = GOOD + GOOD_SLOTS * 2 * KiB;
const UA = 0x7f00_0000_0000;
const TOP = 2 ** 53;
const SCRATCH = ['vhost copy list', 'vhost packet addresses', 'vhost extra segments', 'vhost header slots'];

/**
 * A guest address: inside region `r` at `off` (taken modulo its size plus an overrun), `end`
 * bytes before 64 past region `r`'s end (buffers that run off it), a good buffer, or a wild value.
 */
type Addr = { r: number; off: number } | { r: number; end: number } | { good: number } | { wild: number };
interface Desc {
  q: number;
  i: number;
  addr: Addr;
  len: number;
  /** Low flag bits (NEXT, WRITE, INDIRECT) and, for packed rings, the AVAIL/USED pattern in bits 7 and 15. */
  flags: number;
  /** Split: next; packed: the buffer id. */
  next: number;
}
interface Indirect {
  q: number;
  i: number;
  r: number;
  off: number;
  entries: Omit<Desc, 'q' | 'i'>[];
  /** A table address 2 bytes off, or a length 3 bytes off a whole entry. */
  skew: number;
  /** The head also has NEXT (indirect and NEXT together is invalid). */
  withNext: boolean;
}
/**
 * A chain posted where the device looks next (so packets flow and the deep paths run): `segs`
 * buffers of `len`, maybe in an indirect table; at good buffers, or at `addr` (one hostile buffer in a well-formed chain).
 */
interface Post {
  q: number;
  segs: number;
  len: number;
  ind: boolean;
  addr: Addr | null;
}
interface Round {
  posts: Post[];
  descs: Desc[];
  tables: Indirect[];
  /** Split: two descriptors naming each other (a loop). */
  loops: [number, number, number][];
  /** Split: the avail entries published per ring, and whether the avail index lies. */
  avail: [number[], number[]];
  wildIdx: [number, number];
  /** Host -> guest packet lengths, then how many to dequeue guest -> host. */
  packets: number[];
  dequeue: number;
}
interface Scenario {
  packed: boolean;
  /** log2 of the ring size. */
  order: number;
  mrg: boolean;
  indirect: boolean;
  eventIdx: boolean;
  inOrder: boolean;
  /** Region sizes (region 0 holds the rings) and how each region's gpa follows the one before. */
  regions: { size: number; gap: number }[];
  rounds: Round[];
}

const WILD = [0, 1, 0xffff_f000, 2 ** 32 - 1, 2 ** 32, TOP - 1, TOP, TOP + 4096, 2 ** 63, 2 ** 64 - 4096];
const LENS = [0, 1, 11, 12, 13, 64, 1024, 2048, 4096, 9000, 65536, 0x7fff_ffff, 0xffff_ffff];
const GAPS = [0, 0, 4096, 2 ** 32, -1]; // -1: the region ends just under 2^53

const addrArb: fc.Arbitrary<Addr> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ r: fc.nat(3), off: fc.nat(0x20000) }) },
  { weight: 2, arbitrary: fc.record({ r: fc.nat(3), end: fc.oneof(fc.nat(128), fc.nat(2200)) }) },
  { weight: 4, arbitrary: fc.record({ good: fc.nat(GOOD_SLOTS - 1) }) },
  { weight: 1, arbitrary: fc.record({ wild: fc.nat(WILD.length - 1) }) },
);
const lenArb = fc.oneof(fc.constantFrom(...LENS), fc.nat(4096));
const smallOr = (n: number) => fc.oneof({ weight: 4, arbitrary: fc.nat(63) }, { weight: 1, arbitrary: fc.nat(n) });
const entryArb = fc.record({ addr: addrArb, len: lenArb, flags: fc.nat(0xffff), next: smallOr(0xffff) });
const descArb = fc.record({ q: fc.nat(1), i: fc.nat(63), addr: addrArb, len: lenArb, flags: fc.nat(0xffff), next: smallOr(0xffff) });
const hostileRound: fc.Arbitrary<Round> = fc.record({
  posts: fc.array(
    fc.record({
      q: fc.nat(1),
      segs: fc.integer({ min: 1, max: 3 }),
      len: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(12, 64, 1024, 2048, 2048, 2048) }, { weight: 1, arbitrary: lenArb }),
      ind: fc.boolean(),
      addr: fc.option(addrArb, { freq: 3 }),
    }),
    { maxLength: 12 },
  ),
  descs: fc.array(descArb, { maxLength: 24 }),
  tables: fc.array(fc.record({ q: fc.nat(1), i: fc.nat(63), r: fc.nat(3), off: fc.nat(0x20000), entries: fc.array(entryArb, { minLength: 1, maxLength: 10 }), skew: fc.nat(3), withNext: fc.boolean() }), { maxLength: 3 }),
  loops: fc.array(fc.tuple(fc.nat(1), fc.nat(63), fc.nat(63)), { maxLength: 2 }),
  avail: fc.tuple(fc.array(smallOr(0xffff), { maxLength: 16 }), fc.array(smallOr(0xffff), { maxLength: 16 })),
  wildIdx: fc.tuple(fc.oneof({ weight: 9, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(0xffff) }), fc.oneof({ weight: 9, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(0xffff) })),
  // Mostly packets one 2 KiB buffer holds (the kernels' fast path), some that need a chain of them.
  packets: fc.array(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 14, max: 1500 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 5000 }) }), { maxLength: 8 }),
  dequeue: fc.integer({ min: 1, max: 16 }),
});
/** Half the rounds only post chains (some with a hostile buffer) and move packets: hostile noise in every round would leave no chain whole. */
const roundArb: fc.Arbitrary<Round> = fc.oneof(
  hostileRound,
  hostileRound.map((r) => ({ ...r, descs: [], tables: [], loops: [], avail: [[], []] as [number[], number[]], wildIdx: [-1, -1] as [number, number] })),
);
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  packed: fc.boolean(),
  order: fc.integer({ min: 0, max: 6 }),
  mrg: fc.boolean(),
  indirect: fc.boolean(),
  eventIdx: fc.boolean(),
  inOrder: fc.boolean(),
  regions: fc.tuple(
    // Region 0 holds the rings, the good buffers and tables (80 KiB), and maybe more.
    fc.constantFrom(80 * KiB, 100 * KiB, 128 * KiB),
    fc.array(fc.record({ size: fc.constantFrom(1000, 4 * KiB, 12 * KiB, 64 * KiB), gap: fc.nat(GAPS.length - 1) }), { maxLength: 3 }),
  ).map(([size0, rest]) => [{ size: size0, gap: 0 }, ...rest]),
  rounds: fc.array(roundArb, { minLength: 1, maxLength: 8 }),
});

/** Where each region sits: guest-physical address, heap offset, size. */
interface Placed {
  gpa: number;
  heap: number;
  size: number;
}

/** One side: a heap on `datapath` with the guest's regions between canaries and a vhost device over them. */
function side(sc: Scenario, datapath: 'wasm' | 'ts') {
  const heap = Heap.create({ size: 4 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'host', n: 512, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const total = sc.regions.reduce((a, r) => a + r.size + GUARD, GUARD);
  const base = heap.reserve(total, 4096, 'guest memory with guards');
  heap.u8.fill(CANARY, base, base + total);
  const placed: Placed[] = [];
  let at = base + GUARD;
  let gpa = 0x4000_0000;
  for (const [k, r] of sc.regions.entries()) {
    if (k > 0) {
      const prev = placed[k - 1]!;
      const g = GAPS[r.gap]!;
      // Only the last region may end just under 2^53; another after it would not fit.
      gpa = g >= 0 || k < sc.regions.length - 1 ? prev.gpa + prev.size + Math.max(g, 0) : Math.max(prev.gpa + prev.size, TOP - 1 - r.size);
    }
    placed.push({ gpa, heap: at, size: r.size });
    // Guest bytes a dequeue copies out: a pattern, the same on both sides.
    for (let i = 0; i < r.size; i++) heap.u8[at + i] = (i * 7 + k) & 0xff;
    at += r.size + GUARD;
  }
  // A guest zeroes its rings before it hands them over (the pattern would be avail indices and flags).
  heap.u8.fill(0, placed[0]!.heap, placed[0]!.heap + 2 * RING_AREA);
  const num = 1 << sc.order;
  const features =
    bit(Feature.F_VERSION_1) |
    (sc.packed ? bit(Feature.F_RING_PACKED) : 0n) |
    (sc.mrg ? bit(Feature.NET_F_MRG_RXBUF) : 0n) |
    (sc.indirect ? bit(Feature.RING_F_INDIRECT_DESC) : 0n) |
    (sc.eventIdx ? bit(Feature.RING_F_EVENT_IDX) : 0n) |
    (sc.inOrder ? bit(Feature.F_IN_ORDER) : 0n);
  const dev = new VhostDev(heap, 'net_vhost0', { queues: 1 });
  dev.handle({ req: Req.SET_OWNER });
  dev.handle({ req: Req.SET_FEATURES, features });
  dev.handle({ req: Req.SET_MEM_TABLE, regions: placed.map((p, k) => ({ gpa: p.gpa, size: p.size, userAddr: UA + k * 2 ** 36, heapOffset: p.heap })) });
  const r0 = placed[0]!.heap;
  const rings = [0, 1].map((index) => {
    const off = index * RING_AREA;
    dev.handle({ req: Req.SET_VRING_NUM, index, num });
    dev.handle({ req: Req.SET_VRING_BASE, index, num: sc.packed ? encodeBase(0, 1) : 0 });
    const desc = UA + off;
    const avail = desc + (sc.packed ? PDESC_SIZE : DESC_SIZE) * num;
    dev.handle({ req: Req.SET_VRING_ADDR, index, desc, avail, used: sc.packed ? avail + 4 : UA + off + 4096 });
    dev.handle({ req: Req.SET_VRING_KICK, index, notifier: -1 });
    dev.handle({ req: Req.SET_VRING_ENABLE, index, enable: true });
    return { desc: r0 + off, avail: r0 + off + DESC_SIZE * num };
  });
  assert.ok(dev.ready(), 'both rings are ready');
  const guardsIntact = (): string => {
    let lo = base;
    for (const p of placed) {
      for (let i = lo; i < p.heap; i++) if (heap.u8[i] !== CANARY) return `byte ${i - lo} of the guard before the region at 0x${p.gpa.toString(16)} written`;
      lo = p.heap + p.size;
    }
    for (let i = lo; i < base + total; i++) if (heap.u8[i] !== CANARY) return `byte ${i - lo} of the last guard written`;
    return '';
  };
  /** The well-behaved guest's next descriptor and (packed) wrap counter, per ring. */
  const guest = { next: [0, 0], wrap: [1, 1] };
  return { heap, pool, mb, dev, placed, rings, num, guest, enq: new VhostQueue(heap, dev.queueDesc(0, 0)), deq: new VhostQueue(heap, dev.queueDesc(1, 0)), guardsIntact, burst: heap.burst(16) };
}

type Side = ReturnType<typeof side>;

function gpaOf(s: Side, a: Addr): number {
  if ('good' in a) return s.placed[0]!.gpa + GOOD + a.good * 2 * KiB;
  if ('wild' in a) return WILD[a.wild]!;
  const p = s.placed[a.r % s.placed.length]!;
  if ('end' in a) return p.gpa + p.size + 64 - a.end;
  return p.gpa + (a.off % (p.size + 128)) - 64; // a little before, inside, or off the end
}

function writeDesc(s: Side, at: number, a: Addr, len: number, flags: number, next: number, packed: boolean): void {
  const v = s.heap.view;
  const g = gpaOf(s, a);
  v.setUint32(at, g % 2 ** 32, true);
  v.setUint32(at + 4, Math.floor(g / 2 ** 32) >>> 0, true);
  v.setUint32(at + 8, len >>> 0, true);
  if (packed) {
    v.setUint16(at + 12, next, true);
    // Mostly the AVAIL/USED pair of one wrap or the other (so chains are taken on either lap), now and then anything.
    const pair = [VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED, flags & (VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED)][(flags >>> 3) % 3]!;
    v.setUint16(at + 14, pair | (flags & 7), true);
  } else {
    v.setUint16(at + 12, flags & 7, true);
    v.setUint16(at + 14, next, true);
  }
}

/**
 * Posts one well-formed chain on ring `p.q` at the guest's next descriptor.
 * @returns its head, for a split ring's avail entry; -1 when a packed ring has no room (a guest never laps the device).
 */
function post(s: Side, sc: Scenario, p: Post): number {
  const { heap, num, guest, rings } = s;
  const v = heap.view;
  const dsz = sc.packed ? PDESC_SIZE : DESC_SIZE;
  const write = p.q === 0 ? VRING_DESC_F_WRITE : 0;
  const ind = p.ind && sc.indirect;
  const segs = ind ? p.segs : Math.min(p.segs, num);
  const head = guest.next[p.q]! % num;
  if (sc.packed) {
    // Positions on a cycle of 2 * num (position, and num more on the wrap-0 lap): descriptors in flight = guest's - device's.
    const dev = heap.f64[s.dev.states + p.q * STATE_SLOTS + S_LAST_AVAIL]!;
    const d = (dev & 0x7fff) + (dev >>> 15 ? 0 : num);
    const g = head + (guest.wrap[p.q] ? 0 : num);
    if (((g - d + 2 * num) % (2 * num)) + (ind ? 1 : segs) > num) return -1;
  }
  const availBits = () => (sc.packed ? (guest.wrap[p.q] ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED) : 0);
  const step = () => {
    if (++guest.next[p.q]! % num === 0 && sc.packed) guest.wrap[p.q]! ^= 1;
  };
  const r0 = s.placed[0]!;
  const put = (at: number, k: number, flags: number, next: number) => {
    const g = p.addr !== null && k === segs - 1 ? gpaOf(s, p.addr) : r0.gpa + GOOD + ((head + k) % GOOD_SLOTS) * 2 * KiB;
    v.setUint32(at, g % 2 ** 32, true);
    v.setUint32(at + 4, Math.floor(g / 2 ** 32), true);
    v.setUint32(at + 8, p.len, true);
    v.setUint16(at + 12, sc.packed ? next : flags, true);
    v.setUint16(at + 14, sc.packed ? flags : next, true);
  };
  if (ind) {
    const table = TABLES + (p.q * 64 + head) * 4 * 16;
    for (let k = 0; k < segs; k++) put(r0.heap + table + k * 16, k, write | (!sc.packed && k < segs - 1 ? VRING_DESC_F_NEXT : 0), sc.packed ? 0 : k + 1);
    const at = rings[p.q]!.desc + head * dsz;
    const g = r0.gpa + table;
    v.setUint32(at, g % 2 ** 32, true);
    v.setUint32(at + 4, Math.floor(g / 2 ** 32), true);
    v.setUint32(at + 8, segs * 16, true);
    v.setUint16(at + 12, sc.packed ? head : VRING_DESC_F_INDIRECT, true);
    v.setUint16(at + 14, sc.packed ? VRING_DESC_F_INDIRECT | availBits() : 0, true);
    step();
    return head;
  }
  for (let k = 0; k < segs; k++) {
    const i = guest.next[p.q]! % num;
    const more = k < segs - 1 ? VRING_DESC_F_NEXT : 0;
    put(rings[p.q]!.desc + i * dsz, k, write | more | availBits(), sc.packed ? head : (i + 1) % num);
    step();
  }
  return head;
}

/** Plays `sc` against one side. @returns bad chains counted, packets enqueued, packets dequeued. */
function play(sc: Scenario, s: Side): [number, number, number] {
  const { heap, pool, mb, rings, num, enq, deq, burst: b } = s;
  const v = heap.view;
  const dsz = sc.packed ? PDESC_SIZE : DESC_SIZE;
  let sent = 0;
  let got = 0;
  for (const round of sc.rounds) {
    const heads: [number[], number[]] = [[], []];
    for (const p of round.posts) {
      const h = post(s, sc, p);
      if (h >= 0) heads[p.q]!.push(h);
    }
    for (const d of round.descs) writeDesc(s, rings[d.q]!.desc + (d.i % num) * dsz, d.addr, d.len, d.flags, d.next, sc.packed);
    for (const t of round.tables) {
      const p = s.placed[t.r % s.placed.length]!;
      const off = (t.off % Math.max(16, p.size - 16)) & ~15;
      const entries = Math.min(t.entries.length, (p.size - off) >>> 4);
      for (let e = 0; e < entries; e++) {
        const x = t.entries[e]!;
        writeDesc(s, p.heap + off + e * 16, x.addr, x.len, x.flags, x.next, sc.packed);
      }
      const head = rings[t.q]!.desc + (t.i % num) * dsz;
      const tableGpa = p.gpa + off + (t.skew === 1 ? 2 : 0);
      v.setUint32(head, tableGpa % 2 ** 32, true);
      v.setUint32(head + 4, Math.floor(tableGpa / 2 ** 32), true);
      v.setUint32(head + 8, t.entries.length * 16 + (t.skew === 2 ? 3 : 0), true);
      const flags = VRING_DESC_F_INDIRECT | (t.withNext ? VRING_DESC_F_NEXT : 0);
      if (sc.packed) v.setUint16(head + 14, flags | (t.skew === 3 ? VRING_PACKED_DESC_F_USED : VRING_PACKED_DESC_F_AVAIL), true);
      else v.setUint16(head + 12, flags, true);
    }
    if (!sc.packed) {
      for (const [q, i, j] of round.loops) {
        const di = rings[q]!.desc + (i % num) * DESC_SIZE;
        const dj = rings[q]!.desc + (j % num) * DESC_SIZE;
        v.setUint16(di + 12, v.getUint16(di + 12, true) | VRING_DESC_F_NEXT, true);
        v.setUint16(di + 14, j % num, true);
        v.setUint16(dj + 12, v.getUint16(dj + 12, true) | VRING_DESC_F_NEXT, true);
        v.setUint16(dj + 14, i % num, true);
      }
      for (const q of [0, 1]) {
        const host = heap.f64[s.dev.states + q * STATE_SLOTS + S_LAST_AVAIL]!;
        // The good chains' heads, then the random ones (mostly inside the ring).
        const all = [...heads[q]!, ...round.avail[q]!.map((h) => (h < 64 ? h % num : h))].slice(0, num);
        all.forEach((h, e) => v.setUint16(rings[q]!.avail + 4 + 2 * ((host + e) % num), h, true));
        const idx = round.wildIdx[q]! >= 0 ? round.wildIdx[q]! : (host + all.length) & 0xffff;
        Atomics.store(heap.u16, (rings[q]!.avail + 2) >>> 1, idx);
      }
    }
    // Host -> guest: packets of up to 5000 bytes, as chains of 2048-byte segments.
    let n = 0;
    for (const len of round.packets) {
      let head = 0;
      for (let off = 0; off < len; off += 2048) {
        const m = pool.alloc();
        const seg = Math.min(2048, len - off);
        const p = mb.append(m, seg);
        heap.u8.fill((len + off) & 0xff, p, p + seg);
        if (head === 0) head = m;
        else mb.chain(head, m);
      }
      b[n++] = head;
    }
    sent += enq.enqueueBurst(b, n);
    mb.freeBulk(b, n); // taken (copied into the guest) or refused, the host is done with them
    const k = deq.dequeueBurst(pool, b, round.dequeue);
    for (let i = 0; i < k; i++) assert.ok(mb.pktLen(b[i]!) <= 65535, `dequeued packet ${i}: ${mb.pktLen(b[i]!)} bytes`);
    got += k;
    mb.freeBulk(b, k);
  }
  const bad = heap.f64[s.dev.states + S_BAD_CHAINS]! + heap.f64[s.dev.states + STATE_SLOTS + S_BAD_CHAINS]!;
  return [bad, sent, got];
}

/** What one scenario did on the wasm side (for the campaign's record of how deep it went). */
interface Outcome {
  bad: number;
  sent: number;
  got: number;
}

/** Runs `sc` on both datapaths and checks the four properties. */
function checkScenario(sc: Scenario): Outcome {
  const out: Side[] = [];
  const results: [number, number, number][] = [];
  for (const datapath of ['wasm', 'ts'] as const) {
    const s = side(sc, datapath);
    results.push(play(sc, s));
    assert.equal(s.guardsIntact(), '', `${datapath}: a write outside the guest's regions`);
    assertFull(s.pool);
    out.push(s);
  }
  const [w, t] = out as [Side, Side];
  assert.deepEqual(results[0], results[1], 'kernels and twins counted the same bad chains, packets in and out');
  const skip = SCRATCH.flatMap((k) =>
    [w, t].map((s) => {
      const x = s.heap.scratch(k, 1);
      return [x.byteOffset, x.byteOffset + x.byteLength] as const;
    }),
  );
  const first = firstHeapDifference(w.heap, t.heap, skip);
  assert.equal(first, -1, `the kernels' heap and the twins' differ first at byte ${first}`);
  const [bad, sent, got] = results[0]!;
  return { bad, sent, got };
}

const corpus = JSON.parse(readFileSync(new URL('./corpus/vhost-walk.json', import.meta.url), 'utf8')) as { why: string; scenario: Scenario }[];

describe('fuzzed vhost descriptor walk', () => {
  it('the regression inputs: each refused or carried the same by kernels and twins, nothing written outside the guest, no mbuf lost', () => {
    assert.ok(corpus.length > 0);
    const total = { bad: 0, sent: 0, got: 0 };
    for (const { why, scenario } of corpus) {
      try {
        const o = checkScenario(scenario);
        total.bad += o.bad;
        total.sent += o.sent;
        total.got += o.got;
      } catch (e) {
        throw new Error(`corpus input "${why}": ${(e as Error).message}`);
      }
    }
    // The corpus holds refusals and well-behaved guests both: each kind of outcome happened.
    assert.ok(total.bad > 0 && total.sent > 0 && total.got > 0, `outcomes over the corpus: ${JSON.stringify(total)}`);
  });

  it('random guests on split and packed rings: kernels and twins agree byte for byte, nothing written outside the guest, no mbuf lost', () => {
    let n = 0;
    const seen = { bad: 0, sent: 0, got: 0, packed: 0 };
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        n++;
        trace('vhost descriptor walk', sc);
        const o = checkScenario(sc);
        seen.bad += o.bad;
        seen.sent += o.sent;
        seen.got += o.got;
        if (sc.packed) seen.packed++;
      }),
      budget(Math.max(20, runs >> 3)),
    );
    // The generator reaches both outcomes on both ring kinds, or the target tests nothing deep
    // (judged over 20 scenarios or more: a time-bounded campaign on a loaded machine may run fewer).
    if (n >= 20)
      assert.ok(seen.bad > 0 && seen.sent > 0 && seen.got > 0 && seen.packed > 0 && seen.packed < n, `depth reached: ${JSON.stringify(seen)} over ${n} scenarios`);
    report('vhost descriptor walk', n, ` (${seen.packed} packed; ${seen.bad} bad chains refused, ${seen.sent} packets enqueued, ${seen.got} dequeued)`);
  });
});
