import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { freeOwned, poolArena, ringSize, type Arena } from '../../src/drivers/af_xdp/af-xdp.js';
import {
  AF_XDP_QUEUE_SIZE,
  AFXQ_W_A_CONS,
  AFXQ_W_A_DESCS,
  AFXQ_W_A_FLAGS,
  AFXQ_W_A_MASK,
  AFXQ_W_A_PROD,
  AFXQ_W_ARENA,
  AFXQ_W_ARENA_END,
  AFXQ_W_B_CONS,
  AFXQ_W_B_DESCS,
  AFXQ_W_B_FLAGS,
  AFXQ_W_B_MASK,
  AFXQ_W_B_PROD,
  AFXQ_W_FIRST,
  AFXQ_W_FRAME_CAP,
  AFXQ_W_FREED,
  AFXQ_W_FRONT,
  AFXQ_W_OWNED,
  AFXQ_W_POOL,
  AFXQ_W_PORT,
  AFXQ_W_SCRATCH,
  AFXQ_W_SCRATCH_COUNT,
  AFXQ_W_SG,
  AFXQ_W_STATS,
  AFXQ_W_STRIDE,
  AFXQ_W_TARGET,
  AFXQ_W_UMEM,
  XDP_PKT_CONTD,
  XDP_RING_NEED_WAKEUP,
} from '../../src/drivers/af_xdp/af-xdp-layout.js';
import { afXdpOps } from '../../src/drivers/af_xdp/af-xdp.twin.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { xdpUnavailable } from '../../src/native/xdp.js';
import { assertFull, assertSameHeaps } from '../helpers.js';
import { Netns, assertDownWhenDeleted, assertFlowsSpread, assertJumboForwarded, assertMacswapReflects, fdCount, ip, netnsUnavailable, onNamespaces, runTag, testpmdOn, until } from './netns.js';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';

/** A ring as the kernel lays one out in its mapping: producer, consumer and flags on their own cache lines, then the entries. */
function fakeRing(heap: Heap, entries: number, descSize: number): { prod: number; cons: number; flags: number; descs: number; mask: number } {
  const base = heap.reserve(192 + entries * descSize, 4096);
  heap.u8.fill(0, base, base + 192 + entries * descSize);
  return { prod: base, cons: base + 64, flags: base + 128, descs: base + 192, mask: entries - 1 };
}

/** A queue block over two played rings, as the driver writes one (af-xdp.ts queueBlock). */
function fakeBlock(heap: Heap, mp: Mempool, arena: Arena, owned: number, a: ReturnType<typeof fakeRing>, b: ReturnType<typeof fakeRing>): number {
  const q = heap.reserve(AF_XDP_QUEUE_SIZE, 64);
  const w = q >>> 2;
  const u32 = heap.u32;
  u32.fill(0, w, w + AF_XDP_QUEUE_SIZE / 4);
  u32[w + AFXQ_W_POOL] = mp.offset;
  u32[w + AFXQ_W_STATS] = heap.reserve(64, 64);
  u32[w + AFXQ_W_PORT] = 2;
  u32[w + AFXQ_W_UMEM] = Math.floor(arena.base / 4096) * 4096;
  u32[w + AFXQ_W_ARENA] = arena.base;
  u32[w + AFXQ_W_ARENA_END] = arena.end;
  u32[w + AFXQ_W_STRIDE] = arena.stride;
  u32[w + AFXQ_W_FIRST] = arena.first;
  u32[w + AFXQ_W_OWNED] = owned;
  u32[w + AFXQ_W_FRAME_CAP] = mp.bufLen - mp.headroom;
  u32[w + AFXQ_W_SCRATCH] = heap.reserve(64 * 4, 64);
  u32[w + AFXQ_W_SCRATCH_COUNT] = 64;
  u32[w + AFXQ_W_A_PROD] = a.prod;
  u32[w + AFXQ_W_A_CONS] = a.cons;
  u32[w + AFXQ_W_A_FLAGS] = a.flags;
  u32[w + AFXQ_W_A_DESCS] = a.descs;
  u32[w + AFXQ_W_A_MASK] = a.mask;
  u32[w + AFXQ_W_B_PROD] = b.prod;
  u32[w + AFXQ_W_B_CONS] = b.cons;
  u32[w + AFXQ_W_B_FLAGS] = b.flags;
  u32[w + AFXQ_W_B_DESCS] = b.descs;
  u32[w + AFXQ_W_B_MASK] = b.mask;
  return q;
}

describe('net_af_xdp kernels and their twins', () => {
  it('leave the heap byte for byte as the twins do (rings the test plays the kernel on), the pools full after', () => {
    const run = (datapath: 'wasm' | 'ts') => {
      const heap = Heap.create({ size: 32 << 20, datapath });
      const mp = Mempool.create(heap, { name: 'umem', n: 1024, cacheSize: 32 });
      // Another pool, with a larger data room: its packets are copied into UMEM mbufs, or dropped when too long.
      const other = Mempool.create(heap, { name: 'other', n: 256, cacheSize: 0, dataRoomSize: 4096 + 128 });
      const mb = new Mbufs(heap);
      const arena = poolArena(mp);
      const owned = heap.reserve(arena.count, 64);
      heap.u8.fill(0, owned, owned + arena.count);
      const entries = 64;
      const rxRing = fakeRing(heap, entries, 16);
      const fill = fakeRing(heap, entries, 8);
      const txRing = fakeRing(heap, entries, 16);
      const comp = fakeRing(heap, entries, 8);
      const rxq = fakeBlock(heap, mp, arena, owned, rxRing, fill);
      const txq = fakeBlock(heap, mp, arena, owned, txRing, comp);
      heap.u32[(rxq >>> 2) + AFXQ_W_TARGET] = 48;
      heap.u32[(txq >>> 2) + AFXQ_W_SG] = 1;
      const umem = heap.u32[(rxq >>> 2) + AFXQ_W_UMEM]!;
      const ops = afXdpOps(heap, mb, mp);
      const burst = heap.burst(64);
      const u32 = heap.u32;
      let rng = 11;
      const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
      const w = (at: number) => at >>> 2;
      for (let round = 0; round < 300; round++) {
        // The kernel fills some of the buffers the fill ring gave it, in order.
        // Now and then a packet in several fragments (multi-buffer), all published together.
        for (let j = rand(20); j > 0; j--) {
          const frags = rand(4) === 0 ? 2 + rand(3) : 1;
          const fc = u32[w(fill.cons)]!;
          const rp = u32[w(rxRing.prod)]!;
          if (u32[w(fill.prod)]! - fc < frags || rp - u32[w(rxRing.cons)]! + frags > rxRing.mask + 1) break;
          for (let f = 0; f < frags; f++) {
            const addr = u32[w(fill.descs) + (((fc + f) & fill.mask) << 1)]!;
            const len = 60 + rand(1800);
            for (let b = 0; b < len; b += 97) heap.u8[umem + addr + 256 + b] = rand(256);
            const d = w(rxRing.descs) + (((rp + f) & rxRing.mask) << 2);
            u32[d] = addr;
            u32[d + 1] = 256 << 16;
            u32[d + 2] = len;
            u32[d + 3] = f + 1 < frags ? XDP_PKT_CONTD : 0;
          }
          u32[w(fill.cons)] = fc + frags;
          u32[w(rxRing.prod)] = rp + frags;
        }
        u32[w(fill.flags)] = rand(2) * XDP_RING_NEED_WAKEUP;
        u32[w(txRing.flags)] = rand(2) * XDP_RING_NEED_WAKEUP;
        let got = ops.rx(rxq, heap.lcore, burst.byteOffset, 1 + rand(40));
        // Now and then a packet of the other pool joins the burst, some too long for a UMEM mbuf.
        if (got < 64 && rand(3) === 0) {
          const h = other.alloc();
          if (h !== 0) {
            mb.append(h, rand(4) === 0 ? 2100 : 100 + rand(1500));
            burst[got++] = h;
          }
        }
        const sent = got > 0 ? ops.tx(txq, heap.lcore, burst.byteOffset, got) : 0;
        mb.freeBulkRest(burst, u32[(txq >>> 2) + AFXQ_W_FRONT]!, 0, u32[(txq >>> 2) + AFXQ_W_FREED]!);
        if (sent < got) mb.freeBulk(burst, got - sent, sent);
        // The kernel sends some of the tx ring and completes them.
        for (let j = rand(30); j > 0; j--) {
          const tc = u32[w(txRing.cons)]!;
          if (tc === u32[w(txRing.prod)]) break;
          const cp = u32[w(comp.prod)]!;
          u32[w(comp.descs) + ((cp & comp.mask) << 1)] = u32[w(txRing.descs) + ((tc & txRing.mask) << 2)]!;
          u32[w(comp.descs) + ((cp & comp.mask) << 1) + 1] = 0;
          u32[w(txRing.cons)] = tc + 1;
          u32[w(comp.prod)] = cp + 1;
        }
      }
      // Close: what the kernel side still holds goes back through the owned array.
      assert.ok(freeOwned(heap, mb, owned, arena) > 0, 'the kernel side held buffers at the end');
      mp.flushCache();
      assertFull(mp, other);
      return heap;
    };
    assertSameHeaps(run('wasm'), run('ts'));
  });

  it('sizes rings as powers of two within the limits', () => {
    assert.deepEqual([ringSize(0), ringSize(512), ringSize(1000), ringSize(100_000), ringSize(1)], [2048, 512, 1024, 4096, 64]);
  });
});

const skip = netnsUnavailable() ?? xdpUnavailable();
if (skip && REQUIRED) throw new Error(`DPKIT_REQUIRE_TOOLS=1 but net_af_xdp's namespace tests cannot run: ${skip}`);

const testpmd = (ns: Netns, args: string[], devargs = '', ports = [ns.a, ns.b], eal: string[] = []) => testpmdOn('net_af_xdp', ns, args, devargs, ports, eal);
/** AF_XDP carries no checksum status: the senders must not leave TCP/UDP checksums to offload. */
const checksummed = { prepare: (ns: Netns) => ns.txChecksumOff() };

/** Whether an XDP program is attached to `iface` (ip link shows "xdp" / "prog/xdp"). */
function hasXdp(iface: string): boolean {
  return /\bxdp(generic|drv)?\b|prog\/xdp/.test(ip('link', 'show', 'dev', iface));
}

describe('net_af_xdp between two network namespaces', { skip }, () => {
  it('forwards ping and a TCP transfer between them (io), zero-copy from the rx pool; program detached after', async () => {
    let outer = '';
    await onNamespaces(81, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      outer = ns.a.outer;
      await until(() => pmd.ethdev.linkUp(0) && pmd.ethdev.linkUp(1), 'both ports up');
      assert.ok(hasXdp(ns.a.outer), 'the XDP program is attached');
      await pmd.start();
      await ns.ping(ns.a, ns.b);
      assert.ok(await ns.httpTransfer(ns.a, ns.b, 3 << 20), 'the bytes B served arrived in A');
      await pmd.stop();
      const s0 = pmd.ethdev.stats(0);
      const s1 = pmd.ethdev.stats(1);
      assert.ok(s0.ipackets > 0 && s1.ipackets > 0 && s0.opackets > 0 && s1.opackets > 0);
      assert.equal(s0.oerrors + s1.oerrors, 0);
      pmd.close();
      assert.ok(!hasXdp(ns.a.outer), 'close detached the program');
    }, checksummed);
    assert.ok(outer);
  });

  it('macswap on one port reflects each frame back with its addresses swapped', () =>
    onNamespaces(82, (ns) => testpmd(ns, ['--forward-mode=macswap', '--port-topology=loop'], '', [ns.a]), (ns, pmd) => assertMacswapReflects(ns, pmd, 82), checksummed));

  it('queue_count=2 on 2 lcores spreads flows over both queues', () =>
    onNamespaces(
      83,
      (ns) => testpmd(ns, ['--forward-mode=io', '--rxq=2', '--txq=2', '--nb-cores=2'], ',queue_count=2', [ns.a, ns.b], ['--lcores', '0@0,1@1,2@0']),
      assertFlowsSpread,
      { ...checksummed, queues: 2 },
    ));

  it("loads the program xdp_prog names, and refuses a file that is not one with an xsks_map, naming the devarg", async () => {
    const dir = '/usr/lib/x86_64-linux-gnu/bpf'; // where Debian's libxdp keeps its objects
    await onNamespaces(
      89,
      (ns) => {
        const bad = (file: string) => () => testpmd(ns, ['--forward-mode=io'], `,xdp_prog=${file}`);
        assert.throws(bad('/nonexistent.o'), /^ArgError: net_af_xdp0: xdp_prog=\/nonexistent.o: xdp_program__open_file: No such file or directory \(ENOENT\)$/m);
        assert.throws(bad('/etc/hostname'), /net_af_xdp0: xdp_prog=\/etc\/hostname: xdp_program__open_file: BPF object format invalid/);
        assert.throws(bad(`${dir}/xdpfilt_alw_all.o`), /xdp_prog=\S+xdpfilt_alw_all.o: xsks_map: the object has no map of that name/);
        assert.ok(!hasXdp(ns.a.outer), 'no program left behind');
        return testpmd(ns, ['--forward-mode=io'], `,xdp_prog=${dir}/xsk_def_xdp_prog.o`);
      },
      async (ns, pmd) => {
        await pmd.start();
        await ns.ping(ns.a, ns.b);
        await pmd.stop();
      },
      checksummed,
    );
  });

  it('carries 9000-byte frames intact at MTU 9000 (multi-buffer: chains of UMEM mbufs both ways)', () =>
    onNamespaces(
      84,
      (ns) => {
        ns.mtu(9000);
        return testpmd(ns, ['--forward-mode=io']);
      },
      assertJumboForwarded,
      checksummed,
    ));

  it('refuses an MTU whose frames would span more buffers than AF_XDP allows, in one line', () => {
    const ns = new Netns(runTag(), 90);
    try {
      ns.mtu(60000);
      assert.throws(() => testpmd(ns, ['--forward-mode=io']), /net_af_xdp0: iface=\S+ has MTU 60000: a frame would span 32 of the pool's 2176-byte buffers \(1920 bytes each after 256 of XDP headroom\), more than AF_XDP's 18/);
      assert.ok(!hasXdp(ns.a.outer), 'nothing attached');
    } finally {
      ns.remove();
    }
  });

  it('refuses queues the interface does not have, naming how to get them', () => {
    const ns = new Netns(runTag(), 85);
    try {
      assert.throws(() => testpmd(ns, ['--rxq=2', '--txq=2'], ',queue_count=2'), /queue_count=2 asks for rx queues up to 1; iface=\S+ has 1/);
    } finally {
      ns.remove();
    }
  });

  it('takes the port down when its veth is deleted mid-traffic; no crash, pool full, sockets and maps released', async () => {
    const before = fdCount();
    await onNamespaces(86, (ns) => testpmd(ns, ['--forward-mode=io']), assertDownWhenDeleted, checksummed);
    assert.equal(fdCount(), before, 'every socket and map fd closed');
  });
});

describe('net_af_xdp without capabilities', { skip: skip ?? (spawnSync('sh', ['-c', 'command -v capsh']).status !== 0 ? 'needs capsh' : undefined) }, () => {
  /** Creates port net_af_xdp0 on `ns`' A side, inside namespace A, with capabilities `drop` dropped. @returns what it printed. */
  const create = (ns: Netns, drop: string): string => {
    const script = `import { Ethdev } from './src/ethdev/ethdev.ts'; import { drivers } from './src/drivers/index.ts'; import { Heap } from './src/eal/heap.ts'; import { Mempool } from './src/mem/mempool.ts';
const heap = Heap.create({ size: 64 << 20 }); const e = new Ethdev(heap, drivers);
try { const p = e.create('net_af_xdp0,iface=${ns.a.inner}'); e.configure(p, 1, 1); e.rxQueueSetup(p, 0, 0, Mempool.create(heap, { name: 'p', n: 2048, cacheSize: 0 })); } catch (err) { console.log(err.message); }`;
    const r = spawnSync('ip', ['netns', 'exec', ns.a.ns, 'capsh', `--drop=${drop}`, '--', '-c', `${process.execPath} --import tsx --input-type=module -e "$0"`, script], { encoding: 'utf8' });
    return `${r.stdout.trim()}${r.stdout.trim() ? '' : r.stderr}`;
  };

  it('fails with one line naming CAP_NET_RAW, leaving no program attached', () => {
    const ns = new Netns(runTag(), 87);
    try {
      assert.equal(create(ns, 'cap_net_raw'), `net_af_xdp0: iface=${ns.a.inner}: an AF_XDP socket needs CAP_NET_RAW (run as root or grant the capability)`);
      assert.doesNotMatch(ip('-n', ns.a.ns, 'link', 'show', 'dev', ns.a.inner), /xdp/);
    } finally {
      ns.remove();
    }
  });

  it('fails with one line naming CAP_BPF when the program cannot be loaded', () => {
    const ns = new Netns(runTag(), 88);
    try {
      assert.equal(create(ns, 'cap_bpf,cap_sys_admin'), `net_af_xdp0: iface=${ns.a.inner}: loading and attaching an XDP program needs CAP_BPF and CAP_NET_ADMIN (run as root or grant the capability)`);
    } finally {
      ns.remove();
    }
  });
});
