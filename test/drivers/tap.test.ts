import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { drivers } from '../../src/drivers/index.js';
import { Heap } from '../../src/eal/heap.js';
import { Mempool } from '../../src/mem/mempool.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { assertFull } from '../helpers.js';
import { Testpmd } from '../../src/apps/testpmd/testpmd.js';
import { parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { tapMac } from '../../src/drivers/tap/tap.js';
import { native } from '../../src/native/native.js';
import { Netns, assertGoneUnasked, fdCount, ip, netnsUnavailable, runTag, until } from './netns.js';
import { TAPQ_W_ERRORS, TAPQ_W_FD, TAPQ_W_MBUFS } from '../../src/drivers/tap/tap-layout.js';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const quiet = () => {};

describe('net_tap devargs', () => {
  it("mac=fixed counts up from 00:64:74:61:70:30 as DPDK's; an address is taken as given", () => {
    const a = tapMac('net_tap0', 'fixed');
    const b = tapMac('net_tap1', 'FIXED');
    assert.deepEqual([...a.subarray(0, 5)], [0x00, 0x64, 0x74, 0x61, 0x70]);
    assert.equal(b[5], a[5]! + 1);
    assert.deepEqual([...tapMac('net_tap0', '02:aa:bb:cc:dd:0e')], [2, 0xaa, 0xbb, 0xcc, 0xdd, 0x0e]);
  });

  it('refuses a malformed mac with one line naming it', () => {
    assert.throws(() => tapMac('net_tap0', '02:aa:bb'), /^ArgError: net_tap0: mac=02:aa:bb: expected fixed or xx:xx:xx:xx:xx:xx$/);
  });
});

describe('net_tap refusals before any device is made', { skip: native() ? undefined : 'needs the native shim' }, () => {
  const create = (devargs: string) => () => new Ethdev(Heap.create({ size: 8 << 20 }), drivers).create(devargs);
  it('refuses an interface name too long, in one line', () => {
    assert.throws(create('net_tap0,iface=abcdefghijklmnop'), /^ArgError: net_tap0: iface=abcdefghijklmnop: an interface name has 1 to 15 bytes$/);
  });
});

const skip = netnsUnavailable() ?? (existsSync('/dev/net/tun') ? undefined : 'needs /dev/net/tun');
if (skip && REQUIRED) throw new Error(`DPKIT_REQUIRE_TOOLS=1 but net_tap's namespace tests cannot run: ${skip}`);

describe("net_tap's burst calls in the shim", { skip: native() ? undefined : 'needs the native shim' }, () => {
  const shim = () => native() as unknown as Record<string, (...a: unknown[]) => number>;

  it('refuse a block, a burst or an mbuf array reaching outside the heap, as a usage error', () => {
    const heap = new Uint8Array(new SharedArrayBuffer(1 << 16));
    for (const [fn, extra] of [['tapRxBurst', [0]], ['tapTxBurst', []]] as const) {
      assert.throws(() => shim()[fn]!(heap, (1 << 16) - 32, 0, 1, ...extra), /^TypeError: tap(Rx|Tx)Burst\(heap/, 'block past the end');
      assert.throws(() => shim()[fn]!(heap, 0, (1 << 16) - 4, 2, ...extra), /^TypeError: tap(Rx|Tx)Burst\(heap/, 'burst past the end');
    }
    new Uint32Array(heap.buffer)[TAPQ_W_MBUFS] = (1 << 16) - 64; // the rx array runs past the heap
    assert.throws(() => shim()['tapRxBurst']!(heap, 0, 64, 1, 0), /^TypeError: tapRxBurst\(heap/);
  });

  it('never follow a handle outside the heap: rx reads nothing (-EFAULT), tx drops the packet as an error', () => {
    const heap = new Uint8Array(new SharedArrayBuffer(1 << 16));
    const u32 = new Uint32Array(heap.buffer);
    u32[TAPQ_W_FD] = 0x7fffffff; // no such fd: a read or write would fail with EBADF, not EFAULT
    u32[TAPQ_W_MBUFS] = 1024;
    u32[1024 >>> 2] = 0xffffff; // a handle whose record is far past 64 KiB
    u32[512 >>> 2] = 0xffffff;
    assert.equal(shim()['tapRxBurst']!(heap, 0, 512, 1, 1), -14);
    assert.equal(shim()['tapTxBurst']!(heap, 0, 512, 1), 1);
    assert.equal(u32[TAPQ_W_ERRORS], 1);
  });
});

/** testpmd in this process on taps named after `ns`' sides (`${tag}a0`, `${tag}b0`), then moved into the namespaces. */
function testpmd(ns: Netns, args: string[], sides = [ns.a, ns.b], eal: string[] = []): Testpmd {
  const vdevs = sides.flatMap((s, i) => ['--vdev', `net_tap${i},iface=${s.inner}`]);
  const pmd = new Testpmd(parseTestpmdArgs([...eal, ...vdevs, '--', '--total-num-mbufs=8192', ...args]), quiet);
  try {
    for (const s of sides) ns.adopt(s);
  } catch (e) {
    pmd.close();
    throw e;
  }
  return pmd;
}

/** Runs `body` on fresh namespaces and testpmd on taps in them; closes testpmd (checking the pool is full) and removes the namespaces whatever happened. */
async function onTaps(subnet: number, make: (ns: Netns) => Testpmd, body: (ns: Netns, pmd: Testpmd) => Promise<void>): Promise<void> {
  const ns = new Netns(runTag(), subnet, false);
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

describe('net_tap between two network namespaces (each tap moved into one)', { skip }, () => {
  it('forwards ping and a TCP transfer (io); tcpdump on each side sees every echo request once', () =>
    onTaps(81, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      await until(() => pmd.ethdev.linkUp(0) && pmd.ethdev.linkUp(1), 'both ports up');
      await pmd.start();
      const seen = await ns.pingCaptured(ns.a, ns.b, 5);
      assert.deepEqual([seen.requests, seen.replies], [[5, 5], [5, 5]], seen.lines);
      assert.ok(await ns.httpTransfer(ns.a, ns.b, 3 << 20), 'the bytes B served arrived in A');
      await pmd.stop();
      const s0 = pmd.ethdev.stats(0);
      const s1 = pmd.ethdev.stats(1);
      assert.ok(s0.ipackets > 0 && s1.ipackets > 0 && s0.opackets > 0 && s1.opackets > 0);
    }));

  it('macswap on one port reflects each frame back with its addresses swapped', () =>
    onTaps(82, (ns) => testpmd(ns, ['--forward-mode=macswap', '--port-topology=loop'], [ns.a]), async (ns, pmd) => {
      await pmd.start();
      ip('-n', ns.a.ns, 'neigh', 'replace', '10.99.82.9', 'lladdr', '02:00:00:00:00:09', 'dev', ns.a.inner);
      const seen = await ns.run(ns.a, ['sh', '-c', `timeout 20 tcpdump --immediate-mode -i ${ns.a.inner} -c 6 -e -n icmp 2>/dev/null & sleep 1; ping -c 3 -i 0.2 -W 1 10.99.82.9 >/dev/null; wait`]).catch((e: Error) => e.message);
      await pmd.stop();
      const requests = seen.split('\n').filter((l) => l.includes('ICMP echo request'));
      assert.equal(requests.filter((l) => l.includes('> 02:00:00:00:00:09')).length, 3, seen);
      assert.equal(requests.filter((l) => l.includes(' 02:00:00:00:00:09 > ')).length, 3, seen);
      assert.equal(pmd.ethdev.stats(0).opackets, pmd.ethdev.stats(0).ipackets);
    }));

  it('2 queue pairs on 2 lcores spread flows over both queues, nothing reordered within a flow', () =>
    onTaps(
      83,
      (ns) => testpmd(ns, ['--forward-mode=io', '--rxq=2', '--txq=2', '--nb-cores=2'], [ns.a, ns.b], ['--lcores', '0@0,1@1,2@0']),
      async (ns, pmd) => {
        await pmd.start();
        await ns.ping(ns.a, ns.b, 1);
        const flows = await ns.udpFlows(ns.a, ns.b, 16, 200);
        await pmd.stop();
        assert.ok(flows.length === 16 && flows.every((f) => f.length > 0), `every flow arrived: ${flows.map((f) => f.length).join(', ')}`);
        for (const f of flows) assert.ok(f.every((seq, i) => i === 0 || seq > f[i - 1]!), `in order: ${f.join(',')}`);
        const s = pmd.ethdev.stats(0);
        assert.ok(s.qIpackets[0]! > 0 && s.qIpackets[1]! > 0, `port 0 received on both queues: ${s.qIpackets.join(', ')}`);
      },
    ));

  it('carries 9000-byte frames intact at MTU 9000 (chained mbufs)', () =>
    onTaps(84, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      for (const s of [ns.a, ns.b]) ip('-n', s.ns, 'link', 'set', s.inner, 'mtu', '9000');
      await pmd.start();
      const out = await ns.ping(ns.a, ns.b, 3, ['-s', '8972', '-M', 'do']);
      assert.match(out, /3 received/);
      assert.doesNotMatch(out, /wrong data byte/);
      assert.ok(await ns.httpTransfer(ns.a, ns.b, 2 << 20), 'TCP at MTU 9000 brought the bytes');
      await pmd.stop();
    }));

  it('takes the port down when its tap is deleted mid-traffic; no crash, pool full, fds released', async () => {
    const before = fdCount();
    await onTaps(85, (ns) => testpmd(ns, ['--forward-mode=io']), async (ns, pmd) => {
      await pmd.start();
      const flood = ns.run(ns.a, ['ping', '-i', '0.002', '-w', '30', '-q', ns.b.addr]).catch(() => '');
      await until(() => pmd.ethdev.stats(1).opackets > 50, 'traffic through port 1');
      ip('-n', ns.a.ns, 'link', 'del', ns.a.inner);
      await until(() => !pmd.ethdev.linkUp(0), 'port 0 down');
      assert.ok(pmd.ethdev.linkUp(1), 'port 1 still up');
      await pmd.stop();
      // The flood has nowhere to go now: end it rather than wait out its deadline.
      spawnSync('sh', ['-c', `ip netns pids ${ns.a.ns} | xargs -r kill`]);
      await flood;
    });
    assert.equal(fdCount(), before, 'every fd closed');
  });
});

describe('net_tap by default', { skip }, () => {
  it("makes dtapN, the first free, as DPDK's dtap0, dtap1…, and the kernel removes it when the port closes", () => {
    const eth = new Ethdev(Heap.create({ size: 16 << 20 }), drivers);
    const dtaps = () => new Set(ip('-o', 'link', 'show', 'type', 'tun').split('\n').flatMap((l) => / (dtap\d+)[:@]/.exec(l)?.[1] ?? []));
    const before = dtaps();
    const fds = fdCount();
    const port = eth.create('net_tap0');
    const mine = [...dtaps()].filter((n) => !before.has(n));
    assert.equal(mine.length, 1, `one new dtapN interface: ${mine.join(', ')}`);
    eth.close(port);
    assert.equal(fdCount(), fds, 'its fd closed');
    assert.ok(!dtaps().has(mine[0]!), `${mine[0]} removed`);
  });
});

describe('net_tap deleted while it is in this namespace', { skip }, () => {
  it('says the tap has gone the moment it goes, unasked (netlink link events, no watch on its fd), and closes every fd', async () => {
    const name = `${runTag()}g`;
    await assertGoneUnasked(`net_tap0,iface=${name}`, name);
  });
});

describe('net_tap settings that act on the interface', { skip }, () => {
  it("mtuSet sets the tap's MTU while it is here, and says where to set it once moved; the link follows the tap up and down", async () => {
    const ns = new Netns(runTag(), 86, false);
    const heap = Heap.create({ size: 32 << 20 });
    const eth = new Ethdev(heap, drivers);
    const pool = Mempool.create(heap, { name: 'tapmtu', n: 1023, cacheSize: 0 });
    try {
      const port = eth.create(`net_tap0,iface=${ns.a.inner}`);
      eth.configure(port, 1, 1);
      eth.rxQueueSetup(port, 0, 0, pool);
      eth.txQueueSetup(port, 0, 0);
      eth.start(port);
      eth.mtuSet(port, 9000);
      assert.match(ip('-o', 'link', 'show', ns.a.inner), / mtu 9000 /);
      assert.throws(() => eth.mtuSet(port, 16200), /^ArgError: net_tap0: MTU 16200: frames are at most 16128 bytes \(MTU at most 16114\)$/);
      assert.ok(eth.linkUp(port), 'up once started');
      ip('link', 'set', ns.a.inner, 'down');
      assert.equal(eth.linkUp(port), false, 'set down: link down');
      ip('link', 'set', ns.a.inner, 'up');
      assert.ok(eth.linkUp(port), 'up again');
      ns.adopt(ns.a);
      assert.throws(() => eth.mtuSet(port, 1400), new RegExp(`^ArgError: net_tap0: iface=${ns.a.inner} is not in this network namespace; its MTU is set where it is \\(ip link set ${ns.a.inner} mtu 1400\\)$`));
      assert.equal(eth.mtuGet(port), 9000);
      eth.close(port);
      assertFull(pool);
    } finally {
      ns.remove();
    }
  });
});

describe('net_tap remote=', { skip }, () => {
  it("takes the remote interface's traffic and sends out of it (TC redirection, as DPDK's), its MAC, and removes the rules at close", async () => {
    const ns = new Netns(runTag(), 87);
    const heap = Heap.create({ size: 32 << 20 });
    const eth = new Ethdev(heap, drivers);
    const mbufs = new Mbufs(heap);
    const pool = Mempool.create(heap, { name: 'remote', n: 1023, cacheSize: 0 });
    const burst = heap.burst(32);
    const remote = ns.a.outer;
    try {
      const port = eth.create(`net_tap0,iface=${ns.tag}t0,remote=${remote}`);
      eth.configure(port, 1, 1);
      eth.rxQueueSetup(port, 0, 0, pool);
      eth.txQueueSetup(port, 0, 0);
      eth.start(port);
      const remoteMac = /link\/ether ([0-9a-f:]+)/.exec(ip('-o', 'link', 'show', remote))![1]!;
      assert.equal([...eth.macAddr(port)].map((b) => b.toString(16).padStart(2, '0')).join(':'), remoteMac, "the port takes the remote's MAC");
      assert.match(ip('-o', 'link', 'show', `${ns.tag}t0`), /[<,]UP[,>]/);

      // Received: A pings through its veth; the remote end's frames reach the port.
      ip('-n', ns.a.ns, 'neigh', 'replace', '10.99.87.9', 'lladdr', remoteMac, 'dev', ns.a.inner);
      const ping = ns.run(ns.a, ['ping', '-c', '40', '-i', '0.2', '-W', '1', '10.99.87.9']).catch(() => '');
      let icmp = 0;
      await until(() => {
        const n = eth.rxBurst(port, 0, burst, 32);
        for (let i = 0; i < n; i++) {
          const at = mbufs.mtod(burst[i]!);
          // IPv4 (0x0800), protocol ICMP (1), to 10.99.87.9.
          if (heap.u8[at + 12] === 8 && heap.u8[at + 13] === 0 && heap.u8[at + 23] === 1 && heap.u8[at + 33] === 9) icmp++;
        }
        mbufs.freeBulk(burst, n);
        return icmp >= 3;
      }, 'the pings on the port');

      // Sent: frames the port sends come out of the remote end into A, where tcpdump sees them.
      const seen = ns.run(ns.a, ['timeout', '30', 'tcpdump', '-i', ns.a.inner, '-c', '2', '-e', '-n', 'ether', 'proto', '0x88b5']).catch((e: Error) => e.message);
      let done = false;
      void seen.then(() => (done = true));
      await until(() => {
        assert.equal(pool.allocBulk(burst, 1), 1);
        const at = mbufs.append(burst[0]!, 60);
        heap.u8.fill(0xff, at, at + 6);
        heap.u8.set(eth.macAddr(port), at + 6);
        heap.u8[at + 12] = 0x88;
        heap.u8[at + 13] = 0xb5;
        if (eth.txBurst(port, 0, burst, 1) !== 1) mbufs.freeBulk(burst, 1);
        return done;
      }, 'tcpdump in A seeing what the port sent');
      assert.match(await seen, new RegExp(`${remoteMac} > ff:ff:ff:ff:ff:ff, ethertype Unknown \\(0x88b5\\)`));
      await ping;
      eth.close(port);
      assert.doesNotMatch(spawnSync('tc', ['qdisc', 'show', 'dev', remote], { encoding: 'utf8' }).stdout, /ingress/, 'the redirection removed');
      assertFull(pool);
    } finally {
      ns.remove();
    }
  });

  it("refuses a remote whose ingress slot another program's qdisc holds, in one line, and leaves nothing behind (its rules kept, no tap, no fd)", () => {
    const ns = new Netns(runTag(), 88);
    const remote = ns.a.outer;
    const tc = (...args: string[]) => spawnSync('tc', args, { encoding: 'utf8' });
    const tapName = `${ns.tag}t0`;
    try {
      // clsact takes the same ingress slot as the ingress qdisc the redirection adds; a filter of its own on it.
      assert.equal(tc('qdisc', 'add', 'dev', remote, 'clsact').status, 0);
      assert.equal(tc('filter', 'add', 'dev', remote, 'ingress', 'protocol', 'all', 'u32', 'match', 'u32', '0', '0', 'classid', '1:1').status, 0);
      const rulesBefore = tc('filter', 'show', 'dev', remote, 'ingress').stdout;
      const fds = fdCount();
      const eth = new Ethdev(Heap.create({ size: 16 << 20 }), drivers);
      let message = '';
      assert.throws(
        () => eth.create(`net_tap0,iface=${tapName},remote=${remote}`),
        (e: Error) => ((message = `${e.name}: ${e.message}`), true),
      );
      assert.equal(
        message,
        `ArgError: net_tap0: remote=${remote}: ${remote} already has an ingress or clsact qdisc (another program's TC rules), which the redirection needs; remove it (tc qdisc del dev ${remote} ingress, or clsact) or choose another interface`,
      );
      assert.doesNotMatch(message, /\n/, 'one line');
      assert.equal(spawnSync('ip', ['link', 'show', tapName], { encoding: 'utf8' }).status, 1, 'the tap made for the port is gone');
      assert.equal(fdCount(), fds, 'its fd closed');
      assert.match(tc('qdisc', 'show', 'dev', remote).stdout, /qdisc clsact/, "the other program's qdisc stays");
      assert.equal(tc('filter', 'show', 'dev', remote, 'ingress').stdout, rulesBefore, 'and its filter');
      assert.equal(eth.count(), 0, 'no port made');
    } finally {
      ns.remove();
    }
  });

  it('refuses a remote that does not exist, in one line', () => {
    const eth = new Ethdev(Heap.create({ size: 16 << 20 }), drivers);
    assert.throws(() => eth.create('net_tap0,remote=nosuchif0'), /^ArgError: net_tap0: remote=nosuchif0: no such interface in this network namespace$/);
  });
});

describe('net_tap without CAP_NET_ADMIN', { skip: skip ?? (spawnSync('sh', ['-c', 'command -v capsh']).status !== 0 ? 'needs capsh' : undefined) }, () => {
  it('fails with one line naming the capability', () => {
    const script = `import { Ethdev } from './src/ethdev/ethdev.ts'; import { drivers } from './src/drivers/index.ts'; import { Heap } from './src/eal/heap.ts';
try { new Ethdev(Heap.create({ size: 8 << 20 }), drivers).create('net_tap0,iface=dtapnocap'); } catch (e) { console.log(e.message); }`;
    const r = spawnSync('capsh', ['--drop=cap_net_admin', '--', '-c', `${process.execPath} --import tsx --input-type=module -e "$0"`, script], { encoding: 'utf8' });
    assert.equal(r.stdout.trim(), 'net_tap0: iface=dtapnocap: a TAP device needs CAP_NET_ADMIN (run as root or grant the capability)', r.stderr);
  });
});

describe('net_tap moves bytes once, straight between the tap and mbufs', { skip }, () => {
  /** A tap port and a net_af_packet port on the same interface (MTU 9000): what one sends, the other receives. */
  function rig(poolN: number) {
    const heap = Heap.create({ size: 64 << 20 });
    const eth = new Ethdev(heap, drivers);
    const mbufs = new Mbufs(heap);
    const pool = Mempool.create(heap, { name: 'tapbytes', n: poolN, cacheSize: 0 });
    const other = Mempool.create(heap, { name: 'afp', n: 2047, cacheSize: 0 });
    const name = `${runTag()}c`;
    const tap = eth.create(`net_tap0,iface=${name}`);
    eth.configure(tap, 1, 1);
    eth.rxQueueSetup(tap, 0, 0, pool);
    eth.txQueueSetup(tap, 0, 0);
    spawnSync('sysctl', ['-qw', `net.ipv6.conf.${name}.disable_ipv6=1`]); // before it is up: no MLD or router solicitation among the frames
    eth.start(tap);
    eth.mtuSet(tap, 9000);
    const afp = eth.create(`net_af_packet1,iface=${name}`);
    eth.configure(afp, 1, 1);
    eth.rxQueueSetup(afp, 0, 0, other);
    eth.txQueueSetup(afp, 0, 0);
    eth.start(afp);
    return { heap, eth, mbufs, pool, other, tap, afp };
  }
  type Rig = ReturnType<typeof rig>;

  /** Frame `len` bytes long: broadcast, ethertype 0x88b5, its length in bytes 14..15, then a pattern of it. */
  const frame = (len: number) => Uint8Array.from({ length: len }, (_, i) => (i < 6 ? 0xff : i === 12 ? 0x88 : i === 13 ? 0xb5 : i === 14 ? len >> 8 : i === 15 ? len & 0xff : (i * 7 + len) & 0xff));
  /** An mbuf chain holding `bytes`, in segments of at most `seg` bytes. */
  function chain(r: Rig, bytes: Uint8Array, seg: number): number {
    const head = r.mbufs.fromBytes(r.pool, bytes, seg);
    assert.notEqual(head, 0, `no chain of ${bytes.length} bytes in ${seg}-byte segments`);
    return head;
  }
  /** Receives on `port` until `count` test frames came (others freed); returns them by length. */
  async function receive(r: Rig, port: number, count: number): Promise<Map<number, number>> {
    const burst = r.heap.burst(32);
    const got = new Map<number, number>();
    await until(() => {
      const n = r.eth.rxBurst(port, 0, burst, 32);
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const at = r.mbufs.mtod(h);
        if (r.mbufs.dataLen(h) >= 16 && r.heap.u8[at + 12] === 0x88 && r.heap.u8[at + 13] === 0xb5) got.set(r.mbufs.pktLen(h), h);
        else r.mbufs.free(h);
      }
      return got.size >= count;
    }, `${count} frames on port ${port}`);
    return got;
  }
  const sizes = [60, 64, 100, 1514, 2047, 2048, 2049, 3000, 4096, 4097, 6000, 8191, 8192, 9000];

  it('frames of 60..9000 bytes arrive intact both ways, chained above the 2048-byte data room', async () => {
    const r = rig(4095);
    try {
      // Into the tap: net_af_packet sends them out of the interface, the tap port reads them.
      const out = r.heap.burst(sizes.length);
      sizes.forEach((len, i) => (out[i] = chain(r, frame(len), 2048)));
      assert.equal(r.eth.txBurst(r.afp, 0, out, sizes.length), sizes.length);
      const inTap = await receive(r, r.tap, sizes.length);
      for (const len of sizes) {
        const h = inTap.get(len)!;
        assert.deepEqual(r.mbufs.read(h), frame(len), `${len} bytes read by the tap port`);
        assert.equal(r.mbufs.nbSegs(h), Math.ceil(len / 2048), `${len} bytes in ${Math.ceil(len / 2048)} mbufs`);
        assert.equal(r.mbufs.port(h), r.tap);
        r.mbufs.free(h);
      }
      // Out of the tap: chains of uneven segments written by the tap port, read by net_af_packet.
      sizes.forEach((len, i) => (out[i] = chain(r, frame(len), 1000)));
      assert.equal(r.eth.txBurst(r.tap, 0, out, sizes.length), sizes.length);
      const fromTap = await receive(r, r.afp, sizes.length);
      for (const len of sizes) {
        assert.deepEqual(r.mbufs.read(fromTap.get(len)!), frame(len), `${len} bytes written by the tap port`);
        r.mbufs.free(fromTap.get(len)!);
      }
      const s = r.eth.stats(r.tap);
      assert.equal(s.opackets, sizes.length);
      assert.equal(s.obytes, sizes.reduce((a, b) => a + b, 0));
      assert.equal(s.ierrors + s.oerrors, 0);
    } finally {
      r.eth.close(r.tap);
      r.eth.close(r.afp);
    }
    assertFull(r.pool, r.other);
  });

  it('a burst that meets EAGAIN midway takes only the mbufs its frames filled and returns the rest to the pool', async () => {
    const r = rig(4095);
    try {
      const out = r.heap.burst(3);
      [60, 9000, 100].forEach((len, i) => (out[i] = chain(r, frame(len), 2048)));
      assert.equal(r.eth.txBurst(r.afp, 0, out, 3), 3);
      const got = await receive(r, r.tap, 3);
      // 1 + 5 + 1 mbufs hold the three frames; every other mbuf the bursts took went back.
      assert.equal(r.pool.inUse(), 7);
      for (const h of got.values()) r.mbufs.free(h);
      const burst = r.heap.burst(32);
      assert.equal(r.eth.rxBurst(r.tap, 0, burst, 32), 0, 'nothing waiting');
      assert.equal(r.pool.inUse(), 0, 'a burst finding nothing gives every mbuf back');
    } finally {
      r.eth.close(r.tap);
      r.eth.close(r.afp);
    }
    assertFull(r.pool, r.other);
  });

  it('a pool short of a burst reads one frame at a time; one short of a frame counts rx_nombuf and leaves the frame', async () => {
    const r = rig(40); // 32 heads and 7 spares do not fit beside the frames held below
    try {
      const out = r.heap.burst(2);
      out[0] = chain(r, frame(100), 2048);
      out[1] = chain(r, frame(200), 2048);
      const hold = r.heap.burst(40);
      assert.equal(r.pool.allocBulk(hold, 30), 30);
      assert.equal(r.eth.txBurst(r.afp, 0, out, 2), 2); // sent and freed: 10 left, one frame's head and spares but not a burst's
      const burst = r.heap.burst(32);
      let n = 0;
      await until(() => (n = r.eth.rxBurst(r.tap, 0, burst, 32)) > 0, 'a frame on the tap port');
      assert.equal(n, 1, 'one frame per burst while the pool is short');
      assert.equal(r.mbufs.pktLen(burst[0]!), 100);
      r.mbufs.free(burst[0]!);
      assert.equal(r.pool.allocBulk(hold, 3, 30), 3); // 7 left: short of one frame's 8
      assert.equal(r.eth.rxBurst(r.tap, 0, burst, 32), 0);
      assert.equal(r.eth.stats(r.tap).rxNombuf, 1, 'the waiting frame counted');
      r.mbufs.freeBulk(hold, 33);
      await until(() => (n = r.eth.rxBurst(r.tap, 0, burst, 32)) > 0, 'the frame left waiting');
      assert.equal(r.mbufs.pktLen(burst[0]!), 200);
      r.mbufs.freeBulk(burst, n);
    } finally {
      r.eth.close(r.tap);
      r.eth.close(r.afp);
    }
    assertFull(r.pool, r.other);
  });
});
