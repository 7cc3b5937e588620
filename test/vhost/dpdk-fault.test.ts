/**
 * A DPDK peer killed mid-traffic (SIGKILL, as a crashed VM or switch) and
 * started again: dpkit stays up, its port goes down then up again with no
 * restart of its own, traffic resumes, and at the end every mbuf is back in
 * its pool and every fd the connections opened is closed. Packed rings give
 * their mbufs back as soon as the link is down (DPDK resets them on reconnect).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { PackedRxQueue } from '../../src/drivers/virtio/virtio-packed.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { memfdMemoryProvider } from '../../src/native/memory.js';
import { setVhostLog } from '../../src/vhost/log.js';
import { assertFull } from '../helpers.js';
import { writeCapture } from '../pcap/captures.js';
import { InteractiveTestpmd, fdCount, killTestpmds, leakedFds, openFds, seqFrame, skipDpdk, waitFor } from './dpdk.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-vhfault-'));
after(async () => {
  await killTestpmds();
  rmSync(dir, { recursive: true, force: true });
});
const lines: string[] = [];
setVhostLog((l) => lines.push(l));

const CASES = [
  { what: 'dpkit net_vhost (server), DPDK virtio_user killed', dpkit: (s: string) => `net_vhost0,iface=${s}`, dpdk: (s: string) => `virtio_user0,path=${s}`, dpkitFirst: true },
  { what: 'dpkit virtio_user (client, reconnecting), DPDK net_vhost killed', dpkit: (s: string) => `virtio_user0,path=${s}`, dpdk: (s: string) => `net_vhost0,iface=${s}`, dpkitFirst: false },
  // Packed rings: the restarted backend resumes past the used elements the dead one wrote (resumeBase).
  { what: 'dpkit virtio_user (packed_vq=1, reconnecting), DPDK net_vhost killed', dpkit: (s: string) => `virtio_user0,path=${s},packed_vq=1`, dpdk: (s: string) => `net_vhost0,iface=${s}`, dpkitFirst: false },
];

describe('vhost-user when the DPDK peer dies', { skip: skipDpdk }, () => {
  CASES.forEach((c, k) => {
    it(`${c.what}: link down, then up again on restart; traffic resumes; pools full and fds back`, async () => {
      const sock = join(dir, `f${k}.sock`);
      const inPcap = join(dir, `f${k}.pcap`);
      writeCapture(inPcap, Array.from({ length: 16 }, (_, i) => ({ bytes: seqFrame(i, 64 + i), sec: 1, nsec: i })));
      const guest = c.dpkit(sock).startsWith('virtio_user');
      const heap = guest ? Heap.create({ size: 96 << 20, provider: memfdMemoryProvider(96 << 20) }) : Heap.create({ size: (64 << 20) + (1280 << 20) });
      const pool = Mempool.create(heap, { name: 'pool', n: 8192, cacheSize: 64 });
      const ethdev = new Ethdev(heap, drivers);
      const mb = new Mbufs(heap);
      const fds0 = openFds();
      const port = ethdev.create(c.dpkit(sock));
      const rx = heap.burst(32);
      const tx = heap.burst(32);
      let received = 0;
      let isUp = false;
      const pump = () => {
        if (!isUp) return;
        for (let round = 0; round < 32; round++) {
          const n = ethdev.rxBurst(port, 0, rx, 32);
          if (n > 0) mb.freeBulk(rx, n);
          received += n;
          // Traffic the other way too, so mbufs are in flight in dpkit's tx ring when the peer dies.
          const got = pool.allocBulk(tx, 8);
          if (got === 0) continue;
          for (let i = 0; i < 8; i++) mb.write(tx[i]!, seqFrame(i, 64));
          const took = ethdev.txBurst(port, 0, tx, 8);
          if (took < 8) mb.freeBulk(tx, 8 - took, took);
        }
      };
      const up = () => {
        ethdev.configure(port, 1, 1);
        ethdev.rxQueueSetup(port, 0, 0, pool);
        ethdev.txQueueSetup(port, 0, 0);
        ethdev.start(port);
        isUp = true;
      };
      const peer = (n: number) => new InteractiveTestpmd(`dpkit-vhf${k}${n}-${process.pid}`, [`net_pcap0,rx_pcap=${inPcap},infinite_rx=1`, c.dpdk(sock)], ['--forward-mode=io', '--no-flush-rx']);
      let tp = peer(1);
      if (c.dpkitFirst) up();
      await tp.ready(pump);
      if (!c.dpkitFirst) up();
      await waitFor('link up', () => ethdev.linkUp(port), pump, tp);
      if (guest) assert.equal(ethdev.rxQueue(port, 0) instanceof PackedRxQueue, c.dpkit(sock).includes('packed_vq=1'), 'the ring kind asked for');
      await tp.command('start', /testpmd> $/m, pump);
      await waitFor('traffic from the first peer', () => received >= 1000, pump, tp);
      const fdsUp = fdCount();

      await tp.kill();
      await waitFor('link down after the peer died', () => !ethdev.linkUp(port), pump);
      assert.ok(lines.some((l) => /closed the connection.*link down/.test(l)), lines.join('\n'));
      // Packed rings are emptied when the backend goes away, as DPDK resets them: every mbuf back while the link is down.
      if (c.dpkit(sock).includes('packed_vq=1')) await waitFor('every mbuf back in its pool while the link is down', () => pool.full(), pump);
      // A killed DPDK server leaves its socket file, which its next start would refuse to bind over.
      if (!c.dpkitFirst && existsSync(sock)) rmSync(sock);
      tp = peer(2);
      await tp.ready(pump);
      await waitFor('link up again with the restarted peer', () => ethdev.linkUp(port), pump, tp);
      const before = received;
      await tp.command('start', /testpmd> $/m, pump);
      await waitFor('traffic from the restarted peer', () => received >= before + 1000, pump, tp);
      assert.equal(fdCount(), fdsUp, 'the restarted connection holds as many fds as the first');

      await tp.stopForwarding(pump);
      await tp.quit();
      await waitFor('link down when the peer quits', () => !ethdev.linkUp(port), pump);
      ethdev.stop(port);
      ethdev.close(port);
      assertFull(pool);
      assert.deepEqual(leakedFds(fds0), [], 'every fd of both connections is closed');
    });
  });
});
