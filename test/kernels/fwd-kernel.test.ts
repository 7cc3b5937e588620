import assert from 'node:assert/strict';
import { it } from 'node:test';
import { defaultFwdConfig, type FwdContext, type FwdStream } from '../../src/apps/testpmd/fwd/engine.js';
import { macswap } from '../../src/apps/testpmd/fwd/macswap.js';
import { drivers } from '../../src/drivers/index.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/mem/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';

/** The same ports and pool on one datapath: net_ring0 (looped) and net_null0,size=… */
function side(datapath: 'wasm' | 'ts', nullSize: number) {
  const heap = Heap.create({ size: 32 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'pool', n: 2048, cacheSize: 64, dataRoomSize: 128 + 1600 });
  const ethdev = new Ethdev(heap, drivers);
  for (const name of ['net_ring0', `net_null0,size=${nullSize}`]) portUp(ethdev, pool, ethdev.create(name));
  const mb = new Mbufs(heap);
  return { heap, pool, ethdev, mb };
}

/** Metadata and bytes of a packet, for comparing the two sides. */
function snapshot(mb: Mbufs, h: number) {
  return {
    bytes: [...mb.read(h)],
    meta: [mb.dataOff(h), mb.dataLen(h), mb.pktLen(h), mb.port(h), mb.olFlags(h), mb.olFlagsHi(h), mb.l2Len(h), mb.l3Len(h), mb.l4Len(h), mb.vlanTci(h), mb.vlanTciOuter(h)],
  };
}

for (const variant of ['simd', 'simd-ofl', 'simd-interleave'] as const)
it(`rxFill, pktLenSum and the ${variant} macswap kernel do what their TypeScript twins do`, () => {
  const sides = [side('wasm', 77), side('ts', 77)];
  assert.ok(sides[0]!.heap.kernels && !sides[1]!.heap.kernels);
  let rng = 7;
  // The high bits: an LCG's low bits cycle with a short period (rand(4) would repeat every 4 calls).
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  for (let round = 0; round < 200; round++) {
    const n = 1 + rand(40);
    const lens = Array.from({ length: n }, () => 14 + rand(1500));
    // Some packets keep only their last few bytes at the very end of the buffer: the 12-byte scalar path.
    const atEnd = Array.from({ length: n }, () => (rand(4) === 0 ? 1 + rand(15) : 0));
    const flags = Array.from({ length: n }, () => [rand(0x7fffffff), rand(0x7fffffff), rand(0xffff)]);
    const offloads = round % 3 === 0 ? TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT : 0;
    const results = sides.map((s) => {
      const b = s.heap.burst(64);
      assert.equal(s.pool.allocBulk(b, n), n);
      for (let i = 0; i < n; i++) {
        const h = b[i]!;
        const len = atEnd[i] ? s.mb.tailroom(h) : lens[i]!;
        s.mb.write(h, Uint8Array.from({ length: len }, (_, k) => (k * 13 + i + round) & 0xff));
        if (atEnd[i]) s.mb.adj(h, len - atEnd[i]!);
        s.mb.setOlFlags(h, flags[i]![0]!);
        s.mb.setOlFlagsHi(h, flags[i]![1]! & ~(1 << 30));
        s.mb.setTxOffload(h, flags[i]![2]! & 0x7f, 300, 44);
      }
      s.ethdev.txBurst(0, 0, b, n);
      const config = { ...defaultFwdConfig(), txOffloads: offloads, vlanTci: 100 + round, vlanTciOuter: 200 + round, macswapKernel: variant };
      const ctx: FwdContext = { heap: s.heap, mb: s.mb, pool: s.pool, burst: s.heap.burst(512), config };
      const fs: FwdStream = { rxPort: 0, rxQueue: 0, txPort: 0, txQueue: 0, rxq: s.ethdev.rxQueue(0, 0), txq: s.ethdev.txQueue(0, 0), stats: s.heap.reserve(64) >>> 3, txMac: new Uint8Array(6), peerMac: new Uint8Array(6) };
      macswap(ctx).fwd(fs); // receives from the ring and sends back into it
      const out = s.heap.burst(64);
      const got = s.ethdev.rxBurst(0, 0, out, 64);
      const snap = [...out.subarray(0, got)].map((h) => snapshot(s.mb, h));
      s.mb.freeBulk(out, got);
      // net_null rx fills metadata; its tx sums bytes.
      const nb = s.ethdev.rxBurst(1, 0, out, n);
      const filled = [...out.subarray(0, nb)].map((h) => snapshot(s.mb, h).meta);
      s.ethdev.txBurst(1, 0, out, nb);
      return { snap, filled, stats: s.ethdev.stats(1) };
    });
    assert.deepEqual(results[0], results[1], `round ${round}`);
  }
  for (const s of sides) {
    s.ethdev.close(0);
    s.ethdev.close(1);
    assertFull(s.pool);
  }
});

it('macFwd and txonlyFill kernels do what their TypeScript twins do', async () => {
  const { mac } = await import('../../src/apps/testpmd/fwd/mac.js');
  const { txonly } = await import('../../src/apps/testpmd/fwd/txonly.js');
  const sides = [side('wasm', 64), side('ts', 64)];
  for (let round = 0; round < 60; round++) {
    const results = sides.map((s) => {
      const config = {
        ...defaultFwdConfig(),
        burst: 1 + ((round * 7) % 40),
        txPkts: [42 + ((round * 37) % 1400)],
        txOnlyMultiFlow: round % 2 === 0,
        txOffloads: round % 3 === 0 ? TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT : 0,
        vlanTci: round,
        vlanTciOuter: 1000 + round,
      };
      const ctx: FwdContext = { heap: s.heap, mb: s.mb, pool: s.pool, burst: s.heap.burst(512), config };
      const fs: FwdStream = {
        rxPort: 0,
        rxQueue: 0,
        txPort: 0,
        txQueue: 0,
        rxq: s.ethdev.rxQueue(0, 0),
        txq: s.ethdev.txQueue(0, 0),
        stats: s.heap.reserve(64) >>> 3,
        txMac: Uint8Array.of(0xa, 0xb, 0xc, 0xd, 0xe, round),
        peerMac: Uint8Array.of(2, 0, 0, 0, 0, round),
      };
      const gen = txonly(ctx);
      gen.fwd(fs); // into the looped ring
      gen.fwd(fs);
      mac(ctx).fwd(fs); // rewrites the first burst's addresses, back into the ring
      const out = s.heap.burst(512);
      const got = s.ethdev.rxBurst(0, 0, out, 512);
      const snap = [...out.subarray(0, got)].map((h) => snapshot(s.mb, h));
      s.mb.freeBulk(out, got);
      return snap;
    });
    assert.ok(results[0]!.length > 0);
    assert.deepEqual(results[0], results[1], `round ${round}`);
  }
  for (const s of sides) {
    s.ethdev.close(0);
    s.ethdev.close(1);
    assertFull(s.pool);
  }
});
