import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Testpmd } from '../../src/apps/testpmd/testpmd.js';
import { parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { AF_PACKET_QUEUE_SIZE, AFP_TX_DATA, AFPQ_W_COUNT, AFPQ_W_FRAMES, AFPQ_W_FRAME_CAP, AFPQ_W_FREED, AFPQ_W_POOL, AFPQ_W_PORT, AFPQ_W_STATS, TP2_W_STATUS, TP_STATUS_SEND_REQUEST, TP_STATUS_USER, TP_STATUS_VLAN_VALID } from '../../src/drivers/af_packet/af-packet-layout.js';
import { afPacketOps } from '../../src/drivers/af_packet/af-packet.twin.js';
import { RX_MAC_OFFSET, ringGeometry } from '../../src/drivers/af_packet/af-packet.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, assertSameHeaps } from '../helpers.js';
import { Netns, fdCount, ip, netnsUnavailable, runTag, until } from './netns.js';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const quiet = () => {};

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

/** testpmd in this process on af_packet ports over `ns`' outer veth ends; `devargs` appended to each port's. */
function testpmd(ns: Netns, args: string[], devargs = '', ports = [ns.a, ns.b], eal: string[] = []): Testpmd {
  const vdevs = ports.flatMap((s, i) => ['--vdev', `net_af_packet${i},iface=${s.outer}${devargs}`]);
  return new Testpmd(parseTestpmdArgs([...eal, ...vdevs, '--', '--total-num-mbufs=8192', ...args]), quiet);
}

/**
 * Runs `body` with namespaces on subnet 10.99.`subnet`.0/24 and testpmd made by `make`
 * on them, then closes testpmd (which checks the pool is full) and removes the namespaces,
 * whatever happened.
 */
async function onNamespaces(subnet: number, make: (ns: Netns) => Testpmd, body: (ns: Netns, pmd: Testpmd) => Promise<void>): Promise<void> {
  const ns = new Netns(runTag(), subnet);
  try {
    const pmd = make(ns);
    try {
      await body(ns, pmd);
    } finally {
      pmd.close();
    }
  } finally {
    ns.remove();
  }
}

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
    onNamespaces(72, (ns) => testpmd(ns, ['--forward-mode=macswap', '--port-topology=loop'], '', [ns.a]), async (ns, pmd) => {
      await pmd.start();
      // A pings an address whose MAC it is told: each request comes back to A, to A's MAC from that one.
      ip('-n', ns.a.ns, 'neigh', 'replace', '10.99.72.9', 'lladdr', '02:00:00:00:00:09', 'dev', ns.a.inner);
      const seen = await ns.run(ns.a, ['sh', '-c', `timeout 20 tcpdump -i ${ns.a.inner} -c 6 -e -n icmp 2>/dev/null & sleep 1; ping -c 3 -i 0.2 -W 1 10.99.72.9 >/dev/null; wait`]).catch((e: Error) => e.message);
      await pmd.stop();
      const requests = seen.split('\n').filter((l) => l.includes('ICMP echo request'));
      assert.equal(requests.filter((l) => l.includes('> 02:00:00:00:00:09')).length, 3, seen);
      assert.equal(requests.filter((l) => l.includes(' 02:00:00:00:00:09 > ')).length, 3, seen);
      assert.equal(pmd.ethdev.stats(0).opackets, pmd.ethdev.stats(0).ipackets);
    }));

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
      async (ns, pmd) => {
        await pmd.start();
        // 8972 bytes of ICMP payload, not fragmented: 9000-byte IP packets; ping checks the echoed bytes.
        const out = await ns.ping(ns.a, ns.b, 3, ['-s', '8972', '-M', 'do']);
        assert.match(out, /3 received/);
        assert.doesNotMatch(out, /wrong data byte/);
        assert.ok(await ns.httpTransfer(ns.a, ns.b, 2 << 20), 'TCP at MTU 9000 brought the bytes');
        await pmd.stop();
      },
    ));

  it('takes the port down when its veth is deleted mid-traffic; no crash, pool full, fds released', async () => {
    const before = fdCount();
    await onNamespaces(75, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      await pmd.start();
      const flood = ns.run(ns.a, ['ping', '-i', '0.002', '-w', '30', '-q', ns.b.addr]).catch(() => '');
      await until(() => pmd.ethdev.stats(1).opackets > 50, 'traffic through port 1');
      ip('link', 'del', ns.a.outer);
      await until(() => !pmd.ethdev.linkUp(0), 'port 0 down');
      assert.ok(pmd.ethdev.linkUp(1), 'port 1 still up');
      await pmd.stop();
      await flood;
    });
    assert.equal(fdCount(), before, 'every socket closed');
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
