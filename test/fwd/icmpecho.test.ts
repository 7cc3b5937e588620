import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FS_RX_PACKETS, FS_TX_PACKETS, defaultFwdConfig } from '../../src/fwd/engine.js';
import { assertFull, assertSameHeaps } from '../helpers.js';
import { icmpEcho } from '../../src/fwd/icmpecho.js';
import { IPPROTO_ICMP, IPPROTO_UDP } from '../../src/net/headers.js';
import { DST4, MAC_A, MAC_B, SRC4, assertIpv4Valid, be16, eth, ipv4, ipv6, payload, rd16, refCksum, udpSeg, vlanEth } from '../net/packets.js';
import { loopPort, rig } from './harness.js';

describe('icmpecho', () => {
  const echoRequest = (body: Uint8Array, dst = DST4) => eth(0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, ...be16(0x1234), ...be16(7), ...body], SRC4, dst));
  const arpRequest = () => eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 1, ...MAC_A, ...SRC4, 0, 0, 0, 0, 0, 0, ...DST4], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

  it('answers an echo request and an ARP request, drops UDP and truncated packets, transmits only replies', () => {
    const r = rig();
    const req = echoRequest(payload(33, 1));
    const udp = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(8, 1))));
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
    assert.deepEqual([...e.subarray(26, 34)], [...DST4, ...SRC4]);
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
    assert.deepEqual([...a.subarray(28, 32)], DST4, 'sender IP = the address asked about');
    assert.deepEqual([...a.subarray(32, 38)], MAC_A, 'target hardware = requester');
    assert.deepEqual([...a.subarray(38, 42)], SRC4, 'target IP = requester');

    assert.deepEqual(r.counters(), [6, 2, 0]);
    r.done();
  });

  it('answers a VLAN-tagged request and a multicast one from a unicast source with a fresh IP checksum', () => {
    const r = rig();
    const tagged = vlanEth(0x0005, 0x0800, ipv4(IPPROTO_ICMP, [8, 0, 0, 0, 0, 1, 0, 2, ...payload(6, 1)]));
    const mcast = echoRequest(payload(16, 1), [224, 0, 0, 1]);
    r.inject(tagged, mcast);
    r.run(icmpEcho);
    const [t, m] = r.collect();
    assert.deepEqual([rd16(t!.bytes, 12), rd16(t!.bytes, 14)], [0x8100, 5]);
    assert.deepEqual([...t!.bytes.subarray(30, 38)], [...DST4, ...SRC4]);
    assert.equal(t!.bytes[38], 0);
    assertIpv4Valid(t!.bytes, 18);
    // 10.0.0.1 & 3 === 1, so testpmd answers from 10.0.0.2.
    assert.deepEqual([...m!.bytes.subarray(26, 30)], [10, 0, 0, 2]);
    assert.deepEqual([...m!.bytes.subarray(30, 34)], SRC4);
    assertIpv4Valid(m!.bytes);
    r.done();
  });

  it('drops everything when nothing asks for a reply', () => {
    const r = rig();
    const reply = eth(0x0800, ipv4(IPPROTO_ICMP, [0, 0, 0, 0, 0, 1, 0, 1]));
    const arpReply = eth(0x0806, [0, 1, 8, 0, 6, 4, 0, 2, ...MAC_A, ...SRC4, ...MAC_B, ...DST4]);
    const v6 = eth(0x86dd, ipv6(IPPROTO_UDP, udpSeg(1, 2, [])));
    r.inject(reply, arpReply, v6, Uint8Array.from([1, 2, 3]));
    r.run(icmpEcho);
    assert.equal(r.collect().length, 0);
    assert.deepEqual([r.counter(FS_RX_PACKETS), r.counter(FS_TX_PACKETS)], [4, 0]);
    r.done();
  });

  it('the kernel and its twin answer random traffic alike: the same replies, bytes, drops and order', () => {
    let seed = 11;
    const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
    // Requests and near-misses of each check the parse makes: the same list for both heaps.
    const traffic: Uint8Array[] = [];
    for (let i = 0; i < 600; i++) {
      let p: Uint8Array;
      switch (rand(11)) {
        case 0: p = arpRequest(); break;
        case 1: p = vlanEth(rand(4096), 0x0806, arpRequest().subarray(14)); break;
        case 2: p = echoRequest(payload(rand(64), i), rand(3) === 0 ? [224 + rand(16), 0, 0, rand(256)] : DST4); break;
        case 3: p = vlanEth(7, 0x0800, echoRequest(payload(rand(20), i)).subarray(14)); break;
        case 4: {
          // IHL 6 (a NOP option word), which the echo must find the ICMP header after.
          const ip = ipv4(IPPROTO_ICMP, [8, 0, 0, 0, 0, 1, 0, 2, ...payload(rand(30), i)]);
          const o = Uint8Array.from([0x46, ...ip.subarray(1, 20), 1, 1, 1, 1, ...ip.subarray(20)]);
          o[3] = o[3]! + 4;
          p = eth(0x0800, o);
          break;
        }
        case 5: p = eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(rand(30), i)))); break;
        case 6: p = eth(0x86dd, ipv6(58, [128, 0, 0, 0, 0, 1, 0, 1])); break;
        case 7: {
          // A first fragment (MF set, offset 0): no reply to part of a datagram.
          p = echoRequest(payload(rand(20), i));
          p[20] = p[20]! | 0x20;
          break;
        }
        case 8: {
          // An IPv4 total length that leaves the ICMP header short of 8 bytes, in a frame long enough.
          p = echoRequest(payload(rand(20), i));
          p[17] = 20 + rand(8);
          break;
        }
        default: p = rand(2) === 0 ? arpRequest() : echoRequest(payload(rand(40), i));
      }
      // Spoil one byte of the headers, or cut the frame short, now and then.
      if (rand(4) === 0) {
        const at = 12 + rand(40);
        p = Uint8Array.from(p, (b, j) => (j === at ? b ^ (1 << rand(8)) : b));
      }
      if (rand(6) === 0) p = p.slice(0, rand(p.length + 1));
      traffic.push(p);
    }
    const run = (datapath: 'wasm' | 'ts') => {
      const { heap, pool, ethdev, mb, fs } = loopPort(datapath);
      const engine = icmpEcho({ heap, mb, pool, burst: heap.burst(64), config: { ...defaultFwdConfig(), burst: 64 } });
      const b = heap.burst(64);
      const out: number[][] = [];
      for (let at = 0; at < traffic.length; ) {
        const n = Math.min(1 + rand(48), traffic.length - at);
        assert.equal(pool.allocBulk(b, n), n);
        for (let i = 0; i < n; i++) mb.write(b[i]!, traffic[at + i]!);
        at += n;
        ethdev.txBurst(0, 0, b, n);
        engine.fwd(fs); // from the ring and its replies back into it
        for (let got; (got = ethdev.rxBurst(0, 0, b, 64)) > 0; ) {
          for (let i = 0; i < got; i++) out.push([...mb.read(b[i]!)]);
          mb.freeBulk(b, got);
        }
      }
      ethdev.close(0);
      assertFull(pool);
      return { heap, out };
    };
    seed = 5;
    const w = run('wasm');
    seed = 5;
    const t = run('ts');
    assert.ok(w.out.length > 150, `replies: ${w.out.length}`);
    assert.deepEqual(w.out, t.out);
    assertSameHeaps(w.heap, t.heap);
  });
});
