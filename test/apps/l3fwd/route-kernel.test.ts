/**
 * l3fwd's forward kernel (l3fwd.as.ts) against its twin (l3fwd.twin.ts): the
 * same tables, lcore block and random bursts (IPv4 and IPv6 packets to every
 * route, misses, bad checksums, TTL and hop limit 1, short, oversize and
 * non-IP frames) on a wasm heap and on a TypeScript heap leave the two heaps
 * byte for byte the same: packets, tx buffers, drop list, counters. LPM
 * looks both families up; EM one family's keys (IPv4, or IPv6 as --ipv6).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_EM6_ROUTES, DEFAULT_EM_ROUTES, DEFAULT_LPM6_ROUTES, DEFAULT_LPM_ROUTES, EM6_KEY_LEN, em6Key, emKey } from '../../../src/apps/l3fwd/routes.js';
import { L3FWD_LCORE_SIZE, L3L_F_RX_OVERSIZE, L3L_FLAG_EM, L3L_MAC, L3L_MAX_PORTS, L3L_TX_BUF_LEN, L3L_W_DROPS, L3L_W_FLAGS, L3L_W_MAX_LEN, L3L_W_PORT_MASK, L3L_W_RX_PORT, L3L_W_TABLE, L3L_W_TABLE6, L3L_W_TX_BUFS, L3L_W_TX_LEN } from '../../../src/apps/l3fwd/l3fwd-layout.js';
import { l3fwdOps } from '../../../src/apps/l3fwd/l3fwd.twin.js';
import { Heap } from '../../../src/eal/heap.js';
import { Hash, hashFootprint } from '../../../src/hash/hash.js';
import { Lpm, lpmFootprint } from '../../../src/lpm/lpm.js';
import { Lpm6, lpm6Footprint } from '../../../src/lpm/lpm6.js';
import { Mbufs } from '../../../src/mem/mbuf.js';
import { Mempool } from '../../../src/mem/mempool.js';
import { ipv4CksumSet } from '../../../src/net/checksum.js';
import { assertFull, firstHeapDifference } from '../../helpers.js';
import { eth, ipv4, ipv6, udpSeg, payload } from '../../net/packets.js';

describe('l3fwd forward kernel and its twin', () => {
  for (const mode of ['lpm', 'em', 'em6'] as const) {
    it(`${mode}: leave the heap byte for byte the same over random bursts`, () => {
      let oversize = 0;
      const run = (datapath: 'wasm' | 'ts') => {
        const table = mode === 'lpm' ? lpmFootprint({ maxRules: 64, numberTbl8s: 4 }) + lpm6Footprint({ maxRules: 64, numberTbl8s: 128 }) : hashFootprint({ entries: 1024, keyLen: EM6_KEY_LEN });
        const heap = Heap.create({ size: table + (16 << 20), datapath });
        void heap.lcore;
        const pool = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 32 });
        const mb = new Mbufs(heap);
        let offset = 0;
        let offset6 = 0;
        if (mode === 'lpm') {
          const lpm = Lpm.create(heap, 'lpm', { maxRules: 64, numberTbl8s: 4 });
          for (const r of DEFAULT_LPM_ROUTES) lpm.add(r.ip, r.depth, r.port);
          lpm.add(0xc6120280, 25, 3); // 198.18.2.128/25 to port 3: a tbl8 group
          offset = lpm.offset;
          const lpm6 = Lpm6.create(heap, 'lpm6', { maxRules: 64, numberTbl8s: 128 });
          for (const r of DEFAULT_LPM6_ROUTES) lpm6.add(r.ip, r.depth, r.port);
          offset6 = lpm6.offset;
        } else if (mode === 'em') {
          const h = Hash.create(heap, 'em', { entries: 1024, keyLen: 16 });
          for (const r of DEFAULT_EM_ROUTES) h.addKey(emKey(r), r.port);
          offset = h.offset;
        } else {
          const h = Hash.create(heap, 'em6', { entries: 1024, keyLen: EM6_KEY_LEN });
          for (const r of DEFAULT_EM6_ROUTES) h.addKey(em6Key(r), r.port);
          offset6 = h.offset;
        }
        const s = heap.reserve(L3FWD_LCORE_SIZE);
        const sw = s >>> 2;
        heap.u32[sw + L3L_W_TABLE] = offset;
        heap.u32[sw + L3L_W_TABLE6] = offset6;
        heap.u32[sw + L3L_W_FLAGS] = mode === 'lpm' ? 0 : L3L_FLAG_EM;
        heap.u32[sw + L3L_W_MAX_LEN] = 1514;
        heap.u32[sw + L3L_W_MAX_LEN + 1] = 100; // port 1's MTU 86: longer frames dropped
        heap.u32[sw + L3L_W_PORT_MASK] = 0b1011; // ports 0, 1, 3
        heap.u32[sw + L3L_W_TX_BUFS] = heap.reserve(4 * L3L_MAX_PORTS * L3L_TX_BUF_LEN);
        heap.u32[sw + L3L_W_DROPS] = heap.reserve(4 * 64);
        for (let p = 0; p < 4; p++) heap.u8.set([2, 0, 0, 0, 0, p, 2, 0, 0, 0, 1, p], s + L3L_MAC + 16 * p);
        const route = l3fwdOps(heap, mb);
        const b = heap.burst(64);
        let rng = 7;
        const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
        const packet = (seed: number): Uint8Array => {
          const x = rand(16);
          const src = mode !== 'lpm' ? [198, 18, x, 1] : [10, 0, 0, rand(256)];
          const dst = [198, 18, rand(5) === 0 ? 200 : x, rand(256)];
          const p = ipv4(17, udpSeg(9, rand(4) === 0 ? 10 : 9, payload(rand(60), seed)), src, dst);
          switch (rand(10)) {
            case 0: p[10]! ^= 1; break; // bad checksum
            case 1: p[8] = 1; break; // TTL 1 (checksum now bad as well)
            case 7: // TTL 1 or 0, or a total length under 20, each with its checksum right
              if (rand(3) === 0) p[3] = 19;
              else p[8] = rand(2);
              ipv4CksumSet(p, 0);
              break;
            case 2: return Uint8Array.from({ length: rand(40) }, () => rand(256));
            case 3:
            case 4: {
              // IPv6 to 2001:200:0:X::, from 2001:200:0:X::1 (EM's flow X) or not; hop limit 1 sometimes.
              const dst6 = [0x20, 1, 2, 0, 0, 0, 0, rand(5) === 0 ? 0x40 : x, 0, 0, 0, 0, 0, 0, 0, rand(3) === 0 ? 5 : 0];
              const src6 = [0x20, 1, 2, 0, 0, 0, 0, x, 0, 0, 0, 0, 0, 0, 0, 1];
              const v6 = ipv6(17, udpSeg(9, rand(4) === 0 ? 10 : 9, payload(rand(60), seed)), src6, dst6);
              if (rand(8) === 0) v6[7] = 1;
              return eth(0x86dd, v6);
            }
            case 5:
            case 6: {
              // Four NOP options, which the header checksum covers; spoilt after the checksum is set, or not.
              const o = new Uint8Array(p.length + 4);
              o.set(p.subarray(0, 20));
              o.fill(1, 20, 24);
              o.set(p.subarray(20), 24);
              o[0] = 0x46;
              o[3] = o[3]! + 4;
              ipv4CksumSet(o, 0);
              if (rand(2) === 0) o[21]! ^= 0x80;
              return eth(0x0800, o);
            }
          }
          return eth(0x0800, p);
        };
        for (let round = 0; round < 50; round++) {
          const n = 1 + rand(32);
          assert.equal(pool.allocBulk(b, n), n);
          for (let i = 0; i < n; i++) mb.write(b[i]!, packet(round * 64 + i));
          heap.u32[sw + L3L_W_RX_PORT] = rand(2);
          const nd = route(s, b.byteOffset, n);
          mb.freeBulk(heap.burstAt(heap.u32[sw + L3L_W_DROPS]!, 64), nd);
          let sent = 0;
          for (let p = 0; p < L3L_MAX_PORTS; p++) {
            const len = heap.u32[sw + L3L_W_TX_LEN + p]!;
            heap.u32[sw + L3L_W_TX_LEN + p] = 0;
            sent += len;
            mb.freeBulk(heap.burstAt(heap.u32[sw + L3L_W_TX_BUFS]! + 4 * p * L3L_TX_BUF_LEN, L3L_TX_BUF_LEN), len);
          }
          assert.equal(sent + nd, n, 'every packet sent or dropped');
        }
        oversize = heap.f64[(s >>> 3) + L3L_F_RX_OVERSIZE]!;
        assertFull(pool);
        return heap;
      };
      const [w, t] = [run('wasm'), run('ts')];
      if (!Buffer.from(w.u8.buffer).equals(Buffer.from(t.u8.buffer))) assert.fail(`kernel and twin heaps differ first at byte ${firstHeapDifference(w, t)}`);
      assert.ok(oversize > 0, 'some frames on port 1 were longer than its MTU allows');
    });
  }
});
