import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FS_FWD_DROPPED, FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_TX_PACKETS, defaultFwdConfig, type EngineFactory, type FwdContext, type FwdStream } from '../../../src/fwd/engine.js';
import { fiveTupleSwap } from '../../../src/fwd/5tswap.js';
import { csum } from '../../../src/fwd/csum.js';
import { flowgen } from '../../../src/fwd/flowgen.js';
import { icmpEcho } from '../../../src/fwd/icmpecho.js';
import { drivers } from '../../../src/drivers/index.js';
import { TxOffload } from '../../../src/ethdev/driver.js';
import { Ethdev } from '../../../src/ethdev/ethdev.js';
import { ArgError } from '../../../src/errors.js';
import { Heap } from '../../../src/eal/heap.js';
import { Mbufs } from '../../../src/mem/mbuf.js';
import { OlFlags, OlFlagsHi } from '../../../src/mem/mbuf-layout.js';
import { Mempool } from '../../../src/mem/mempool.js';
import { IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP } from '../../../src/net/headers.js';
import { portUp } from '../../helpers.js';

// ---- packet building and an independent checksum reference ------------------------------

const be16 = (v: number) => [(v >>> 8) & 0xff, v & 0xff];
const rd16 = (b: ArrayLike<number>, o: number) => (b[o]! << 8) | b[o + 1]!;
const rd32 = (b: ArrayLike<number>, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

function refSum(bytes: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    s += (bytes[i]! << 8) + (i + 1 < bytes.length ? bytes[i + 1]! : 0);
    s = (s & 0xffff) + (s >>> 16);
  }
  return s;
}
const refCksum = (bytes: ArrayLike<number>) => ~refSum(bytes) & 0xffff;
/** True when the region (checksum field included) sums to ffff. */
const sumsOk = (bytes: ArrayLike<number>) => refSum(bytes) === 0xffff;

const MAC_A = [0x02, 0, 0, 0, 0, 0xaa];
const MAC_B = [0x02, 0, 0, 0, 0, 0xbb];
const IP_A = [10, 0, 0, 1];
const IP_B = [10, 0, 0, 2];
const IP6_A = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa];
const IP6_B = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb];
const PEER = [2, 0, 0, 0, 0, 1];

const data = (n: number, seed = 1) => Array.from({ length: n }, (_, i) => (i * 29 + seed) & 0xff);

function udpHdr(sport: number, dport: number, body: number[]): number[] {
  return [...be16(sport), ...be16(dport), ...be16(8 + body.length), 0, 0, ...body];
}
/** TCP with `opt` option words (NOPs): data offset 5 + opt. */
function tcpHdr(sport: number, dport: number, body: number[], opt = 0): number[] {
  return [...be16(sport), ...be16(dport), 0, 0, 0, 1, 0, 0, 0, 0, (5 + opt) << 4, 0x18, ...be16(1024), 0, 0, 0, 0, ...Array<number>(opt * 4).fill(1), ...body];
}

/** IPv4 header + L4 with correct checksums (the reference computes them). */
function ipv4(proto: number, l4: number[], src = IP_A, dst = IP_B): number[] {
  const ip = [0x45, 0, ...be16(20 + l4.length), 0, 7, 0x40, 0, 64, proto, 0, 0, ...src, ...dst];
  ip.splice(10, 2, ...be16(refCksum(ip)));
  return [...ip, ...withL4Cksum(proto, l4, [...src, ...dst, 0, proto, ...be16(l4.length)])];
}
function ipv6(proto: number, l4: number[], src = IP6_A, dst = IP6_B): number[] {
  const ip = [0x60, 0, 0, 0, ...be16(l4.length), proto, 64, ...src, ...dst];
  return [...ip, ...withL4Cksum(proto, l4, [...src, ...dst, 0, 0, ...be16(l4.length), 0, 0, 0, proto])];
}
function withL4Cksum(proto: number, l4: number[], phdr: number[]): number[] {
  const out = [...l4];
  const off = proto === IPPROTO_UDP ? 6 : proto === IPPROTO_TCP ? 16 : -1;
  if (off >= 0) {
    let c = refCksum([...phdr, ...out]);
    if (c === 0 && proto === IPPROTO_UDP) c = 0xffff;
    out.splice(off, 2, ...be16(c));
  } else if (proto === IPPROTO_ICMP) {
    out.splice(2, 2, ...be16(refCksum(out)));
  }
  return out;
}
const eth = (type: number, rest: number[], dst = MAC_B, src = MAC_A) => Uint8Array.from([...dst, ...src, ...be16(type), ...rest]);
const vlanEth = (tci: number, type: number, rest: number[]) => Uint8Array.from([...MAC_B, ...MAC_A, ...be16(0x8100), ...be16(tci), ...be16(type), ...rest]);

/** Checks an IPv4 packet's header and L4 checksums with the reference; `l2` is the IP header's offset. */
function assertIpv4Valid(p: Uint8Array, l2 = 14): void {
  const ihl = (p[l2]! & 0xf) * 4;
  assert.ok(sumsOk(p.subarray(l2, l2 + ihl)), 'IPv4 header checksum');
  const proto = p[l2 + 9]!;
  const total = rd16(p, l2 + 2);
  const l4 = p.subarray(l2 + ihl, l2 + total);
  if (proto === IPPROTO_ICMP) return assert.ok(sumsOk(l4), 'ICMP checksum');
  if (proto === IPPROTO_UDP && rd16(l4, 6) === 0) return;
  assert.ok(sumsOk([...p.subarray(l2 + 12, l2 + 20), 0, proto, ...be16(l4.length), ...l4]), 'L4 checksum over IPv4');
}
function assertIpv6L4Valid(p: Uint8Array, l2 = 14): void {
  const len = rd16(p, l2 + 4);
  const l4 = p.subarray(l2 + 40, l2 + 40 + len);
  assert.ok(sumsOk([...p.subarray(l2 + 8, l2 + 40), 0, 0, ...be16(len), 0, 0, 0, p[l2 + 6]!, ...l4]), 'L4 checksum over IPv6');
}

// ---- the rig: two looping net_ring ports, a stream from port 0 rx to port 1 tx ---------------

function rig(opts: { poolSize?: number } = {}) {
  const heap = Heap.create({ size: 64 << 20 });
  const pool = Mempool.create(heap, { name: 'fwd_pool', n: opts.poolSize ?? 512, cacheSize: 32 });
  const ethdev = new Ethdev(heap, drivers);
  const ports = [ethdev.create('net_ring0'), ethdev.create('net_ring1')];
  for (const p of ports) portUp(ethdev, pool, p);
  const fs: FwdStream = {
    rxPort: 0,
    rxQueue: 0,
    txPort: 1,
    txQueue: 0,
    rxq: ethdev.rxQueue(0, 0),
    txq: ethdev.txQueue(1, 0),
    stats: heap.reserve(64) >>> 3,
    txMac: ethdev.macAddr(1),
    peerMac: Uint8Array.from(PEER),
  };
  const mb = new Mbufs(heap);
  const ctx: FwdContext = { heap, mb, pool, burst: heap.burst(512), config: defaultFwdConfig() };
  const out = heap.burst(64);

  /** Puts packets into port 0's rx ring (by sending on port 0, which loops back). @returns their handles. */
  const inject = (...pkts: Uint8Array[]): number[] => {
    const b = heap.burst(pkts.length);
    pkts.forEach((p, i) => {
      const h = pool.alloc();
      assert.notEqual(h, 0);
      assert.ok(mb.write(h, p));
      b[i] = h;
    });
    assert.equal(ethdev.txBurst(0, 0, b, pkts.length), pkts.length);
    return [...b];
  };
  /** Takes what the engine sent on port 1 (up to 64 a call), copies bytes and metadata out and frees the mbufs. */
  const collect = (max = 64) => {
    const got: { h: number; bytes: Uint8Array; l2: number; l3: number; l4: number; ol: number; olHi: number; vlan: number; vlanOuter: number }[] = [];
    for (let n; got.length < max && (n = ethdev.rxBurst(1, 0, out, Math.min(64, max - got.length))) > 0; ) {
      for (let i = 0; i < n; i++) {
        const h = out[i]!;
        got.push({ h, bytes: mb.read(h), l2: mb.l2Len(h), l3: mb.l3Len(h), l4: mb.l4Len(h), ol: mb.olFlags(h), olHi: mb.olFlagsHi(h), vlan: mb.vlanTci(h), vlanOuter: mb.vlanTciOuter(h) });
      }
      mb.freeBulk(out, n);
    }
    return got;
  };
  const counter = (slot: number) => heap.f64[fs.stats + slot]!;
  /** Closes both ports (draining their rings) and checks that every mbuf came home. */
  const done = () => {
    for (const p of ports) ethdev.close(p);
    pool.checkLeaks();
  };
  const run = (factory: EngineFactory) => {
    const engine = factory(ctx);
    engine.fwd(fs);
    return engine;
  };
  return { heap, pool, ethdev, fs, ctx, mb, inject, collect, counter, done, run };
}

// ---- 5tswap ------------------------------------------------------------------------------------

describe('5tswap', () => {
  it('swaps MACs, IPv4 addresses and UDP ports, keeping checksums valid', () => {
    const r = rig();
    const pkt = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1111, 2222, data(30))));
    r.inject(pkt);
    const engine = r.run(fiveTupleSwap);
    assert.equal(engine.name, '5tswap');
    const [p, more] = r.collect();
    assert.equal(more, undefined);
    const b = p!.bytes;
    assert.deepEqual([...b.subarray(0, 6)], MAC_A);
    assert.deepEqual([...b.subarray(6, 12)], MAC_B);
    assert.deepEqual([...b.subarray(26, 30)], IP_B);
    assert.deepEqual([...b.subarray(30, 34)], IP_A);
    assert.deepEqual([rd16(b, 34), rd16(b, 36)], [2222, 1111]);
    assert.deepEqual([...b.subarray(42)], [...pkt.subarray(42)], 'payload untouched');
    assertIpv4Valid(b);
    assert.deepEqual([p!.l2, p!.l3, p!.l4, p!.ol, p!.olHi], [14, 20, 8, 0, 0]);
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS), r.counter(FS_FWD_DROPPED)], [1, 1, 0]);
    r.done();
  });

  it('swaps IPv4/TCP (with options), IPv6/UDP and a VLAN-tagged packet in one burst', () => {
    const r = rig();
    const tcp = eth(0x0800, ipv4(IPPROTO_TCP, tcpHdr(40000, 80, data(11), 2)));
    const v6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpHdr(5353, 53, data(9))));
    const tagged = vlanEth(0x0064, 0x0800, ipv4(IPPROTO_UDP, udpHdr(7, 9, data(4))));
    r.inject(tcp, v6, tagged);
    r.run(fiveTupleSwap);
    const [t, s, v] = r.collect();

    assert.deepEqual([...t!.bytes.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([...t!.bytes.subarray(26, 34)], [...IP_B, ...IP_A]);
    assert.deepEqual([rd16(t!.bytes, 34), rd16(t!.bytes, 36)], [80, 40000]);
    assertIpv4Valid(t!.bytes);
    assert.deepEqual([t!.l2, t!.l3, t!.l4], [14, 20, 28]);

    const b6 = s!.bytes;
    assert.deepEqual([...b6.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([...b6.subarray(22, 38)], IP6_B);
    assert.deepEqual([...b6.subarray(38, 54)], IP6_A);
    assert.deepEqual([rd16(b6, 54), rd16(b6, 56)], [53, 5353]);
    assertIpv6L4Valid(b6);
    assert.deepEqual([s!.l2, s!.l3, s!.l4], [14, 40, 8]);

    const bv = v!.bytes;
    assert.deepEqual([...bv.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([rd16(bv, 12), rd16(bv, 14), rd16(bv, 16)], [0x8100, 0x0064, 0x0800], 'tag kept');
    assert.deepEqual([...bv.subarray(30, 38)], [...IP_B, ...IP_A]);
    assert.deepEqual([rd16(bv, 38), rd16(bv, 40)], [9, 7]);
    assertIpv4Valid(bv, 18);
    assert.deepEqual([v!.l2, v!.l3, v!.l4], [18, 20, 8]);
    assert.equal(r.counter(FS_TX_PACKETS), 3);
    r.done();
  });

  it('swaps only what it parses: ARP and ICMP partly, runts and truncated headers not past what fits', () => {
    const r = rig();
    const arp = eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 1, ...MAC_A, ...IP_A, 0, 0, 0, 0, 0, 0, ...IP_B]);
    const icmp = eth(0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, 0, 1, 0, 1, ...data(8)]));
    const runt = Uint8Array.from(data(10));
    const full = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, data(20))));
    const cut = full.slice(0, 38); // UDP header cut after the source port
    r.inject(arp, icmp, runt, cut);
    r.run(fiveTupleSwap);
    const [a, i, t, c] = r.collect();
    assert.deepEqual([...a!.bytes], [...MAC_A, ...MAC_B, ...arp.subarray(12)], 'ARP: MACs only');
    assert.deepEqual([...i!.bytes.subarray(26, 34)], [...IP_B, ...IP_A], 'ICMP: addresses swapped');
    assert.deepEqual([...i!.bytes.subarray(34)], [...icmp.subarray(34)], 'ICMP: body untouched');
    assertIpv4Valid(i!.bytes);
    assert.deepEqual([...t!.bytes], [...runt], 'runt forwarded untouched');
    assert.deepEqual([t!.l2, t!.l3, t!.l4], [0, 0, 0]);
    assert.deepEqual([...c!.bytes.subarray(26, 34)], [...IP_B, ...IP_A]);
    assert.deepEqual([...c!.bytes.subarray(34)], [...cut.subarray(34)], 'ports not swapped: the UDP header does not fit');
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 4]);
    r.done();
  });

  it('sets VLAN / QinQ insert flags and TCIs from the tx offloads and clears rx flags', () => {
    const r = rig();
    r.ctx.config.txOffloads = TxOffload.VLAN_INSERT | TxOffload.QINQ_INSERT;
    r.ctx.config.vlanTci = 100;
    r.ctx.config.vlanTciOuter = 200;
    const [h] = r.inject(eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, []))));
    // What the rx path left: rx flags go, tx flags come from the port.
    r.mb.setOlFlags(h!, OlFlags.RX_RSS_HASH | OlFlags.RX_IP_CKSUM_GOOD);
    r.run(fiveTupleSwap);
    const [p] = r.collect();
    assert.equal(p!.ol, 0);
    assert.equal(p!.olHi, OlFlagsHi.TX_VLAN | OlFlagsHi.TX_QINQ);
    assert.deepEqual([p!.vlan, p!.vlanOuter], [100, 200]);
    r.done();
  });
});

// ---- icmpecho ----------------------------------------------------------------------------------

describe('icmpecho', () => {
  const echoRequest = (body: number[], dst = IP_B) => eth(0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, ...be16(0x1234), ...be16(7), ...body], IP_A, dst));
  const arpRequest = () => eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 1, ...MAC_A, ...IP_A, 0, 0, 0, 0, 0, 0, ...IP_B], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

  it('answers an echo request and an ARP request, drops UDP and truncated packets, transmits only replies', () => {
    const r = rig();
    const req = echoRequest(data(33));
    const udp = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, data(8))));
    const cutEcho = req.slice(0, 14 + 20 + 4); // ICMP header cut short
    const cutArp = arpRequest().slice(0, 14 + 20);
    const reqWithBadIhl = Uint8Array.from(req);
    reqWithBadIhl[14] = 0x44;
    r.inject(udp, req, cutEcho, arpRequest(), cutArp, reqWithBadIhl);
    const engine = r.run(icmpEcho);
    assert.equal(engine.name, 'icmpecho');
    const got = r.collect();
    assert.equal(got.length, 2, 'only the two replies go out, in order');
    const [echo, arp] = got;

    const e = echo!.bytes;
    assert.equal(e.length, req.length);
    assert.deepEqual([...e.subarray(0, 12)], [...MAC_A, ...MAC_B]);
    assert.deepEqual([...e.subarray(26, 34)], [...IP_B, ...IP_A]);
    assert.deepEqual([e[34], e[35]], [0, 0], 'echo reply, code 0');
    assert.deepEqual([rd16(e, 38), rd16(e, 40)], [0x1234, 7], 'identifier and sequence kept');
    assert.deepEqual([...e.subarray(42)], [...req.subarray(42)], 'data echoed');
    assertIpv4Valid(e);
    assert.equal(rd16(e, 36), refCksum([...e.subarray(34, 36), 0, 0, ...e.subarray(38)]), 'ICMP checksum as a full recompute gives');

    const a = arp!.bytes;
    const port = [...r.fs.txMac];
    assert.deepEqual([...a.subarray(0, 6)], MAC_A, 'to the requester');
    assert.deepEqual([...a.subarray(6, 12)], port, 'from the port');
    assert.equal(rd16(a, 12), 0x0806);
    assert.deepEqual([rd16(a, 14), rd16(a, 16), a[18], a[19], rd16(a, 20)], [1, 0x0800, 6, 4, 2], 'ARP reply');
    assert.deepEqual([...a.subarray(22, 28)], port, 'sender hardware = port');
    assert.deepEqual([...a.subarray(28, 32)], IP_B, 'sender IP = the address asked about');
    assert.deepEqual([...a.subarray(32, 38)], MAC_A, 'target hardware = requester');
    assert.deepEqual([...a.subarray(38, 42)], IP_A, 'target IP = requester');

    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS), r.counter(FS_FWD_DROPPED)], [6, 2, 0]);
    r.done();
  });

  it('answers a VLAN-tagged request and a multicast one from a unicast source with a fresh IP checksum', () => {
    const r = rig();
    const tagged = vlanEth(0x0005, 0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, 0, 1, 0, 2, ...data(6)]));
    const mcast = echoRequest(data(16), [224, 0, 0, 1]);
    r.inject(tagged, mcast);
    r.run(icmpEcho);
    const [t, m] = r.collect();
    assert.deepEqual([rd16(t!.bytes, 12), rd16(t!.bytes, 14)], [0x8100, 5]);
    assert.deepEqual([...t!.bytes.subarray(30, 38)], [...IP_B, ...IP_A]);
    assert.equal(t!.bytes[38], 0);
    assertIpv4Valid(t!.bytes, 18);
    // 10.0.0.1 & 3 === 1, so testpmd answers from 10.0.0.2.
    assert.deepEqual([...m!.bytes.subarray(26, 30)], [10, 0, 0, 2]);
    assert.deepEqual([...m!.bytes.subarray(30, 34)], IP_A);
    assertIpv4Valid(m!.bytes);
    r.done();
  });

  it('drops everything when nothing asks for a reply', () => {
    const r = rig();
    const reply = eth(0x0800, ipv4(IPPROTO_ICMP, [0, 0, 0, 0, 0, 1, 0, 1]));
    const arpReply = eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 2, ...MAC_A, ...IP_A, ...MAC_B, ...IP_B]);
    const v6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpHdr(1, 2, [])));
    r.inject(reply, arpReply, v6, Uint8Array.from([1, 2, 3]));
    r.run(icmpEcho);
    assert.equal(r.collect().length, 0);
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 0]);
    r.done();
  });
});

// ---- csum --------------------------------------------------------------------------------------

describe('csum', () => {
  /** Zeroes bytes [at, at + 2) of a copy: a checksum field "not filled in". */
  const zeroAt = (p: Uint8Array, at: number) => {
    const q = Uint8Array.from(p);
    q[at] = 0;
    q[at + 1] = 0;
    return q;
  };

  it('fixes zeroed L4 checksums over IPv4 and IPv6, sets tx metadata and counts the bad arrivals', () => {
    const r = rig();
    const udp4 = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1000, 2000, data(25))));
    const tcp4 = eth(0x0800, ipv4(IPPROTO_TCP, tcpHdr(1000, 2000, data(31), 1)));
    const udp6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpHdr(1000, 2000, data(17))));
    const tcp6 = eth(0x86dd, ipv6(IPPROTO_TCP, tcpHdr(1000, 2000, data(40))));
    const badUdp4 = Uint8Array.from(udp4);
    badUdp4[40] ^= 0x5a; // a wrong, non-zero UDP checksum
    r.inject(badUdp4, zeroAt(tcp4, 14 + 20 + 16), zeroAt(udp6, 14 + 40 + 6), zeroAt(tcp6, 14 + 40 + 16));
    const engine = r.run(csum);
    assert.equal(engine.name, 'csum');
    const [u4, t4, u6, t6] = r.collect();
    const fixed = (got: Uint8Array, want: Uint8Array) => {
      assert.deepEqual([...got.subarray(0, 6)], PEER, 'dst = peer (csum mac-swap)');
      assert.deepEqual([...got.subarray(6, 12)], [...r.fs.txMac], 'src = tx port');
      assert.deepEqual([...got.subarray(12)], [...want.subarray(12)], 'checksums as the reference computes them');
    };
    fixed(u4!.bytes, udp4);
    fixed(t4!.bytes, tcp4);
    fixed(u6!.bytes, udp6);
    fixed(t6!.bytes, tcp6);
    assertIpv4Valid(u4!.bytes);
    assertIpv4Valid(t4!.bytes);
    assertIpv6L4Valid(u6!.bytes);
    assertIpv6L4Valid(t6!.bytes);
    assert.deepEqual([u4!.l2, u4!.l3, u4!.l4, u4!.olHi], [14, 20, 8, OlFlagsHi.TX_IPV4]);
    assert.deepEqual([t4!.l2, t4!.l3, t4!.l4, t4!.olHi], [14, 20, 24, OlFlagsHi.TX_IPV4]);
    assert.deepEqual([u6!.l2, u6!.l3, u6!.l4, u6!.olHi], [14, 40, 8, OlFlagsHi.TX_IPV6]);
    assert.deepEqual([t6!.l2, t6!.l3, t6!.l4, t6!.olHi], [14, 40, 20, OlFlagsHi.TX_IPV6]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [0, 4]);
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 4]);
    r.done();
  });

  it('fixes a zeroed IPv4 header checksum, leaves good packets alone, keeps an IPv4 UDP "no checksum" 0', () => {
    const r = rig();
    const good = eth(0x0800, ipv4(IPPROTO_TCP, tcpHdr(1, 2, data(9))));
    const badIp = zeroAt(good, 14 + 10);
    const noCksum = zeroAt(eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(3, 4, data(12)))), 14 + 20 + 6);
    const tagged = vlanEth(0x0033, 0x0800, ipv4(IPPROTO_UDP, udpHdr(5, 6, data(3))));
    r.inject(good, badIp, noCksum, Uint8Array.from(tagged));
    r.run(csum);
    const [g, b, n, v] = r.collect();
    assert.deepEqual([...g!.bytes.subarray(12)], [...good.subarray(12)]);
    assert.deepEqual([...b!.bytes.subarray(12)], [...good.subarray(12)], 'IP checksum restored');
    assert.deepEqual([...n!.bytes.subarray(12)], [...noCksum.subarray(12)], 'UDP checksum 0 over IPv4 stays 0 (RFC 768, testpmd)');
    assert.deepEqual([...v!.bytes.subarray(12)], [...tagged.subarray(12)]);
    assert.deepEqual([v!.l2, v!.l3, v!.l4], [18, 20, 8]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [1, 0]);
    r.done();
  });

  it('trusts the rx checksum status a driver reported, and verifies only when it is unknown', () => {
    const r = rig();
    const pkt = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, data(10))));
    const badIp = zeroAt(pkt, 14 + 10);
    const [h1, h2] = r.inject(badIp, pkt);
    r.mb.setOlFlags(h1!, OlFlags.RX_IP_CKSUM_GOOD | OlFlags.RX_L4_CKSUM_GOOD); // the driver says fine: not counted
    r.mb.setOlFlags(h2!, OlFlags.RX_IP_CKSUM_BAD | OlFlags.RX_L4_CKSUM_BAD); // the driver says bad: counted
    r.run(csum);
    const got = r.collect();
    assert.equal(got.length, 2);
    for (const p of got) {
      assertIpv4Valid(p.bytes);
      assert.equal(p.ol, 0, 'rx flags cleared');
    }
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM)], [1, 1]);
    r.done();
  });

  it('forwards truncated, fragmented and non-IP packets without touching what it cannot check', () => {
    const r = rig();
    const full = eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, data(40))));
    const cut = full.slice(0, 50); // IP total length says more than arrived
    const frag = Uint8Array.from(full);
    frag[14 + 6] = 0x20; // more fragments
    frag.set(be16(refCksum([...frag.subarray(14, 24), 0, 0, ...frag.subarray(26, 34)])), 24);
    frag[40] ^= 0xff; // an L4 checksum nobody can check on a fragment
    const arp = eth(0x0806, data(28));
    const runt = Uint8Array.from(data(9));
    r.inject(cut, frag, arp, runt);
    r.run(csum);
    const [c, f, a, t] = r.collect();
    assert.deepEqual([...c!.bytes.subarray(12)], [...cut.subarray(12)]);
    assert.deepEqual([...f!.bytes.subarray(12)], [...frag.subarray(12)]);
    assert.deepEqual([...a!.bytes.subarray(12)], [...arp.subarray(12)]);
    assert.deepEqual([a!.l2, a!.l3, a!.l4, a!.olHi], [14, 0, 0, 0]);
    assert.deepEqual([...t!.bytes], [...runt]);
    assert.deepEqual([r.counter(FS_RX_BAD_IP_CSUM), r.counter(FS_RX_BAD_L4_CSUM), r.counter(FS_TX_PACKETS)], [0, 0, 4]);
    r.done();
  });
});

// ---- flowgen -----------------------------------------------------------------------------------

describe('flowgen', () => {
  it('frees what it receives and generates valid IPv4/UDP packets cycling through the flows', () => {
    const r = rig();
    const cfg = r.ctx.config;
    cfg.burst = 8;
    cfg.flowgenFlows = 5;
    cfg.txPkts = [60, 4];
    r.inject(eth(0x0800, ipv4(IPPROTO_UDP, udpHdr(1, 2, []))), Uint8Array.from(data(60)), Uint8Array.from(data(70)));
    const engine = flowgen(r.ctx);
    assert.equal(engine.name, 'flowgen');
    for (let i = 0; i < 3; i++) engine.fwd(r.fs);
    const got = r.collect();
    assert.equal(got.length, 24);
    got.forEach((p, i) => {
      const b = p.bytes;
      assert.equal(b.length, 64);
      assert.deepEqual([...b.subarray(0, 6)], PEER);
      assert.deepEqual([...b.subarray(6, 12)], [...r.fs.txMac]);
      assert.equal(rd16(b, 12), 0x0800);
      assert.deepEqual([b[14], rd16(b, 16), b[22], b[23]], [0x45, 50, 64, IPPROTO_UDP]);
      assertIpv4Valid(b);
      assert.equal(rd32(b, 26), cfg.txIpSrc);
      assert.equal(rd32(b, 30), cfg.txIpDst + (i % 5), `packet ${i}: flow ${i % 5}`);
      assert.deepEqual([rd16(b, 34), rd16(b, 36), rd16(b, 38), rd16(b, 40)], [cfg.txUdpSrc, cfg.txUdpDst, 30, 0]);
      assert.deepEqual([p.l2, p.l3, p.olHi], [14, 20, 0]);
    });
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS), r.counter(FS_FWD_DROPPED)], [3, 24, 0]);
    r.done();
  });

  it('backs the flow walk out for packets the tx queue refuses, so no flow is skipped', () => {
    const r = rig({ poolSize: 2048 });
    const cfg = r.ctx.config;
    cfg.burst = 32;
    cfg.flowgenFlows = 7;
    const engine = flowgen(r.ctx);
    for (let i = 0; i < 40; i++) engine.fwd(r.fs); // 1280 packets into a 1024-slot ring
    const dropped = r.counter(FS_FWD_DROPPED);
    assert.ok(dropped > 0, 'the ring filled up');
    assert.equal(r.counter(FS_TX_PACKETS) + dropped, 40 * 32);
    const flows: number[] = [];
    for (let got; (got = r.collect()).length > 0; ) for (const p of got) flows.push(rd32(p.bytes, 30) - cfg.txIpDst);
    engine.fwd(r.fs); // after the drain: the walk resumes right after the last packet delivered
    for (const p of r.collect()) flows.push(rd32(p.bytes, 30) - cfg.txIpDst);
    assert.equal(flows.length, r.counter(FS_TX_PACKETS));
    flows.forEach((f, i) => assert.equal(f, i % 7, `packet ${i}`));
    r.done();
  });

  it('refuses at creation a packet that cannot be built in one mbuf, and bad flow counts', () => {
    const r = rig();
    const cfg = r.ctx.config;
    cfg.txPkts = [2000, 49];
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /2049 .* does not fit one mbuf of pool fwd_pool \(2048 bytes/.test(e.message));
    cfg.txPkts = [40];
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /below the 42 bytes/.test(e.message));
    cfg.txPkts = [2048];
    cfg.flowgenFlows = 0;
    assert.throws(() => flowgen(r.ctx), (e: unknown) => e instanceof ArgError && /flowgen-flows=0/.test(e.message));
    cfg.flowgenFlows = 1;
    r.run(flowgen);
    const got = r.collect();
    assert.equal(got.length, 32);
    assert.equal(got[0]!.bytes.length, 2048);
    r.done();
  });
});
