import assert from 'node:assert/strict';
import { it } from 'node:test';
import { defaultFwdConfig, type FwdConfig, type FwdContext, type FwdStream } from '../../src/fwd/engine.js';
import { macswap } from '../../src/fwd/macswap.js';
import { drivers } from '../../src/drivers/index.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';
import { be16 } from '../net/packets.js';

/** The same ports and pool on one datapath: net_ring0 (looped) and net_null0,size=… */
function side(datapath: 'wasm' | 'ts', nullSize: number) {
  const heap = Heap.create({ size: 32 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'pool', n: 2048, cacheSize: 64, dataRoomSize: 128 + 1600 });
  const ethdev = new Ethdev(heap, drivers);
  for (const name of ['net_ring0', `net_null0,size=${nullSize}`]) portUp(ethdev, pool, ethdev.create(name));
  const mb = new Mbufs(heap);
  // One burst array per side, in the heap so the kernels work on it.
  return { heap, pool, ethdev, mb, burst: heap.burst(512) };
}

type Side = ReturnType<typeof side>;

function ctxOf(s: Side, config: FwdConfig): FwdContext {
  return { heap: s.heap, mb: s.mb, pool: s.pool, burst: s.burst, config };
}

/** The stream that receives from and sends back to the looped net_ring port 0, with fresh counters. */
function loopStream(s: Side, macs = { txMac: new Uint8Array(6), peerMac: new Uint8Array(6) }, stats = s.heap.reserve(64) >>> 3): FwdStream {
  return { rxPort: 0, rxQueue: 0, txPort: 0, txQueue: 0, rxq: s.ethdev.rxQueue(0, 0), txq: s.ethdev.txQueue(0, 0), stats, ...macs };
}

/** Closes both sides' ports (the ring drains back) and checks every pool is full. */
function closeSides(sides: Side[]): void {
  for (const s of sides) {
    s.ethdev.close(0);
    s.ethdev.close(1);
    assertFull(s.pool);
  }
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
      const config = { ...defaultFwdConfig(), txOffloads: offloads, vlanTci: 100 + round, vlanTciOuter: 200 + round, variants: { macswap: variant } };
      const ctx = ctxOf(s, config);
      const fs = loopStream(s);
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
  closeSides(sides);
});

it('macFwd and txonlyFill kernels do what their TypeScript twins do', async () => {
  const { mac } = await import('../../src/fwd/mac.js');
  const { txonly } = await import('../../src/fwd/txonly.js');
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
      const ctx = ctxOf(s, config);
      const fs = loopStream(s, { txMac: Uint8Array.of(0xa, 0xb, 0xc, 0xd, 0xe, round), peerMac: Uint8Array.of(2, 0, 0, 0, 0, round) });
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
  closeSides(sides);
});

it('the fiveTupleSwap kernel does what its TypeScript twin does, over valid, truncated and garbage headers', async () => {
  const { fiveTupleSwap } = await import('../../src/fwd/5tswap.js');
  const sides = [side('wasm', 64), side('ts', 64)];
  assert.ok(sides[0]!.heap.kernels && !sides[1]!.heap.kernels);
  let rng = 11;
  // The high bits, as above.
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  const bytes = (n: number) => Array.from({ length: n }, () => rand(256));
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;

  /** One packet: mostly well-formed Ethernet/VLAN/IP/L4 with random corruption, some garbage or runts. */
  function packet(): number[] {
    const kind = rand(16);
    if (kind === 0) return bytes(1 + rand(13)); // runt: no Ethernet header
    if (kind === 1) return bytes(14 + rand(120)); // garbage
    const p = bytes(12); // MACs
    const tags = pick([0, 0, 0, 1, 1, 2, 2, 3]);
    for (let t = 0; t < tags; t++) p.push(...be16(t === 0 && tags > 1 ? pick([0x88a8, 0x8100]) : 0x8100), ...bytes(2));
    const l3 = pick(['ipv4', 'ipv4', 'ipv4', 'ipv6', 'ipv6', 'arp', 'other'] as const);
    const l4proto = pick([17, 17, 6, 6, 1, 58, 0, rand(256)]);
    const l4: number[] = [];
    if (l4proto === 17) l4.push(...bytes(4), ...bytes(4));
    else if (l4proto === 6) {
      // Data offset mostly 5..15 (with options), sometimes below 5.
      const doff = rand(5) === 0 ? rand(5) : 5 + rand(11);
      const hdr = bytes(Math.max(20, doff * 4));
      hdr[12] = (doff << 4) | (hdr[12]! & 0x0f);
      l4.push(...hdr);
    } else l4.push(...bytes(8));
    l4.push(...bytes(rand(3) === 0 ? 0 : rand(60)));
    if (l3 === 'ipv4') {
      p.push(...be16(0x0800));
      const ihl = rand(6) === 0 ? rand(16) : pick([5, 5, 5, 6, 10, 15]);
      const hlen = Math.max(20, ihl * 4);
      const h = bytes(hlen);
      h[0] = ((rand(10) === 0 ? rand(16) : 4) << 4) | ihl;
      // Total length: exact, cutting into the L4 header or payload, below the header's own length, or random.
      const exact = ihl * 4 + l4.length;
      const total = pick([exact, exact, exact, exact - rand(l4.length + 1), rand(ihl * 4 + 1), rand(0x10000)]);
      [h[2], h[3]] = be16(total & 0xffff);
      // Fragments: MF only (first fragment: L4 parsed), a non-zero offset (no L4), DF, none.
      const frag = pick([0, 0, 0x4000, 0x2000, 0x2000 | (1 + rand(0x1fff)), 1 + rand(0x1fff)]);
      [h[6], h[7]] = be16(frag);
      h[9] = l4proto === 58 ? 1 : l4proto;
      p.push(...h, ...l4);
    } else if (l3 === 'ipv6') {
      p.push(...be16(0x86dd));
      const h = bytes(40);
      h[0] = ((rand(10) === 0 ? rand(16) : 6) << 4) | (h[0]! & 0x0f);
      const plen = rand(6) === 0 ? rand(0x10000) : l4.length - (rand(4) === 0 ? rand(l4.length + 1) : 0);
      [h[4], h[5]] = be16(plen);
      h[6] = l4proto === 1 ? 58 : l4proto;
      p.push(...h, ...l4);
    } else if (l3 === 'arp') {
      p.push(...be16(0x0806), ...bytes(28));
    } else {
      p.push(...be16(rand(0x10000)), ...bytes(rand(80)));
    }
    // Truncated at a random point: inside the tags, IP header, options or L4 header.
    if (rand(4) === 0) p.length = 1 + rand(p.length);
    return p;
  }

  const seen = { runt: 0, l2Only: 0, vlan: 0, qinq: 0, ipv4: 0, ipv4Opts: 0, ipv6: 0, udp: 0, tcp: 0, tcpOpts: 0, l3NoL4: 0 };
  for (let round = 0; round < 300; round++) {
    const n = 1 + rand(40);
    const pkts = Array.from({ length: n }, packet);
    const shifts = Array.from({ length: n }, () => rand(4)); // odd data offsets: unaligned loads
    const flags = Array.from({ length: n }, () => [rand(0x7fffffff), rand(0x7fffffff), rand(0x80), rand(0x10000), rand(0x100)]);
    const offloads = pick([0, TxOffload.VLAN_INSERT, TxOffload.QINQ_INSERT, TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT]);
    const results = sides.map((s) => {
      const b = s.heap.burst(64);
      assert.equal(s.pool.allocBulk(b, n), n);
      for (let i = 0; i < n; i++) {
        const h = b[i]!;
        s.mb.write(h, Uint8Array.from([...bytes(shifts[i]!), ...pkts[i]!]));
        s.mb.adj(h, shifts[i]!);
        const f = flags[i]!;
        s.mb.setOlFlags(h, f[0]!);
        s.mb.setOlFlagsHi(h, f[1]! & ~(1 << 30));
        s.mb.setTxOffload(h, f[2]!, f[3]!, f[4]!);
      }
      s.ethdev.txBurst(0, 0, b, n);
      const config = { ...defaultFwdConfig(), txOffloads: offloads, vlanTci: 300 + round, vlanTciOuter: 900 + round };
      const ctx = ctxOf(s, config);
      const fs = loopStream(s);
      fiveTupleSwap(ctx).fwd(fs); // receives from the ring and sends back into it
      const out = s.heap.burst(64);
      const got = s.ethdev.rxBurst(0, 0, out, 64);
      const snap = [...out.subarray(0, got)].map((h) => snapshot(s.mb, h));
      s.mb.freeBulk(out, got);
      return snap;
    });
    assert.equal(results[1]!.length, n);
    assert.deepEqual(results[0], results[1], `round ${round}`);
    // What the rounds covered, from the twin's tx lengths (meta: …, l2Len, l3Len, l4Len, …).
    for (let i = 0; i < n; i++) {
      const [l2, l3, l4] = results[1]![i]!.meta.slice(6, 9) as [number, number, number];
      const proto = l3 === 40 ? pkts[i]![l2 + 6] : pkts[i]![l2 + 9];
      if (l2 === 0) seen.runt++;
      else if (l3 === 0) seen.l2Only++;
      if (l2 === 18) seen.vlan++;
      if (l2 === 22) seen.qinq++;
      if (l3 !== 0 && l3 !== 40) seen.ipv4++;
      if (l3 > 20 && l3 !== 40) seen.ipv4Opts++;
      if (l3 === 40) seen.ipv6++;
      if (l4 === 0 && l3 !== 0) seen.l3NoL4++;
      if (l4 !== 0 && proto === 17) seen.udp++;
      if (l4 !== 0 && proto === 6) seen.tcp++;
      if (l4 > 20 && proto === 6) seen.tcpOpts++;
    }
  }
  for (const [k, v] of Object.entries(seen)) assert.ok(v >= 20, `coverage: ${k} ${v}`);
  closeSides(sides);
});

it('the csum kernel does what its TypeScript twin does: bytes, metadata and bad-checksum counters', async () => {
  const { csum } = await import('../../src/fwd/csum.js');
  const { FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM } = await import('../../src/fwd/engine.js');
  const { OlFlags } = await import('../../src/mem/mbuf-layout.js');
  const { newHdrInfo, parseHeaders } = await import('../../src/net/headers.js');
  const { ipv4CksumSet, ipv4UdptcpCksum, ipv6UdptcpCksum } = await import('../../src/net/checksum.js');
  const sides = [side('wasm', 64), side('ts', 64)];
  assert.ok(sides[0]!.heap.kernels && !sides[1]!.heap.kernels);
  let rng = 23;
  // The high bits, as above.
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  const bytes = (n: number) => Array.from({ length: n }, () => rand(256));
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
  const info = newHdrInfo();
  const seen = { runt: 0, l2Only: 0, vlan: 0, qinq: 0, ipv4: 0, ipv4Opts: 0, ipv6: 0, udp4: 0, udp6: 0, tcp4: 0, tcp6: 0, tcpOpts: 0, l3NoL4: 0, badIp: 0, badL4: 0, udp6SumZero: 0 };

  /** One packet: mostly well-formed Ethernet/VLAN/IP/UDP/TCP with right, zero or wrong checksums; some garbage, runts, cut or overlong. */
  function packet(): number[] {
    const kind = rand(16);
    if (kind === 0) return bytes(1 + rand(13)); // runt: no Ethernet header
    if (kind === 1) return bytes(14 + rand(120)); // garbage
    const p = bytes(12);
    const tags = pick([0, 0, 0, 0, 1, 1, 2, 3]);
    for (let t = 0; t < tags; t++) p.push(...be16(t === 0 && tags > 1 ? pick([0x88a8, 0x8100]) : 0x8100), ...bytes(2));
    const l3 = pick(['ipv4', 'ipv4', 'ipv4', 'ipv6', 'ipv6', 'arp', 'other'] as const);
    const l4proto = pick([17, 17, 17, 6, 6, 6, 1, 58, rand(256)]);
    const l4: number[] = [];
    if (l4proto === 17) l4.push(...bytes(8));
    else if (l4proto === 6) {
      const doff = rand(6) === 0 ? rand(5) : 5 + rand(11);
      const hdr = bytes(Math.max(20, doff * 4));
      hdr[12] = (doff << 4) | (hdr[12]! & 0x0f);
      l4.push(...hdr);
    } else l4.push(...bytes(8));
    l4.push(...bytes(rand(3) === 0 ? rand(2) : rand(1200))); // odd and even payloads
    if (l3 === 'ipv4') {
      p.push(...be16(0x0800));
      const ihl = rand(8) === 0 ? rand(16) : pick([5, 5, 5, 6, 10, 15]);
      const h = bytes(Math.max(20, ihl * 4));
      h[0] = ((rand(12) === 0 ? rand(16) : 4) << 4) | ihl;
      const exact = ihl * 4 + l4.length;
      // Exact, short of the data, past the data (IP length exceeds the packet), below the header, random.
      const total = pick([exact, exact, exact, exact, exact - rand(l4.length + 1), exact + 1 + rand(40), rand(ihl * 4 + 1), rand(0x10000)]);
      [h[2], h[3]] = be16(total & 0xffff);
      const frag = pick([0, 0, 0, 0x4000, 0x4000, 0x2000, 0x2000 | (1 + rand(0x1fff)), 1 + rand(0x1fff)]);
      [h[6], h[7]] = be16(frag);
      h[9] = l4proto === 58 ? 1 : l4proto;
      p.push(...h, ...l4);
    } else if (l3 === 'ipv6') {
      p.push(...be16(0x86dd));
      const h = bytes(40);
      h[0] = ((rand(12) === 0 ? rand(16) : 6) << 4) | (h[0]! & 0x0f);
      const plen = pick([l4.length, l4.length, l4.length, l4.length - rand(l4.length + 1), l4.length + 1 + rand(40), rand(0x10000)]);
      [h[4], h[5]] = be16(plen & 0xffff);
      h[6] = l4proto === 1 ? 58 : l4proto;
      p.push(...h, ...l4);
    } else if (l3 === 'arp') {
      p.push(...be16(0x0806), ...bytes(28));
    } else {
      p.push(...be16(rand(0x10000)), ...bytes(rand(80)));
    }
    // Checksums: right (most), zero, or left random (wrong).
    const u8 = Uint8Array.from(p);
    parseHeaders(u8, 0, u8.length, info);
    if (info.l3Off !== 0 && info.l4Proto >= 0) {
      const v4 = info.l3Len !== 40;
      if (v4 && rand(4) !== 0) ipv4CksumSet(u8, info.l3Off);
      if (info.l4Off !== 0 && info.l3Complete && (info.l4Proto === 17 || info.l4Proto === 6)) {
        const field = info.l4Off + (info.l4Proto === 17 ? 6 : 16);
        const c = rand(8);
        const v = c < 5 ? (v4 ? ipv4UdptcpCksum(u8, info.l3Off, info.l4Off) : ipv6UdptcpCksum(u8, info.l3Off, info.l4Off)) : c < 7 ? 0 : rand(0x10000);
        u8[field] = v >>> 8;
        u8[field + 1] = v;
        if (!v4 && info.l4Proto === 17 && rand(3) === 0) {
          // IPv6 UDP whose right checksum is 0 (sent as 0xffff) but that carries 0: the sum lands in the length word.
          u8[field] = u8[field + 1] = 0;
          const c = ipv6UdptcpCksum(u8, info.l3Off, info.l4Off);
          let w = ((u8[info.l4Off + 4]! << 8) | u8[info.l4Off + 5]!) + c;
          w = (w & 0xffff) + (w >>> 16);
          u8[info.l4Off + 4] = w >>> 8;
          u8[info.l4Off + 5] = w;
          seen.udp6SumZero++;
        }
      }
    }
    const out = [...u8];
    // Truncated after the checksums: the IP length now exceeds the data.
    if (rand(5) === 0) out.length = 1 + rand(out.length);
    return out;
  }

  const status = [0, 0, 0, 0, 1, 2, 3]; // neither (most), GOOD, BAD, both
  const ipFlag = [0, OlFlags.RX_IP_CKSUM_GOOD, OlFlags.RX_IP_CKSUM_BAD, OlFlags.RX_IP_CKSUM_GOOD | OlFlags.RX_IP_CKSUM_BAD];
  const l4Flag = [0, OlFlags.RX_L4_CKSUM_GOOD, OlFlags.RX_L4_CKSUM_BAD, OlFlags.RX_L4_CKSUM_GOOD | OlFlags.RX_L4_CKSUM_BAD];
  const cksMask = ipFlag[3]! | l4Flag[3]!;
  for (let round = 0; round < 300; round++) {
    const n = 1 + rand(40);
    const pkts = Array.from({ length: n }, packet);
    const shifts = Array.from({ length: n }, () => rand(4)); // odd data offsets: unaligned loads
    const flags = Array.from({ length: n }, () => [(rand(0x7fffffff) & ~cksMask) | ipFlag[pick(status)]! | l4Flag[pick(status)]!, rand(0x7fffffff), rand(0x80), rand(0x10000), rand(0x100)]);
    const peerMac = Uint8Array.from(bytes(6));
    const txMac = Uint8Array.from(bytes(6));
    const start = [rand(1000), rand(1000)]; // counters start non-zero: the kernel adds
    const results = sides.map((s) => {
      const b = s.heap.burst(64);
      assert.equal(s.pool.allocBulk(b, n), n);
      for (let i = 0; i < n; i++) {
        const h = b[i]!;
        s.mb.write(h, Uint8Array.from([...bytes(shifts[i]!), ...pkts[i]!]));
        s.mb.adj(h, shifts[i]!);
        const f = flags[i]!;
        s.mb.setOlFlags(h, f[0]!);
        s.mb.setOlFlagsHi(h, f[1]! & ~(1 << 30));
        s.mb.setTxOffload(h, f[2]!, f[3]!, f[4]!);
        s.mb.setTsoSegsz(h, f[3]!);
      }
      s.ethdev.txBurst(0, 0, b, n);
      const ctx = ctxOf(s, defaultFwdConfig());
      const stats = s.heap.reserve(64) >>> 3; // each side's stream its own slot
      s.heap.f64[stats + FS_RX_BAD_IP_CSUM] = start[0]!;
      s.heap.f64[stats + FS_RX_BAD_L4_CSUM] = start[1]!;
      const fs = loopStream(s, { txMac, peerMac }, stats);
      csum(ctx).fwd(fs); // receives from the ring and sends back into it
      const out = s.heap.burst(64);
      const got = s.ethdev.rxBurst(0, 0, out, 64);
      const snap = [...out.subarray(0, got)].map((h) => ({ ...snapshot(s.mb, h), tso: s.mb.tsoSegsz(h) }));
      s.mb.freeBulk(out, got);
      return { snap, bad: [s.heap.f64[stats + FS_RX_BAD_IP_CSUM]! - start[0]!, s.heap.f64[stats + FS_RX_BAD_L4_CSUM]! - start[1]!] };
    });
    assert.equal(results[1]!.snap.length, n);
    assert.deepEqual(results[0], results[1], `round ${round}`);
    seen.badIp += results[1]!.bad[0]!;
    seen.badL4 += results[1]!.bad[1]!;
    for (let i = 0; i < n; i++) {
      const [l2, l3, l4] = results[1]!.snap[i]!.meta.slice(6, 9) as [number, number, number];
      const proto = l3 === 40 ? pkts[i]![l2 + 6] : pkts[i]![l2 + 9];
      if (l2 === 0) seen.runt++;
      else if (l3 === 0) seen.l2Only++;
      if (l2 === 18) seen.vlan++;
      if (l2 === 22) seen.qinq++;
      if (l3 !== 0 && l3 !== 40) seen.ipv4++;
      if (l3 > 20 && l3 !== 40) seen.ipv4Opts++;
      if (l3 === 40) seen.ipv6++;
      if (l4 === 0 && l3 !== 0) seen.l3NoL4++;
      if (l4 !== 0 && proto === 17) seen[l3 === 40 ? 'udp6' : 'udp4']++;
      if (l4 !== 0 && proto === 6) seen[l3 === 40 ? 'tcp6' : 'tcp4']++;
      if (l4 > 20 && proto === 6) seen.tcpOpts++;
    }
  }
  for (const [k, v] of Object.entries(seen)) assert.ok(v >= 20, `coverage: ${k} ${v}`);
  closeSides(sides);
});
