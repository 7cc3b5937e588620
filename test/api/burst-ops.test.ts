/**
 * BurstOps, the built-in engines' per-burst work on a user's burst: each
 * operation leaves packets and mbuf records as the engine's own kernel does
 * on the same input, on both datapaths, and the two datapaths agree; copy
 * follows rte_pktmbuf_copy; bad bursts are refused before anything runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgError, BurstOps, Heap, Mbufs, Mempool, type Burst, type Datapath } from 'dpkit';
import { fiveTupleSwapOps } from '../../src/fwd/5tswap.twin.js';
import { engineBlock, streamBlocks } from '../../src/fwd/blocks.js';
import { csumOps } from '../../src/fwd/csum.twin.js';
import { defaultFwdConfig, type EngineKernel, type FwdContext, type FwdStream } from '../../src/fwd/engine.js';
import { macOps } from '../../src/fwd/mac.twin.js';
import { macswapOps } from '../../src/fwd/macswap.twin.js';
import { defaultVariants } from '../../src/fwd/variants.js';
import { M_BUF_ADDR, MBUF_SHIFT, MBUF_SIZE } from '../../src/mem/mbuf-layout.js';
import { assertFull, assertSameHeaps } from '../helpers.js';
import { eth, ipv4, ipv6, tcp, udp, vlanEth } from '../net/packets.js';

const N = 48;
const PEER = Uint8Array.of(2, 0, 0, 0, 0x20, 1);
const TX = Uint8Array.of(2, 0, 0, 0, 0x10, 1);

/** A heap with one pool, the engines' context, and `N` random packets twice (bursts `a` and `b`, same bytes and flags). */
function rig(datapath: Datapath) {
  const heap = Heap.create({ size: 16 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const ctx: FwdContext = { heap, mb, pool, burst: heap.burst(N), config: defaultFwdConfig() };
  const a = heap.burst(N);
  const b = heap.burst(N);
  assert.equal(pool.allocBulk(a, N), N);
  assert.equal(pool.allocBulk(b, N), N);
  let rng = 7;
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  for (let i = 0; i < N; i++) {
    const body = rand(200);
    const bytes = [
      () => eth(0x0800, ipv4(17, udp(body, i))),
      () => vlanEth(7, 0x86dd, ipv6(6, tcp(body, i, rand(3)))),
      () => eth(0x0800, ipv4(6, tcp(body, i))),
      () => Uint8Array.from({ length: 1 + rand(80) }, () => rand(256)),
      () => eth(0x86dd, ipv6(17, udp(body, i))),
    ][rand(5)]!();
    const flags = rand(0x200);
    for (const h of [a[i]!, b[i]!]) {
      assert.ok(mb.write(h, bytes));
      mb.setOlFlags(h, flags);
    }
  }
  return { heap, pool, mb, ctx, a, b };
}

/** Each packet's bytes and its mbuf record but the buffer address (which differs between two mbufs by construction). */
function snapshot(heap: Heap, mb: Mbufs, burst: Burst): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < N; i++) {
    const h = burst[i]!;
    const rec = heap.u8.slice(h << MBUF_SHIFT, (h << MBUF_SHIFT) + MBUF_SIZE);
    rec.fill(0, M_BUF_ADDR, M_BUF_ADDR + 4);
    out.push(rec, mb.read(h));
  }
  return out;
}

/** The engine's kernel over `a` with its own blocks; `op` over `b`: both snapshots. */
type Case = (r: ReturnType<typeof rig>, ops: BurstOps) => { engine: EngineKernel; state: number; op: () => void };

const stream = (ctx: FwdContext, e: number, name: string): number => {
  const fs = { stats: ctx.heap.reserve(64) >>> 3, txMac: TX, peerMac: PEER } as FwdStream;
  return streamBlocks(ctx, e, name)(fs);
};

const cases: Record<string, Case> = {
  macSwap: ({ ctx, b }, ops) => ({
    engine: macswapOps(ctx.heap, defaultVariants().macswap),
    state: engineBlock(ctx, 'macswap'),
    op: () => ops.macSwap(b, N),
  }),
  fiveTupleSwap: ({ ctx, mb, b }, ops) => ({
    engine: fiveTupleSwapOps(ctx.heap, mb),
    state: engineBlock(ctx, '5tswap'),
    op: () => ops.fiveTupleSwap(b, N),
  }),
  'checksum with addresses (csum mac-swap on)': ({ ctx, mb, b }, ops) => ({
    engine: csumOps(ctx.heap, mb),
    state: stream(ctx, engineBlock(ctx, 'csum'), 'csum'),
    op: () => ops.checksum(b, N, ops.macAddrs(PEER, TX)),
  }),
  macRewrite: ({ ctx, b }, ops) => ({
    engine: macOps(ctx.heap),
    state: stream(ctx, engineBlock(ctx, 'mac'), 'mac'),
    op: () => ops.macRewrite(b, N, ops.macAddrs(PEER, TX)),
  }),
};

describe('BurstOps against the built-in engines', () => {
  for (const [name, make] of Object.entries(cases)) {
    it(`${name} leaves packets and records as the engine's kernel does, on both datapaths, which agree`, () => {
      const results = (['wasm', 'ts'] as const).map((dp) => {
        const r = rig(dp);
        const ops = new BurstOps(r.heap);
        const { engine, state, op } = make(r, ops);
        assert.notDeepEqual(snapshot(r.heap, r.mb, r.a), [], 'packets to compare');
        const before = snapshot(r.heap, r.mb, r.b);
        engine(state, r.heap.lcore, r.a.byteOffset, N);
        op();
        const got = snapshot(r.heap, r.mb, r.b);
        assert.deepEqual(got, snapshot(r.heap, r.mb, r.a), `${dp}: as the engine`);
        assert.notDeepEqual(got, before, `${dp}: the op changed the packets`);
        r.mb.freeBulk(r.a, N);
        r.mb.freeBulk(r.b, N);
        assertFull(r.pool);
        return got;
      });
      assert.deepEqual(results[0], results[1], 'wasm and ts agree');
    });
  }

  it('checksum without addresses fixes the checksums as csum does and leaves the Ethernet addresses', () => {
    for (const dp of ['wasm', 'ts'] as const) {
      const { heap, pool, mb, ctx, a, b } = rig(dp);
      const ops = new BurstOps(heap);
      const original = Array.from({ length: N }, (_, i) => mb.read(b[i]!));
      csumOps(heap, mb)(stream(ctx, engineBlock(ctx, 'csum'), 'csum'), heap.lcore, a.byteOffset, N);
      ops.checksum(b, N);
      for (let i = 0; i < N; i++) {
        const want = mb.read(a[i]!);
        if (want.length >= 14) want.set(original[i]!.subarray(0, 12));
        assert.deepEqual(mb.read(b[i]!), want, `${dp}: packet ${i}`);
        assert.equal(mb.olFlagsHi(b[i]!), mb.olFlagsHi(a[i]!));
      }
      // The UDP/TCP checksums of packets.ts arrive wrong (0xdead, 0xbeef): counted, as by csum's stream counters.
      const counts = ops.checksumCounts();
      assert.ok(counts.badL4 > 0, `${dp}: bad L4 arrivals counted`);
      mb.freeBulk(a, N);
      mb.freeBulk(b, N);
      assertFull(pool);
    }
  });
});

describe('BurstOps.copy (rte_pktmbuf_copy over a burst)', () => {
  it('copies every packet, chained or cloned, into one fresh segment with its metadata; kernel and twin leave the same heap', () => {
    const run = (dp: Datapath) => {
      const { heap, pool, mb, a, b } = rig(dp);
      const ops = new BurstOps(heap);
      // Packet 0 becomes a chain of two segments, packet 1 a clone (indirect) of packet 2.
      const tail = pool.alloc();
      assert.ok(mb.write(tail, Uint8Array.of(1, 2, 3, 4, 5)));
      assert.equal(mb.chain(a[0]!, tail), 0);
      mb.free(a[1]!);
      a[1] = mb.clone(a[2]!, pool);
      for (let i = 0; i < N; i++) {
        mb.setPort(a[i]!, i & 3);
        mb.setHash(a[i]!, 0x1000 + i);
        mb.setVlanTci(a[i]!, i);
        mb.setPktType(a[i]!, 0x11);
        mb.setTxOffload(a[i]!, 14, 20, i & 31);
        mb.setTimestamp(a[i]!, i, 7);
      }
      const copies = heap.burst(N);
      const want = Array.from({ length: N }, (_, i) => mb.read(a[i]!));
      assert.equal(ops.copy(a, copies, N, pool), N);
      for (let i = 0; i < N; i++) {
        const s = a[i]!;
        const c = copies[i]!;
        assert.deepEqual(mb.read(c), want[i], `packet ${i} bytes`);
        assert.deepEqual(mb.read(s), want[i], `packet ${i} source unchanged`);
        assert.equal(mb.nbSegs(c), 1);
        assert.equal(mb.dataLen(c), mb.pktLen(s));
        assert.ok(mb.isDirect(c), 'a copy is direct');
        assert.equal(mb.refcnt(c), 1);
        for (const f of ['port', 'hash', 'vlanTci', 'pktType', 'olFlags', 'timestampLo', 'timestampHi'] as const) assert.equal(mb[f](c), mb[f](s), `packet ${i} ${f}`);
        assert.equal(heap.u32[(c << 4) + 8], heap.u32[(s << 4) + 8], `packet ${i} tx_offload`);
      }
      assert.equal(mb.nbSegs(a[0]!), 2);
      mb.freeBulk(copies, N);
      mb.freeBulk(a, N);
      mb.freeBulk(b, N);
      assertFull(pool);
      return heap;
    };
    assertSameHeaps(run('wasm'), run('ts'));
  });

  it('returns 0 and allocates nothing when the pool is short; refuses a packet that fits no mbuf of the pool, allocating nothing', () => {
    for (const dp of ['wasm', 'ts'] as const) {
      const { heap, pool, mb, a, b } = rig(dp);
      const ops = new BurstOps(heap);
      const small = Mempool.create(heap, { name: 'small', n: 8, dataRoomSize: 128 + 64 });
      const copies = heap.burst(N);
      assert.equal(ops.copy(a, copies, N, small), 0);
      assert.equal(small.inUse(), 0);
      // Some packet of the rig is longer than 64 bytes.
      const n = 8;
      const long = a.findIndex((h) => mb.pktLen(h) > 64);
      assert.ok(long >= 0);
      const src = heap.burst(n);
      src.set(a.subarray(long, long + 1));
      for (let i = 1; i < n; i++) src[i] = a[i === long ? 0 : i]!;
      assert.throws(() => ops.copy(src, copies, n, small), (e: unknown) => e instanceof ArgError && /copy: packet 0 \(\d+ bytes\) does not fit one mbuf of pool small \(64 bytes/.test(e.message));
      assert.equal(small.inUse(), 0, `${dp}: nothing left allocated`);
      mb.freeBulk(a, N);
      mb.freeBulk(b, N);
      assertFull(pool, small);
    }
  });
});

describe('BurstOps refuses bad bursts', () => {
  it('a burst not in the heap, n beyond the burst, a negative n, overlapping copy bursts: ArgError naming the op', () => {
    const heap = Heap.create({ size: 8 << 20, datapath: 'wasm' });
    const pool = Mempool.create(heap, { name: 'pool', n: 64 });
    const ops = new BurstOps(heap);
    const plain = new Uint32Array(32) as Burst;
    const b = heap.burst(8);
    const addrs = ops.macAddrs(PEER, TX);
    const calls: [string, (burst: Burst, n: number) => unknown][] = [
      ['macSwap', (x, n) => ops.macSwap(x, n)],
      ['fiveTupleSwap', (x, n) => ops.fiveTupleSwap(x, n)],
      ['checksum', (x, n) => ops.checksum(x, n)],
      ['macRewrite', (x, n) => ops.macRewrite(x, n, addrs)],
      ['copy src', (x, n) => ops.copy(x, heap.burst(32), n, pool)],
      ['copy dst', (x, n) => ops.copy(heap.burst(32), x, n, pool)],
    ];
    for (const [what, call] of calls) {
      assert.throws(() => call(plain, 1), (e: unknown) => e instanceof ArgError && e.message.startsWith(`${what}: burst is not in the heap`));
      assert.throws(() => call(b, 9), (e: unknown) => e instanceof ArgError && e.message === `${what}: n=9 does not fit a burst of 8`);
      // copy checks its source first: a negative count is the source's.
      assert.throws(() => call(b, -1), (e: unknown) => e instanceof ArgError && e.message.startsWith(`${what.replace('dst', 'src')}: n=-1`));
    }
    assert.throws(() => ops.copy(b, b, 4, pool), (e: unknown) => e instanceof ArgError && /copy: src and dst bursts overlap/.test(e.message));
    assertFull(pool);
  });
});
