/**
 * Each engine kernel (src/fwd/*.as.ts) against its twin (src/fwd/*.twin.ts):
 * the same engine, config and traffic on a wasm heap and on a TypeScript
 * heap leave the two heaps byte for byte the same (packets, mbuf records,
 * engine and stream blocks, stream counters, pools, rings).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { fiveTupleSwap } from '../../src/fwd/5tswap.js';
import { csum } from '../../src/fwd/csum.js';
import { flowgen } from '../../src/fwd/flowgen.js';
import { defaultFwdConfig, type EngineFactory, type FwdStream } from '../../src/fwd/engine.js';
import { mac } from '../../src/fwd/mac.js';
import { macswap } from '../../src/fwd/macswap.js';
import { txonly } from '../../src/fwd/txonly.js';
import type { MacswapVariant } from '../../src/fwd/variants.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, assertSameHeaps, portUp } from '../helpers.js';
import { loopPort } from './harness.js';
import { eth, ipv4, ipv6, tcp, udp, vlanEth } from '../net/packets.js';

const cases: [string, EngineFactory, MacswapVariant?][] = [
  ['macswap (simd)', macswap, 'simd'],
  ['macswap (simd-ofl)', macswap, 'simd-ofl'],
  ['macswap (simd-interleave)', macswap, 'simd-interleave'],
  ['mac', mac],
  ['5tswap', fiveTupleSwap],
  ['csum', csum],
  ['txonly', txonly],
  ['flowgen', flowgen],
];

describe('engine kernels and their twins', () => {
  for (const [name, factory, arm] of cases) {
    for (const offloads of [0, TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT]) {
      it(`${name} leaves the heap byte for byte as its twin does (tx offloads 0x${offloads.toString(16)})`, () => {
        const run = (datapath: 'wasm' | 'ts') => {
          const heap = Heap.create({ size: 16 << 20, datapath });
          const pool = Mempool.create(heap, { name: 'pool', n: 1024, cacheSize: 32 });
          const ethdev = new Ethdev(heap, drivers);
          for (const dev of ['net_ring0', 'net_ring1']) portUp(ethdev, pool, ethdev.create(dev));
          const mb = new Mbufs(heap);
          const config = { ...defaultFwdConfig(), burst: 24, txPkts: [60 + offloads], txOnlyMultiFlow: true, txOffloads: offloads, vlanTci: 0x123, vlanTciOuter: 0x456, flowgenFlows: 5 };
          if (arm) config.variants = { macswap: arm };
          const ctx = { heap, mb, pool, burst: heap.burst(512), config };
          // Two streams, each looped on its own port: txonly's flow variable runs across both.
          const streams: FwdStream[] = [0, 1].map((p) => ({
            rxPort: p,
            rxQueue: 0,
            txPort: p,
            txQueue: 0,
            rxq: ethdev.rxQueue(p, 0),
            txq: ethdev.txQueue(p, 0),
            stats: heap.reserve(64) >>> 3,
            txMac: Uint8Array.of(2, 0, 0, 0, 0x10, p),
            peerMac: Uint8Array.of(2, 0, 0, 0, 0x20, p),
          }));
          const engine = factory(ctx);
          const b = heap.burst(64);
          let rng = 3;
          const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
          const packet = (seed: number): Uint8Array => {
            const body = rand(200);
            switch (rand(7)) {
              case 0: return eth(0x0800, ipv4(17, udp(body, seed)));
              // QinQ (two tags, parsed through) and three tags (more than are skipped).
              case 5: return eth(0x88a8, [0, 9, ...vlanEth(7, 0x0800, ipv4(17, udp(body, seed))).subarray(12)]);
              case 6: return eth(0x88a8, [0, 9, 0x81, 0, 0, 8, ...vlanEth(7, 0x86dd, ipv6(17, udp(body, seed))).subarray(12)]);
              case 1: return vlanEth(7, 0x86dd, ipv6(6, tcp(body, seed, rand(3))));
              case 2: return eth(0x0800, ipv4(6, tcp(body, seed)));
              case 3: return Uint8Array.from({ length: 1 + rand(80) }, () => rand(256));
              default: return eth(0x86dd, ipv6(17, udp(body, seed)));
            }
          };
          for (let round = 0; round < 40; round++) {
            for (const fs of streams) {
              const n = 1 + rand(40);
              assert.equal(pool.allocBulk(b, n), n);
              for (let i = 0; i < n; i++) {
                mb.write(b[i]!, packet(round * 64 + i));
                mb.setOlFlags(b[i]!, rand(0x200));
                mb.setOlFlagsHi(b[i]!, rand(0x7fffffff) & ~(1 << 30));
              }
              ethdev.txBurst(fs.txPort, 0, b, n);
              engine.fwd(fs); // from the ring and back into it (txonly: its own packets after ours)
              for (let got; (got = ethdev.rxBurst(fs.rxPort, 0, b, 64)) > 0; ) mb.freeBulk(b, got);
            }
          }
          for (const p of [0, 1]) ethdev.close(p);
          assertFull(pool);
          return heap;
        };
        assertSameHeaps(run('wasm'), run('ts'));
      });
    }
  }
});

describe('flowgen kernel and twin at several lengths', () => {
  // Headers only: bytes from 42 on stay as the (dirty) buffers held them, as in testpmd.
  const lens = [42, 43, 58, 64, 299, 1518];
  it(`leaves the heap byte for byte as its twin does at ${lens.join(', ')} B`, () => {
    const run = (datapath: 'wasm' | 'ts') => {
      const { heap, pool, ethdev, mb, fs } = loopPort(datapath);
      const b = heap.burst(64);
      // Every buffer dirty first: the payload must stay as it was.
      const n = pool.allocBulk(b, 64);
      for (let i = 0; i < n; i++) heap.u8.fill(0xa5, mb.mtod(b[i]!), mb.mtod(b[i]!) + 1600);
      mb.freeBulk(b, n);
      for (const len of lens) {
        const config = { ...defaultFwdConfig(), burst: 7, txPkts: [len], flowgenFlows: 3 };
        const engine = flowgen({ heap, mb, pool, burst: heap.burst(512), config });
        engine.fwd(fs);
        for (let got; (got = ethdev.rxBurst(0, 0, b, 64)) > 0; ) {
          for (let i = 0; i < got; i++) assert.ok(heap.u8.subarray(mb.mtod(b[i]!) + 42, mb.mtod(b[i]!) + len).every((x) => x === 0xa5), `${datapath} ${len} B: payload untouched`);
          mb.freeBulk(b, got);
        }
      }
      ethdev.close(0);
      assertFull(pool);
      return heap;
    };
    assertSameHeaps(run('wasm'), run('ts'));
  });
});
