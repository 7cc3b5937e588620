import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap, type Burst } from '../../src/eal/heap.js';
import { ProbeRx, ProbeTx } from '../../src/gen/probe.js';
import { histHighest, histIndex } from '../../src/gen/hist.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { PTX_D_SEQ } from '../../src/gen/probe-layout.js';
import { IPPROTO_TCP, IPPROTO_UDP } from '../../src/net/headers.js';
import { assertFull, assertSameHeaps } from '../helpers.js';
import { assertIpv4Valid, assertIpv6L4Valid, eth, ipv4, ipv6, payload, tcpSeg, udpSeg } from '../net/packets.js';

function rig(datapath: 'wasm' | 'ts' = 'wasm') {
  const heap = Heap.create({ size: 32 << 20, datapath });
  const mp = Mempool.create(heap, { name: 'probe', n: 4096, cacheSize: 32 });
  const mb = new Mbufs(heap);
  const burst = heap.burst(64);
  /** Allocates one mbuf per frame and writes it. */
  const fill = (frames: Uint8Array[], into: Burst = burst): number => {
    assert.equal(mp.allocBulk(into, frames.length), frames.length);
    frames.forEach((f, i) => assert.ok(mb.write(into[i]!, f)));
    return frames.length;
  };
  const bytes = (h: number) => Uint8Array.from(heap.u8.subarray(mb.mtod(h), mb.mtod(h) + mb.dataLen(h)));
  return { heap, mp, mb, burst, fill, bytes };
}

const udp4 = (n: number) => eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1000, 2000, payload(n, 3))));

describe('probes', () => {
  for (const datapath of ['wasm', 'ts'] as const) {
    it(`stamp the last 16 bytes and keep UDP and TCP checksums over IPv4 and IPv6 valid, at odd and even offsets (${datapath})`, () => {
      const r = rig(datapath);
      const frames = [
        udp4(18), // a 60-byte frame: the smallest Ethernet frame carries one
        udp4(19),
        eth(0x0800, ipv4(IPPROTO_TCP, tcpSeg(1, 2, payload(33, 1)))),
        eth(0x86dd, ipv6(IPPROTO_UDP, udpSeg(7, 8, payload(40, 2)))),
        eth(0x86dd, ipv6(IPPROTO_TCP, tcpSeg(7, 8, payload(21, 2)))),
        Uint8Array.of(1, 2, 3), // too short: left alone
      ];
      const n = r.fill(frames);
      const tx = ProbeTx.create(r.heap, 0x123456);
      assert.equal(tx.stampAt(r.burst, n, 2 ** 49 + 12345), 5);
      assert.deepEqual([tx.sent, tx.stamped, tx.short, tx.stream], [5, 5, 1, 0x123456]);
      const got = Array.from({ length: n }, (_, i) => r.bytes(r.burst[i]!));
      got.forEach((b, i) => {
        if (i === 5) return assert.deepEqual([...b], [1, 2, 3]);
        const sig = new DataView(b.buffer, b.length - 16);
        assert.equal(sig.getUint32(0, true), i, 'sequence number');
        assert.equal(sig.getUint32(4, true), 0xa5123456, 'stream and magic');
        assert.equal(sig.getUint32(8, true) + sig.getUint16(12, true) * 2 ** 32, 12345, 'tx time modulo 2^48');
        assert.deepEqual([...b.subarray(0, b.length - 16)], [...frames[i]!.subarray(0, b.length - 16)], 'the rest untouched');
      });
      assertIpv4Valid(got[0]!);
      assertIpv4Valid(got[1]!);
      assertIpv4Valid(got[2]!);
      assertIpv6L4Valid(got[3]!);
      assertIpv6L4Valid(got[4]!);
      r.mb.freeBulk(r.burst, n);
      assertFull(r.mp);
    });
  }

  it('count loss, duplicates and reordering exactly, and each latency into its stream\'s histogram', () => {
    const r = rig();
    const tx = [ProbeTx.create(r.heap, 0), ProbeTx.create(r.heap, 1)];
    const rx = ProbeRx.create(r.heap, { streams: 2, histogram: { bits: 7 } });
    // Stream 0: 10 probes sent at t=1000; arrive 0 1 3 2 2 5 6 8 9 (4 and 7 lost, 2 late and again).
    const n = r.fill(Array.from({ length: 10 }, () => udp4(20)));
    tx[0]!.stampAt(r.burst, n, 1000);
    const order = [0, 1, 3, 2, 2, 5, 6, 8, 9];
    const arr = r.heap.burst(16);
    order.forEach((s, i) => (arr[i] = r.burst[s]!));
    assert.equal(rx.checkAt(arr, order.length, 1000 + 700), order.length);
    // Stream 1: 3 probes, received 1700 ns and 90 µs later; a foreign packet (no probe) beside them.
    const b1 = r.heap.burst(4);
    r.fill([udp4(20), udp4(20), udp4(20), udp4(20)], b1);
    tx[1]!.stampAt(b1, 3, 5000);
    rx.checkAt(b1, 2, 6700);
    arr[0] = b1[2]!;
    arr[1] = b1[3]!;
    rx.checkAt(arr, 2, 95_000);
    const s0 = rx.stream(0, tx[0]!.sent);
    assert.deepEqual(
      { received: s0.received, lost: s0.lost, duplicates: s0.duplicates, reordered: s0.reordered, late: s0.late, firstSeq: s0.firstSeq, lastSeq: s0.lastSeq },
      { received: 8, lost: 2, duplicates: 1, reordered: 1, late: 0, firstSeq: 0, lastSeq: 9 },
    );
    assert.deepEqual([s0.latency.count, s0.latency.min, s0.latency.max], [9, 700, 700]);
    const s1 = rx.stream(1);
    assert.deepEqual([s1.received, s1.lost, s1.duplicates, s1.reordered], [3, 0, 0, 0]);
    assert.deepEqual([s1.latency.min, s1.latency.max, s1.latency.p50], [1700, 90_000, Math.min(histHighest(7, histIndex(7, 1700)), 90_000)]);
    assert.deepEqual([rx.probes, rx.foreign, rx.skew], [12, 1, 0]);
    // Losses after the last arrival count once the sender's count is given.
    assert.equal(rx.stream(1, 5).lost, 2);
    r.mb.freeBulk(r.burst, n);
    r.mb.freeBulk(b1, 4);
    assertFull(r.mp);
  });

  it('kernels and twins leave the heap byte for byte the same over random arrivals: loss, duplicates, reordering past the window, sequence wrap, clock skew', () => {
    const run = (datapath: 'wasm' | 'ts') => {
      const r = rig(datapath);
      const rand = seeded(99);
      const txs = [0, 1, 2].map((s) => ProbeTx.create(r.heap, s));
      r.heap.f64[(txs[1]!.block >>> 3) + PTX_D_SEQ] = 2 ** 32 - 40; // stream 1 wraps its 32 bits
      const rx = ProbeRx.create(r.heap, { streams: 2, histogram: { bits: 8, maxNs: 1e9 } });
      const held = r.heap.burst(4096);
      let nHeld = 0;
      const arr = r.heap.burst(64);
      for (let round = 0; round < 200; round++) {
        const s = rand() < 0.6 ? 0 : 1 + Math.floor(rand() * 2);
        const k = 1 + Math.floor(rand() * 32);
        const b = r.heap.burstAt(held.byteOffset + nHeld * 4, k);
        r.fill(Array.from({ length: k }, () => udp4(10 + Math.floor(rand() * 40))), b);
        txs[s]!.stampAt(b, k, 1e6 * (round + 1) + Math.floor(rand() * 1000));
        nHeld += k;
        // Deliver a random pick of everything held so far: repeats, old ones, new ones.
        const m = Math.floor(rand() * 64);
        for (let i = 0; i < m; i++) arr[i] = held[Math.floor(rand() * rand() * nHeld)]!;
        arr[m] = held[nHeld - 1]!; // the newest, which a skewed rx clock sees stamped in its future
        rx.checkAt(arr, m + 1, 1e6 * round + (rand() < 0.1 ? 5e5 : Math.floor(rand() * 1e7) + 1e6));
      }
      const a = rx.stream(0);
      const b = rx.stream(1);
      assert.ok(rx.skew > 0 && rx.foreign > 0 && a.duplicates > 0 && a.reordered > 0 && a.late + b.late > 0 && b.lastSeq > 2 ** 32, 'every case was met');
      r.mb.freeBulk(held, nHeld);
      assertFull(r.mp);
      return r.heap;
    };
    assertSameHeaps(run('wasm'), run('ts'));
  });
});

/** A seeded generator (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
