import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { genOps } from '../../src/gen/gen.twin.js';
import { buildStream, writeStream, type StreamSpec } from '../../src/gen/stream.js';
import { ipv4CksumVerify, ipv4UdptcpCksumVerify, ipv6UdptcpCksumVerify } from '../../src/net/checksum.js';
import { assertFull, assertSameHeaps } from '../helpers.js';

const MAC = Uint8Array.of(2, 0, 0, 0, 0, 1);

/** Specs that between them use every variable kind, header and size mode. */
const SPECS: StreamSpec[] = [
  { name: 'plain' },
  {
    name: 'v4-udp-vars',
    size: { min: 60, max: 300, mode: 'random' },
    vary: [
      { field: 'ipv4.src', mode: 'inc', count: 5, min: '10.0.0.250' },
      { field: 'ipv4.dst', mode: 'random', min: '10.1.0.0', max: '10.1.255.255' },
      { field: 'udp.src', mode: 'dec', min: 1000, max: 1003 },
      { field: 'udp.dst', mode: 'list', values: [53, 80, 443] },
      { field: 'eth.dst', mode: 'inc', step: 3 },
      { field: 'ipv4.ttl', mode: 'random', min: 1, max: 255 },
    ],
    seed: 7,
  },
  { name: 'v4-tcp-imix', tcp: { src: 1234, dst: 80 }, size: 'imix', vary: [{ field: 'tcp.src', mode: 'random' }, { field: 'ipv4.tos', mode: 'inc' }] },
  { name: 'v6-udp-range', ipv6: { src: 'fd00::10', dst: '2001:db8::1' }, eth: { vlan: 100 }, size: { min: 80, max: 120 }, vary: [{ field: 'ipv6.dst', mode: 'inc', count: 1000 }, { field: 'vlan.tci', mode: 'list', values: [100, 200] }] },
  { name: 'v6-tcp', ipv6: {}, tcp: {}, size: 100, vary: [{ field: 'ipv6.src', mode: 'random' }, { field: 'tcp.dst', mode: 'inc', count: 3 }, { field: { offset: 80, width: 4 }, mode: 'inc' }] },
  { name: 'raw', raw: '0102030405060708090a0b0c0d0e0f10111213141516171819', vary: [{ field: { offset: 3, width: 2 }, mode: 'random' }, { field: { offset: 10, width: 1 }, mode: 'dec', count: 4 }] },
];

function run(datapath: 'wasm' | 'ts', spec: StreamSpec, bursts: number[]) {
  const heap = Heap.create({ size: 8 << 20, datapath });
  const mp = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 0 });
  const mb = new Mbufs(heap);
  const s = writeStream(heap, buildStream(spec, 0, MAC));
  const ops = genOps(heap);
  const burst = heap.burst(64);
  const packets: Uint8Array[] = [];
  const bytes: number[] = [];
  for (const n of bursts) {
    assert.equal(mp.allocBulk(burst, n), n);
    bytes.push(ops.fill(s, heap.lcore, burst.byteOffset, n));
    ops.csum(s, heap.lcore, burst.byteOffset, n);
    for (let i = 0; i < n; i++) packets.push(mb.read(burst[i]!).slice());
    mb.freeBulk(burst, n);
  }
  return { heap, mp, packets, bytes };
}

describe('genFill and genCsum (gen.as.ts) and their twins', () => {
  for (const spec of SPECS) {
    it(`${spec.name}: the kernels and the twins leave the same heap, byte for byte`, () => {
      const bursts = [1, 32, 7, 64, 3, 64];
      const w = run('wasm', spec, bursts);
      const t = run('ts', spec, bursts);
      assert.deepEqual(w.bytes, t.bytes);
      assertSameHeaps(w.heap, t.heap);
      assertFull(w.mp, t.mp);
    });

    it(`${spec.name}: every packet's checksums and length fields are right`, () => {
      const { packets, bytes } = run('wasm', spec, [64, 64, 43]);
      assert.equal(bytes.reduce((a, b) => a + b, 0), packets.reduce((a, p) => a + p.length, 0));
      for (const p of packets) {
        if (spec.raw !== undefined) continue;
        const l3 = spec.eth?.vlan !== undefined ? 18 : 14;
        const v = new DataView(p.buffer, p.byteOffset);
        if (spec.ipv6) {
          assert.equal(v.getUint16(l3 + 4), p.length - l3 - 40, 'IPv6 payload length');
          assert.ok(ipv6UdptcpCksumVerify(p, l3, l3 + 40), `${spec.name}: L4 checksum of a ${p.length}-byte packet`);
        } else {
          assert.equal(v.getUint16(l3 + 2), p.length - l3, 'IPv4 total length');
          assert.ok(ipv4CksumVerify(p, l3), 'IPv4 header checksum');
          assert.ok(ipv4UdptcpCksumVerify(p, l3, l3 + 20), `${spec.name}: L4 checksum of a ${p.length}-byte packet`);
        }
        if (!spec.tcp) assert.equal(v.getUint16(l3 + (spec.ipv6 ? 40 : 20) + 4), p.length - l3 - (spec.ipv6 ? 40 : 20), 'UDP length');
      }
    });
  }

  it('inc wraps after count, dec runs from max down, list cycles, random stays in range and repeats from its seed', () => {
    const spec = SPECS[1]!;
    const a = run('ts', spec, [64]).packets;
    const b = run('ts', spec, [64]).packets;
    assert.deepEqual(a, b, 'the same seed draws the same packets');
    a.forEach((p, i) => {
      const v = new DataView(p.buffer, p.byteOffset);
      assert.equal(v.getUint32(26), (0x0a0000fa + (i % 5)) >>> 0, 'ipv4.src: 10.0.0.250 + i mod 5');
      assert.equal(v.getUint16(34), 1003 - (i % 4), 'udp.src: 1003 down to 1000');
      assert.equal(v.getUint16(36), [53, 80, 443][i % 3], 'udp.dst: the list in order');
      assert.equal(v.getUint32(2), (2 + 3 * i) >>> 0, 'eth.dst low bytes: from the template value, step 3');
      assert.ok(v.getUint32(30) >= 0x0a010000 && v.getUint32(30) <= 0x0a01ffff, 'ipv4.dst in its range');
      assert.ok(p.length >= 60 && p.length <= 300, 'size in its range');
      assert.ok(p[22]! >= 1, 'ttl at least 1');
    });
    assert.ok(new Set(a.map((p) => p.length)).size > 10, 'random sizes vary');
  });

  it('imix sends 64, 570 and 1518 bytes as 7:4:1', () => {
    const sizes = run('ts', SPECS[2]!, [64, 64, 64, 48]).packets.map((p) => p.length);
    const count = (n: number) => sizes.filter((s) => s === n).length;
    assert.deepEqual([count(64), count(570), count(1518)], [140, 80, 20]);
  });
});
