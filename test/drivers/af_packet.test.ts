import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AF_PACKET_QUEUE_SIZE, AFP_TX_DATA, AFPQ_W_COUNT, AFPQ_W_FRAMES, AFPQ_W_FRAME_CAP, AFPQ_W_FREED, AFPQ_W_POOL, AFPQ_W_PORT, AFPQ_W_STATS, TP2_W_STATUS, TP_STATUS_SEND_REQUEST, TP_STATUS_USER, TP_STATUS_VLAN_VALID } from '../../src/drivers/af_packet/af-packet-layout.js';
import { afPacketOps } from '../../src/drivers/af_packet/af-packet.twin.js';
import { RX_MAC_OFFSET, fanoutArg, fanoutMode, ringGeometry } from '../../src/drivers/af_packet/af-packet.js';
import { Heap } from '../../src/eal/heap.js';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, assertSameHeaps, portUp } from '../helpers.js';
import { Netns, assertDownWhenDeleted, assertGoneUnasked, ip, runTag, assertJumboForwarded, assertMacswapReflects, fdCount, netnsUnavailable, onNamespaces, testpmdOn, until } from './netns.js';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';

describe('net_af_packet ring geometry', () => {
  it("takes DPDK's defaults on a 1500-byte MTU", () => {
    assert.deepEqual(ringGeometry('net_af_packet0', new Map(), 1500, 4096), { blockSize: 4096, blockCount: 256, frameSize: 2048, frameCount: 512, mapLength: 2 * 4096 * 256 });
  });

  it('grows the frame to what the MTU needs when framesz is not given', () => {
    const g = ringGeometry('net_af_packet0', new Map(), 9000, 4096);
    assert.ok(g.frameSize - RX_MAC_OFFSET >= 9018 && g.blockSize % 4096 === 0 && g.blockSize >= g.frameSize);
  });

  it('refuses a framesz too small for the MTU, naming what it needs', () => {
    assert.throws(() => ringGeometry('net_af_packet0', new Map([['framesz', '2048']]), 9000, 4096), /net_af_packet0: framesz=2048 holds frames up to 1982 bytes, the interface's MTU 9000 needs framesz=9088 or more/);
  });

  it('joins its sockets to a fanout group as DPDK 25.11 does: hash by default, DEFRAG and ROLLOVER always', () => {
    // linux/if_packet.h: PACKET_FANOUT_HASH 0, _LB 1, _CPU 2, _ROLLOVER 3, _RND 4, _QM 5; FLAG_ROLLOVER 0x1000, FLAG_DEFRAG 0x8000.
    assert.equal(fanoutMode('net_af_packet0', undefined), 0);
    assert.equal(fanoutMode('net_af_packet0', 'qm'), 5);
    assert.equal(fanoutArg(0x1234, fanoutMode('net_af_packet0', 'hash')), 0x90001234);
    assert.equal(fanoutArg(0xffff, fanoutMode('net_af_packet0', 'lb')), 0x9001ffff);
    assert.throws(() => fanoutMode('net_af_packet0', 'roundrobin'), /^ArgError: net_af_packet0: fanout_mode=roundrobin: expected hash, lb, cpu, rollover, rnd, qm$/);
  });

  it('refuses a block that is not whole pages', () => {
    assert.throws(() => ringGeometry('net_af_packet0', new Map([['blocksz', '5000']]), 1500, 4096), /blocksz=5000: must be a multiple of the page size 4096/);
  });
});

describe('net_af_packet kernels and their twins', () => {
  it('leave the heap byte for byte as the twins do (rings the test plays the kernel on)', () => {
    const run = (datapath: 'wasm' | 'ts') => {
      const heap = Heap.create({ size: 16 << 20, datapath });
      // A small data room: frames above 512 bytes become chains.
      const mp = Mempool.create(heap, { name: 'pool', n: 1024, cacheSize: 32, dataRoomSize: 512 + 128 });
      const mb = new Mbufs(heap);
      const frames = 64;
      const frameSize = 2048;
      const ring = (): number => {
        const q = heap.reserve(AF_PACKET_QUEUE_SIZE, 64);
        const mem = heap.reserve(frames * frameSize, 4096);
        const table = heap.reserve(frames * 4, 64);
        for (let i = 0; i < frames; i++) heap.u32[(table >>> 2) + i] = mem + i * frameSize;
        const w = q >>> 2;
        heap.u32[w + AFPQ_W_FRAMES] = table;
        heap.u32[w + AFPQ_W_COUNT] = frames;
        heap.u32[w + AFPQ_W_POOL] = mp.offset;
        heap.u32[w + AFPQ_W_PORT] = 3;
        heap.u32[w + AFPQ_W_FRAME_CAP] = frameSize - AFP_TX_DATA;
        heap.u32[w + AFPQ_W_STATS] = heap.reserve(64, 64);
        return q;
      };
      const rxq = ring();
      const txq = ring();
      const frameAt = (q: number, i: number) => heap.u32[(heap.u32[(q >>> 2) + AFPQ_W_FRAMES]! >>> 2) + i]!;
      const rxOps = afPacketOps(heap, mb, mp);
      const txOps = afPacketOps(heap, mb, null);
      const burst = heap.burst(64);
      let rng = 7;
      const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
      let kIn = 0; // where the played kernel fills the rx ring next
      let kOut = 0; // where it drains the tx ring next
      for (let round = 0; round < 200; round++) {
        // The kernel hands over some frames, as the real one would.
        for (let j = rand(24); j > 0; j--) {
          const fr = frameAt(rxq, kIn);
          if (heap.u32[fr >>> 2] !== 0) break;
          const len = 14 + rand(frameSize - RX_MAC_OFFSET - 14);
          const v = heap.view;
          v.setUint32(fr + 8, len, true); // tp_snaplen
          v.setUint32(fr + 4, len, true);
          v.setUint16(fr + 12, RX_MAC_OFFSET, true);
          v.setUint16(fr + 24, rand(4096), true);
          for (let b = 0; b < len; b += 61) heap.u8[fr + RX_MAC_OFFSET + b] = rand(256);
          Atomics.store(heap.i32, (fr >>> 2) + TP2_W_STATUS, TP_STATUS_USER | (rand(3) === 0 ? TP_STATUS_VLAN_VALID : 0));
          kIn = (kIn + 1) % frames;
        }
        const got = rxOps.rx(rxq, heap.lcore, burst.byteOffset, 1 + rand(64));
        // Now and then a pool too short for a burst: rx takes nothing and counts rx_nombuf.
        const sent = got > 0 ? txOps.tx(txq, heap.lcore, burst.byteOffset, got) : 0;
        mb.freeBulkRest(burst, sent, 0, heap.u32[(txq >>> 2) + AFPQ_W_FREED]!);
        if (sent < got) mb.freeBulk(burst, got - sent, sent);
        // The kernel sends some of what tx queued.
        for (let j = rand(40); j > 0; j--) {
          const fr = frameAt(txq, kOut);
          if (heap.u32[fr >>> 2] !== TP_STATUS_SEND_REQUEST) break;
          heap.u32[fr >>> 2] = 0;
          kOut = (kOut + 1) % frames;
        }
      }
      mp.flushCache();
      assertFull(mp);
      return heap;
    };
    assertSameHeaps(run('wasm'), run('ts'));
  });
});

const skip = netnsUnavailable();
if (skip && REQUIRED) throw new Error(`DPKIT_REQUIRE_TOOLS=1 but net_af_packet's namespace tests cannot run: ${skip}`);

const testpmd = (ns: Netns, args: string[], devargs = '', ports = [ns.a, ns.b], eal: string[] = []) => testpmdOn('net_af_packet', ns, args, devargs, ports, eal);

describe('net_af_packet between two network namespaces', { skip }, () => {
  it('forwards ping and a TCP transfer between them (io), tcpdump on each side seeing every frame once; the pool full after', () =>
    onNamespaces(71, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      await until(() => pmd.ethdev.linkUp(0) && pmd.ethdev.linkUp(1), 'both ports up');
      await pmd.start();
      await ns.ping(ns.a, ns.b);
      // Every frame once: as many echo requests and replies on B's side as A sent and got, no duplicates.
      const seen = await ns.pingCaptured(ns.a, ns.b, 5);
      assert.deepEqual([seen.requests, seen.replies], [[5, 5], [5, 5]], seen.lines);
      assert.ok(await ns.httpTransfer(ns.a, ns.b, 3 << 20), 'the bytes B served arrived in A');
      await pmd.stop();
      const s0 = pmd.ethdev.stats(0);
      const s1 = pmd.ethdev.stats(1);
      assert.ok(s0.ipackets > 0 && s1.ipackets > 0 && s0.opackets > 0 && s1.opackets > 0);
    }));

  it('macswap on one port reflects each frame back with its addresses swapped', () =>
    onNamespaces(72, (ns) => testpmd(ns, ['--forward-mode=macswap', '--port-topology=loop'], '', [ns.a]), (ns, pmd) => assertMacswapReflects(ns, pmd, 72)));

  it('qpairs=2 on 2 lcores spreads flows over both queues, nothing reordered within a flow', () =>
    onNamespaces(
      73,
      (ns) => testpmd(ns, ['--forward-mode=io', '--rxq=2', '--txq=2', '--nb-cores=2'], ',qpairs=2', [ns.a, ns.b], ['--lcores', '0@0,1@1,2@0']),
      async (ns, pmd) => {
        await pmd.start();
        assert.ok(await ns.httpTransfer(ns.a, ns.b, 64 << 10, 24), 'every fetch brought the bytes');
        const flows = await ns.udpFlows(ns.a, ns.b, 16, 200);
        await pmd.stop();
        assert.ok(flows.length === 16 && flows.every((f) => f.length > 0), `every flow arrived: ${flows.map((f) => f.length).join(', ')}`);
        for (const f of flows) assert.ok(f.every((seq, i) => i === 0 || seq > f[i - 1]!), `nothing reordered within a flow: ${f.join(',')}`);
        for (const p of [0, 1]) {
          const s = pmd.ethdev.stats(p);
          assert.ok(s.qIpackets[0]! > 0 && s.qIpackets[1]! > 0, `port ${p} received on both queues: ${s.qIpackets.join(', ')}`);
        }
      },
    ));

  it('carries 9000-byte frames intact at MTU 9000 (chained mbufs)', () =>
    onNamespaces(
      74,
      (ns) => {
        ns.mtu(9000);
        return testpmd(ns, ['--forward-mode=io']);
      },
      assertJumboForwarded,
    ));

  it('takes the port down when its veth is deleted mid-traffic; no crash, pool full, fds released', async () => {
    const before = fdCount();
    await onNamespaces(75, (ns) => testpmd(ns, ['--forward-mode=io']), assertDownWhenDeleted);
    assert.equal(fdCount(), before, 'every socket closed');
  });
});

/** The MTU and state flags `ip` shows for `iface` (in namespace `ns` when given). */
function linkShow(iface: string, ns?: string): { mtu: number; line: string } {
  const line = ip(...(ns ? ['-n', ns] : []), '-o', 'link', 'show', iface);
  return { mtu: Number(/ mtu (\d+) /.exec(line)![1]), line };
}

describe('net_af_packet on a veth in a namespace the test makes', { skip }, () => {
  it("mtuSet sets the interface's MTU, as DPDK's; one too large for a ring frame is refused in one line and nothing changes", async () => {
    const ns = new Netns(runTag(), 76);
    const eth = new Ethdev(Heap.create({ size: 32 << 20 }), drivers);
    try {
      const small = eth.create(`net_af_packet0,iface=${ns.a.outer}`);
      const big = eth.create(`net_af_packet1,iface=${ns.b.outer},framesz=10240`);
      eth.mtuSet(small, 1400);
      assert.equal(linkShow(ns.a.outer).mtu, 1400);
      assert.equal(eth.mtuGet(small), 1400);
      assert.throws(() => eth.mtuSet(small, 9000), /^ArgError: net_af_packet0: MTU 9000: a frame must fit framesz=\d+ \(MTU at most \d+\)$/);
      assert.equal(linkShow(ns.a.outer).mtu, 1400);
      assert.equal(eth.mtuGet(small), 1400, 'the recorded MTU is unchanged');
      eth.mtuSet(big, 9000);
      assert.equal(linkShow(ns.b.outer).mtu, 9000);
      for (const p of [small, big]) eth.close(p);
    } finally {
      ns.remove();
    }
  });

  it('says its interface has gone the moment it goes, unasked, with no watch on its own socket', async () => {
    const ns = new Netns(runTag(), 78);
    try {
      await assertGoneUnasked(`net_af_packet0,iface=${ns.a.outer}`, ns.a.outer);
    } finally {
      ns.remove();
    }
  });

  it('link follows the interface: down when it is set down or its peer drops the carrier, up again after', async () => {
    const ns = new Netns(runTag(), 77);
    const heap = Heap.create({ size: 32 << 20 });
    const eth = new Ethdev(heap, drivers);
    const pool = Mempool.create(heap, { name: 'carrier', n: 1023, cacheSize: 0 });
    try {
      const port = portUp(eth, pool, eth.create(`net_af_packet0,iface=${ns.a.outer}`));
      await until(() => eth.linkUp(port), 'link up');
      ip('link', 'set', ns.a.outer, 'down');
      assert.equal(eth.linkUp(port), false, 'administratively down');
      ip('link', 'set', ns.a.outer, 'up');
      await until(() => eth.linkUp(port), 'link up again');
      // The peer inside the namespace goes down: the outer end loses its carrier (NO-CARRIER).
      ip('-n', ns.a.ns, 'link', 'set', ns.a.inner, 'down');
      await until(() => linkShow(ns.a.outer).line.includes('NO-CARRIER'), 'no carrier');
      assert.equal(eth.linkUp(port), false, 'no carrier: link down');
      ip('-n', ns.a.ns, 'link', 'set', ns.a.inner, 'up');
      await until(() => eth.linkUp(port), 'carrier back');
      eth.close(port);
      assertFull(pool);
    } finally {
      ns.remove();
    }
  });
});

describe('net_af_packet without CAP_NET_RAW', { skip: skip ?? (spawnSync('sh', ['-c', 'command -v capsh']).status !== 0 ? 'needs capsh' : undefined) }, () => {
  it('fails with one line naming the capability', () => {
    const script = `import { Ethdev } from './src/ethdev/ethdev.ts'; import { drivers } from './src/drivers/index.ts'; import { Heap } from './src/eal/heap.ts';
try { new Ethdev(Heap.create({ size: 8 << 20 }), drivers).create('net_af_packet0,iface=lo'); } catch (e) { console.log(e.message); }`;
    const r = spawnSync('capsh', ['--drop=cap_net_raw', '--', '-c', `${process.execPath} --import tsx --input-type=module -e "$0"`, script], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'net_af_packet0: iface=lo: an AF_PACKET socket needs CAP_NET_RAW (run as root or grant the capability)', r.stderr);
  });
});
