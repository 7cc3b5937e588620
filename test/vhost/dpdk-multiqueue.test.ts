/**
 * queues=2 against real DPDK (Debian's dpdk-testpmd, 22.11), in both roles:
 * dpkit net_vhost with DPDK's virtio_user, and dpkit virtio_user with DPDK's
 * net_vhost, each side with two queue pairs and DPDK forwarding on two lcores.
 *
 * DPDK's io engine pairs queue q of its vhost-user port with queue q of a
 * pcap port that has one capture per queue: what dpkit sends on its queue q
 * lands in DPDK's capture q (compared frame by frame, in order), and DPDK
 * replays capture q into dpkit's queue q, whose frames carry sequence numbers
 * only that capture has. So each queue is checked on its own: its count is
 * not zero, nothing crossed to the other queue, every byte is intact.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { memfdMemoryProvider } from '../../src/native/memory.js';
import { setVhostLog } from '../../src/vhost/log.js';
import { assertFull } from '../helpers.js';
import { readCapture, writeCapture } from '../pcap/captures.js';
import { InteractiveTestpmd, killTestpmds, leakedFds, openFds, seqFrame, seqOf, skipDpdk, waitFor } from './dpdk.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-vhost-mq-'));
after(async () => {
  await killTestpmds();
  rmSync(dir, { recursive: true, force: true });
});
const QUEUES = 2;
const SIZES = [60, 64, 128, 511, 1024, 1514];
/** Frames per capture DPDK replays (queue q replays sequence numbers q*REPLAYED ..), and frames dpkit sends per queue. */
const REPLAYED = 64;
const SENT = 1500;
/** Sequence numbers of what dpkit sends on queue q start here (beyond every replayed one). */
const sentBase = (q: number): number => (q + 1) * 100_000;
const size = (seq: number): number => SIZES[seq % SIZES.length]!;
const HEAP = (64 << 20) + (1280 << 20);
setVhostLog(() => {});

// DPDK's virtio_user drains (flushes) its rx rings when its port starts (virtio_dev_start), and
// dpkit's net_vhost has link as soon as the guest has set up its first queue pair, which is
// before that start. Frames dpkit enqueued in between were eaten without a count, and the test
// waited forever for them. So dpkit sends only once testpmd's prompt says its ports started.
const PAIRINGS = [
  { what: 'dpkit net_vhost and DPDK virtio_user', dpkit: (s: string) => `net_vhost0,iface=${s},queues=${QUEUES}`, dpdk: (s: string) => `virtio_user0,path=${s},queues=${QUEUES}`, dpkitFirst: true },
  { what: 'dpkit virtio_user and DPDK net_vhost', dpkit: (s: string) => `virtio_user0,path=${s},queues=${QUEUES}`, dpdk: (s: string) => `net_vhost0,iface=${s},queues=${QUEUES}`, dpkitFirst: false },
];

describe('vhost-user queues=2 with real DPDK', { skip: skipDpdk }, () => {
  PAIRINGS.forEach((pair, k) => {
    it(`${pair.what}: both queue pairs carry traffic both ways, each queue's frames intact and on their own queue`, async () => {
      const sock = join(dir, `mq${k}.sock`);
      const inPcap = (q: number) => join(dir, `mq${k}-in${q}.pcap`);
      const outPcap = (q: number) => join(dir, `mq${k}-out${q}.pcap`);
      for (let q = 0; q < QUEUES; q++) {
        writeCapture(inPcap(q), Array.from({ length: REPLAYED }, (_, i) => ({ bytes: seqFrame(q * REPLAYED + i, size(q * REPLAYED + i)), sec: 1, nsec: i })));
      }
      const guest = pair.dpkit(sock).startsWith('virtio_user');
      const heap = guest ? Heap.create({ size: 96 << 20, provider: memfdMemoryProvider(96 << 20) }) : Heap.create({ size: HEAP });
      const pool = Mempool.create(heap, { name: 'pool', n: 8192, cacheSize: 64 });
      const ethdev = new Ethdev(heap, drivers);
      const mb = new Mbufs(heap);
      const fds0 = openFds();
      const port = ethdev.create(pair.dpkit(sock));
      const up = () => {
        ethdev.configure(port, QUEUES, QUEUES);
        for (let q = 0; q < QUEUES; q++) {
          ethdev.rxQueueSetup(port, q, 0, pool);
          ethdev.txQueueSetup(port, q, 0);
        }
        ethdev.start(port);
      };
      const pcapPort = `net_pcap0,${[0, 1].map((q) => `rx_pcap=${inPcap(q)}`).join(',')},infinite_rx=1,${[0, 1].map((q) => `tx_pcap=${outPcap(q)}`).join(',')}`;
      // Two forwarding lcores, one per CPU; the main lcore shares CPU 1.
      const start = () =>
        new InteractiveTestpmd(`dpkit-mq${k}-${process.pid}`, [pcapPort, pair.dpdk(sock)], ['--forward-mode=io', '--no-flush-rx', `--nb-cores=${QUEUES}`, `--rxq=${QUEUES}`, `--txq=${QUEUES}`], '0@1,1@0,2@1');
      let tp: InteractiveTestpmd;
      if (pair.dpkitFirst) {
        up();
        tp = start();
      } else {
        tp = start();
        await tp.ready();
        assert.ok(existsSync(sock), `DPDK's net_vhost listens at ${sock}`);
        up();
      }
      const rx = heap.burst(32);
      const tx = heap.burst(32);
      const sent = [0, 0];
      const received = [0, 0];
      /** Set once DPDK's ports have started: what dpkit sent before would be flushed by DPDK's virtio_user. */
      let peerStarted = false;
      const pump = () => {
        for (let round = 0; round < 32; round++) {
          for (let q = 0; q < QUEUES; q++) {
            const n = ethdev.rxBurst(port, q, rx, 32);
            for (let i = 0; i < n; i++) {
              const bytes = mb.read(rx[i]!);
              const seq = seqOf(bytes);
              assert.ok(seq >= q * REPLAYED && seq < (q + 1) * REPLAYED, `rx queue ${q}: frame ${received[q]! + i} names frame ${seq}, which capture ${q} does not replay`);
              assert.deepEqual(bytes, seqFrame(seq, size(seq)), `rx queue ${q}: frame ${seq} changed on the way`);
            }
            if (n > 0) mb.freeBulk(rx, n);
            received[q]! += n;
            if (peerStarted && sent[q]! < SENT && ethdev.linkUp(port)) {
              const want = Math.min(32, SENT - sent[q]!);
              for (let i = 0; i < want; i++) {
                const seq = sentBase(q) + sent[q]! + i;
                const m = pool.alloc();
                assert.ok(mb.write(m, seqFrame(seq, size(seq))));
                tx[i] = m;
              }
              const took = ethdev.txBurst(port, q, tx, want);
              if (took < want) mb.freeBulk(tx, want - took, took);
              sent[q]! += took;
            }
          }
        }
      };
      await tp.ready(pump);
      peerStarted = true;
      await waitFor('the dpkit port to get link', () => ethdev.linkUp(port), pump, tp);
      await tp.command('start', /testpmd> $/m, pump);
      await waitFor(
        `every queue to carry ${SENT} frames each way`,
        () => sent.every((s) => s === SENT) && received.every((r) => r >= SENT) && tp.lastRx(1) >= QUEUES * SENT,
        () => {
          pump();
          tp.pollStats(1);
        },
        tp,
      );
      const stats = await tp.stopForwarding(pump);
      const dpdkTx = stats.get(1)!.tx;
      await waitFor(`dpkit to receive all ${dpdkTx} frames DPDK sent`, () => received[0]! + received[1]! >= dpdkTx, pump, tp);
      pump();
      assert.equal(received[0]! + received[1]!, dpdkTx, "dpkit's rx count is DPDK's tx count on its vhost-user port");
      assert.equal(stats.get(1)!.rx, QUEUES * SENT, "DPDK's rx count on its vhost-user port is what dpkit sent on both queues");
      await tp.quit();
      for (let q = 0; q < QUEUES; q++) {
        const captured = readCapture(outPcap(q));
        assert.equal(captured.length, SENT, `DPDK's capture ${q} holds every frame dpkit sent on queue ${q}`);
        captured.forEach((c, i) => assert.deepEqual(c.bytes, seqFrame(sentBase(q) + i, size(sentBase(q) + i)), `frame ${i} of queue ${q} in DPDK's capture`));
      }
      await waitFor('the dpkit port to lose link when DPDK exits', () => !ethdev.linkUp(port));
      ethdev.stop(port);
      ethdev.close(port);
      assertFull(pool);
      assert.deepEqual(leakedFds(fds0), [], 'every fd the port opened is closed');
    });
  });
});
