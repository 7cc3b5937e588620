// net_pcap on live interfaces (iface=, rx_iface=, rx_iface_in=, tx_iface=, phy_mac=), DPDK's
// devargs over net_af_packet's rings: veths into network namespaces this test makes and removes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Testpmd } from '../../src/apps/testpmd/testpmd.js';
import { parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { ArgError } from '../../src/errors.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { ifaceInfo } from '../../src/native/packet.js';
import { assertFull, portUp, setup } from '../helpers.js';
import { Netns, fdCount, netnsUnavailable, runTag, until } from './netns.js';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const skip = netnsUnavailable();
if (skip && REQUIRED) throw new Error(`DPKIT_REQUIRE_TOOLS=1 but net_pcap's live tests cannot run: ${skip}`);

/** An ethdev on the test's heap, for ports made by hand. */
function ports() {
  const env = setup({ n: 2048, cacheSize: 0 }, 64 << 20);
  return { ...env, ethdev: new Ethdev(env.heap, drivers), mb: new Mbufs(env.heap) };
}

/** Sends `n` frames of the local experimental ethertype 0x88b5 on port `p`; `tag` marks them. */
function sendMarked(env: ReturnType<typeof ports>, p: number, n: number, tag: number): void {
  const burst = env.heap.burst(n);
  assert.equal(env.mp.allocBulk(burst, n), n);
  for (let i = 0; i < n; i++) {
    const h = burst[i]!;
    const at = env.mb.append(h, 60);
    env.heap.u8.fill(0, at, at + 60);
    env.heap.u8.set([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x77, 0x88, 0xb5, tag, i], at);
  }
  let sent = 0;
  while (sent < n) sent += env.ethdev.txBurst(p, 0, env.heap.burstAt(burst.heapOffset + 4 * sent, n - sent), n - sent);
}

/** Receives from port `p` until `ms` pass, counting the frames carrying `tag`; frees everything. */
async function countMarked(env: ReturnType<typeof ports>, p: number, tag: number, ms: number): Promise<number> {
  const burst = env.heap.burst(32);
  const u8 = env.heap.u8;
  let seen = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const n = env.ethdev.rxBurst(p, 0, burst, 32);
    for (let i = 0; i < n; i++) {
      const at = env.mb.mtod(burst[i]!);
      if (u8[at + 12] === 0x88 && u8[at + 13] === 0xb5 && u8[at + 14] === tag) seen++;
    }
    env.mb.freeBulk(burst, n);
    if (n === 0) await new Promise((r) => setTimeout(r, 5));
  }
  return seen;
}

describe('net_pcap devargs for live interfaces', () => {
  it("refuses DPDK's impossible combinations with one line, before opening anything", () => {
    const { ethdev } = ports();
    const bad: [string, RegExp][] = [
      ['net_pcap0,iface=lo,rx_iface=lo', /^net_pcap0: iface= is rx and tx on one interface; it cannot be combined with rx_iface=$/],
      ['net_pcap0,iface=lo,iface=lo', /^net_pcap0: iface= given 2 times; a port has one/],
      ['net_pcap0,rx_pcap=/dev/null,rx_iface=lo', /^net_pcap0: a port receives from rx_pcap files or from interfaces, not both$/],
      ['net_pcap0,rx_iface=lo,tx_pcap=/tmp/x.pcap,tx_iface=lo', /^net_pcap0: a port sends to tx_pcap files or to interfaces, not both$/],
      ['net_pcap0,rx_iface=lo,phy_mac=1', /^net_pcap0: phy_mac=1 takes the MAC of iface=, and there is none$/],
      ['net_pcap0,tx_iface=', /^net_pcap0: tx_iface=: empty interface name$/],
    ];
    for (const [devargs, re] of bad) assert.throws(() => ethdev.create(devargs), (e: unknown) => e instanceof ArgError && re.test(e.message), devargs);
  });
});

describe('net_pcap on live interfaces in network namespaces', { skip }, () => {
  it('iface= forwards a ping between two namespaces (io), each frame seen once by tcpdump; phy_mac=1 takes the MAC', async () => {
    const ns = new Netns(runTag(), 81);
    const fds = fdCount();
    try {
      const vdevs = ['--vdev', `net_pcap0,iface=${ns.a.outer},phy_mac=1`, '--vdev', `net_pcap1,iface=${ns.b.outer}`];
      const pmd = new Testpmd(parseTestpmdArgs([...vdevs, '--', '--total-num-mbufs=8192', '--forward-mode=io']), () => {});
      try {
        assert.deepEqual([...pmd.ethdev.macAddr(0)], [...ifaceInfo(ns.a.outer)!.mac], 'phy_mac=1');
        assert.notDeepEqual([...pmd.ethdev.macAddr(1)], [...ifaceInfo(ns.b.outer)!.mac], 'no phy_mac: a vdev MAC');
        await pmd.start();
        const dump = ns.run(ns.b, ['timeout', '30', 'tcpdump', '-i', ns.b.inner, '-c', '3', '-n', 'icmp[icmptype] == icmp-echo']);
        await new Promise((r) => setTimeout(r, 1000));
        await ns.ping(ns.a, ns.b, 3);
        const seen = await dump.catch((e: Error) => e.message);
        await pmd.stop();
        assert.equal(seen.split('\n').filter((l) => l.includes('ICMP echo request')).length, 3, seen);
        const s0 = pmd.ethdev.stats(0);
        const s1 = pmd.ethdev.stats(1);
        assert.ok(s0.ipackets >= 3 && s1.opackets >= 3 && s1.ipackets >= 3 && s0.opackets >= 3, 'requests one way, replies the other');
      } finally {
        pmd.close();
      }
    } finally {
      ns.remove();
    }
    assert.equal(fdCount(), fds, 'every socket closed');
  });

  it('rx_iface sees what the port itself sends out of the interface; rx_iface_in does not', async () => {
    const ns = new Netns(runTag(), 82);
    try {
      const env = ports();
      const both = portUp(env.ethdev, env.mp, env.ethdev.create(`net_pcap0,rx_iface=${ns.a.outer},tx_iface=${ns.a.outer}`));
      const inOnly = portUp(env.ethdev, env.mp, env.ethdev.create(`net_pcap1,rx_iface_in=${ns.a.outer}`));
      await until(() => env.ethdev.linkUp(both), 'port up');
      sendMarked(env, both, 8, 0x51);
      assert.equal(await countMarked(env, both, 0x51, 1500), 8, 'rx_iface: in and out');
      assert.equal(await countMarked(env, inOnly, 0x51, 300), 0, 'rx_iface_in: only what comes in');
      for (const p of [both, inOnly]) {
        env.ethdev.stop(p);
        env.ethdev.close(p);
      }
      env.mp.flushCache();
      assertFull(env.mp);
    } finally {
      ns.remove();
    }
  });
  it('tx_iface sends onto the interface: tcpdump on the veth peer reads each frame, bytes as sent', async () => {
    const ns = new Netns(runTag(), 83);
    try {
      const env = ports();
      const port = portUp(env.ethdev, env.mp, env.ethdev.create(`net_pcap0,rx_iface_in=${ns.a.outer},tx_iface=${ns.a.outer}`));
      await until(() => env.ethdev.linkUp(port), 'port up');
      // Frames go out until tcpdump in A has read 4 of them (it may start after the first ones).
      const seen = ns.run(ns.a, ['timeout', '30', 'tcpdump', '-i', ns.a.inner, '-c', '4', '-e', '-n', '-x', 'ether', 'proto', '0x88b5']).catch((e: Error) => e.message);
      let done = false;
      void seen.then(() => (done = true));
      await until(() => {
        sendMarked(env, port, 1, 0x52);
        return done;
      }, 'tcpdump in A reading what tx_iface sent');
      const out = await seen;
      const frames = out.split('\n').filter((l) => l.includes('02:00:00:00:00:77 > ff:ff:ff:ff:ff:ff, ethertype Unknown (0x88b5), length 60'));
      assert.equal(frames.length, 4, out);
      // -x prints from the payload on: the tag, then the frame's index (0) and zeros.
      assert.match(out, /0x0000: {2}5200 0000 0000 0000/);
      env.ethdev.stop(port);
      env.ethdev.close(port);
      env.mp.flushCache();
      assertFull(env.mp);
    } finally {
      ns.remove();
    }
  });
});
