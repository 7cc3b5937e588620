/**
 * A malicious guest against the vhost data path: random descriptor tables,
 * avail rings and indices (addresses outside the regions or into the guards
 * between them, huge lengths, loops, next beyond the table, nested and
 * misaligned indirect tables, read-only rx buffers, writable tx buffers).
 * The host must never throw, never write outside the guest's regions, never
 * lose an mbuf, and must count what it refused.
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
import { S_BAD_CHAINS, S_DROPS, S_LAST_AVAIL, STATE_SLOTS } from '../../src/vhost/vring-state.js';
import { Feature, bit } from '../../src/virtio/virtio-net.js';
import { DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE, vringSizes } from '../../src/virtio/vring.js';
import { assertFull } from '../helpers.js';

const KiB = 1024;
const GUARD = 16 * KiB;
const CANARY = 0xa5;
const ITERATIONS = Number(process.env.DPKIT_FUZZ_ITERATIONS ?? 100_000);

function hostileSetup(features: bigint, num: number, datapath: 'wasm' | 'ts') {
  const heap = Heap.create({ size: 32 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'host', n: 2048, cacheSize: 64 });
  const mb = new Mbufs(heap);
  // Two regions with guards around each; guards stay outside the memory table.
  const size0 = 64 * KiB;
  const size1 = 32 * KiB;
  const base = heap.reserve(GUARD + size0 + GUARD + size1 + GUARD, 4096, 'guest memory with guards');
  const r0 = base + GUARD;
  const r1 = r0 + size0 + GUARD;
  heap.u8.fill(CANARY, base, r0);
  heap.u8.fill(CANARY, r0 + size0, r1);
  heap.u8.fill(CANARY, r1 + size1, r1 + size1 + GUARD);
  const gpa0 = 0x4000_0000;
  const gpa1 = 0x2_0000_0000; // above 4 GiB: addresses have a high word
  const dev = new VhostDev(heap, 'net_vhost0', { queues: 1 });
  dev.handle({ req: Req.SET_OWNER });
  dev.handle({ req: Req.SET_FEATURES, features });
  dev.handle({
    req: Req.SET_MEM_TABLE,
    regions: [
      { gpa: gpa0, size: size0, userAddr: 0x7f00_0000_0000, heapOffset: r0 },
      { gpa: gpa1, size: size1, userAddr: 0x7f10_0000_0000, heapOffset: r1 },
    ],
  });
  const s = vringSizes(num);
  const ring = (index: number, at: number) => {
    dev.handle({ req: Req.SET_VRING_NUM, index, num });
    dev.handle({ req: Req.SET_VRING_BASE, index, num: 0 });
    const ua = 0x7f00_0000_0000 + at;
    dev.handle({ req: Req.SET_VRING_ADDR, index, desc: ua, avail: ua + s.desc, used: ua + 4096 });
    dev.handle({ req: Req.SET_VRING_KICK, index, notifier: -1 });
    dev.handle({ req: Req.SET_VRING_ENABLE, index, enable: true });
    return { desc: r0 + at, avail: r0 + at + s.desc, used: r0 + at + 4096 };
  };
  const rx = ring(0, 0);
  const tx = ring(1, 16 * KiB);
  assert.ok(dev.ready());
  const guardsIntact = () => {
    const u8 = heap.u8;
    for (const [a, b] of [
      [base, r0],
      [r0 + size0, r1],
      [r1 + size1, r1 + size1 + GUARD],
    ] as const) {
      for (let i = a; i < b; i++) if (u8[i] !== CANARY) return `guard byte at ${i - a} of [${a}, ${b}) written`;
    }
    return '';
  };
  return { heap, pool, mb, dev, rx, tx, r0, r1, gpa0, gpa1, size0, size1, guardsIntact };
}

describe('vhost against a hostile guest', () => {
  for (const [label, features, datapath] of [
    ['mergeable, indirect, event idx; wasm', bit(Feature.F_VERSION_1) | bit(Feature.NET_F_MRG_RXBUF) | bit(Feature.RING_F_INDIRECT_DESC) | bit(Feature.RING_F_EVENT_IDX), 'wasm'],
    ['plain VERSION_1; wasm', bit(Feature.F_VERSION_1), 'wasm'],
    ['mergeable, indirect, event idx; TypeScript twins', bit(Feature.F_VERSION_1) | bit(Feature.NET_F_MRG_RXBUF) | bit(Feature.RING_F_INDIRECT_DESC) | bit(Feature.RING_F_EVENT_IDX), 'ts'],
  ] as const) {
    it(`${ITERATIONS} random rings (${label}): no throw, no write outside guest memory, no lost mbuf, drops counted`, () => {
      const num = 16;
      const t = hostileSetup(features, num, datapath);
      const { heap, pool, mb, r0, gpa0, gpa1, size0, size1 } = t;
      const rand = seededRandom(0xbad5eed ^ Number(features & 0xffffn));
      const dv = heap.view;
      const enq = new VhostQueue(heap, t.dev.queueDesc(0, 0));
      const deq = new VhostQueue(heap, t.dev.queueDesc(1, 0));
      const burst = heap.burst(8);
      const out = heap.burst(8);
      /** A guest address: inside a region, across its end, in a guard, wild, or above 2^53. */
      const addr = (): number => {
        switch (rand(8)) {
          case 0:
            return gpa0 + size0 - rand(64); // runs off the end of region 0
          case 1:
            return gpa0 - 1 - rand(GUARD); // the guard below
          case 2:
            return gpa1 + rand(size1);
          case 3:
            return rand(2) === 0 ? 2 ** 64 - 1 - rand(4096) : 2 ** 53 + rand(1 << 20);
          case 4:
            return rand(2 ** 31) * 4;
          default:
            return gpa0 + 32 * KiB + rand(size0 - 32 * KiB); // above both rings
        }
      };
      const len = (): number => [0, 1, 11, 12, 13, 64, 2048, 9000, 65536, 2 ** 32 - 1][rand(10)]! + (rand(4) === 0 ? rand(100) : 0);
      const writeDesc = (table: number, i: number) => {
        const d = table + i * DESC_SIZE;
        const a = addr();
        dv.setUint32(d, a % 2 ** 32, true);
        dv.setUint32(d + 4, Math.floor(a / 2 ** 32) >>> 0, true);
        dv.setUint32(d + 8, len() >>> 0, true);
        dv.setUint16(d + 12, rand(8) & (VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | (rand(4) === 0 ? VRING_DESC_F_INDIRECT : 0)), true);
        dv.setUint16(d + 14, rand(5) === 0 ? rand(0x10000) : rand(num), true);
      };
      const guestAvail = [0, 0];
      let delivered = 0;
      let received = 0;
      for (let it = 0; it < ITERATIONS; it++) {
        for (const [q, ring] of [
          [0, t.rx],
          [1, t.tx],
        ] as const) {
          // Rewrite a few descriptors, some as indirect tables pointing into region 0 with random entries.
          for (let k = rand(4); k >= 0; k--) writeDesc(ring.desc, rand(num));
          if (rand(8) === 0) {
            const i = rand(num);
            const tableOff = 40 * KiB + rand(16) * 256;
            const entries = 1 + rand(12);
            for (let e = 0; e < entries; e++) writeDesc(r0 + tableOff, e);
            const d = ring.desc + i * DESC_SIZE;
            dv.setUint32(d, gpa0 + tableOff + (rand(8) === 0 ? 2 : 0), true);
            dv.setUint32(d + 4, 0, true);
            dv.setUint32(d + 8, entries * DESC_SIZE + (rand(8) === 0 ? 3 : 0), true);
            dv.setUint16(d + 12, VRING_DESC_F_INDIRECT | (rand(8) === 0 ? VRING_DESC_F_NEXT : 0), true);
          }
          // Good descriptors too, so packets do flow and the deep paths run.
          for (let k = rand(6); k > 0; k--) {
            const i = rand(num);
            const d = ring.desc + i * DESC_SIZE;
            dv.setUint32(d, gpa0 + 48 * KiB + rand(8) * 2048, true);
            dv.setUint32(d + 4, 0, true);
            dv.setUint32(d + 8, 2048, true);
            dv.setUint16(d + 12, q === 0 ? VRING_DESC_F_WRITE : 0, true);
          }
          const entries = 1 + rand(num);
          for (let e = 0; e < entries; e++) dv.setUint16(ring.avail + 4 + 2 * ((heap.f64[t.dev.states + q * STATE_SLOTS + S_LAST_AVAIL]! + e) % num), rand(6) === 0 ? rand(0x10000) : rand(num), true);
          // Mostly a plausible avail index (entries past the host's place); sometimes a wild one for this round.
          const host = heap.f64[t.dev.states + q * STATE_SLOTS + S_LAST_AVAIL]!;
          guestAvail[q] = (host + entries) & 0xffff;
          Atomics.store(heap.u16, (ring.avail + 2) >>> 1, rand(20) === 0 ? rand(0x10000) : guestAvail[q]!);
        }
        // Host -> guest: a few packets, some chained.
        const n = 1 + rand(8);
        for (let i = 0; i < n; i++) {
          const m = pool.alloc();
          mb.append(m, 1 + rand(2000));
          if (rand(4) === 0) {
            const m2 = pool.alloc();
            mb.append(m2, 1 + rand(2000));
            mb.chain(m, m2);
          }
          burst[i] = m;
        }
        let sent = 0;
        assert.doesNotThrow(() => (sent = enq.enqueueBurst(burst, n)));
        mb.freeBulk(burst, n); // taken or not, the test is done with them
        assert.ok(sent >= 0 && sent <= n);
        delivered += sent;
        let got = 0;
        assert.doesNotThrow(() => (got = deq.dequeueBurst(pool, out, 8)));
        assert.ok(got >= 0 && got <= 8);
        received += got;
        for (let i = 0; i < got; i++) assert.ok(mb.pktLen(out[i]!) > 0 && mb.pktLen(out[i]!) <= 65535);
        mb.freeBulk(out, got);
        if (it % 5000 === 0) assert.equal(t.guardsIntact(), '', `iteration ${it}`);
      }
      assert.equal(t.guardsIntact(), '');
      assertFull(pool);
      const f = heap.f64;
      const bad = f[t.dev.states + S_BAD_CHAINS]! + f[t.dev.states + STATE_SLOTS + S_BAD_CHAINS]!;
      const drops = f[t.dev.states + S_DROPS]!;
      // Both kinds of outcome happened: good chains carried packets, bad ones were refused and counted.
      assert.ok(bad > ITERATIONS / 10, `bad chains counted: ${bad}`);
      
      assert.ok(delivered > ITERATIONS / 20 && received > ITERATIONS / 20, `packets still flow: ${delivered} enqueued (${drops} dropped as too big), ${received} dequeued`);
    });
  }
});
