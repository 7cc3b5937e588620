/**
 * dpkit's vhost-user against real DPDK (Debian's dpdk-testpmd, 22.11), in
 * every pairing: dpkit net_vhost with DPDK's virtio_user, dpkit virtio_user
 * with DPDK's net_vhost, each with the server and client roles both ways,
 * and packed virtqueues with either side as the frontend.
 *
 * One DPDK run carries both directions: testpmd forwards (io) between a pcap
 * port and its vhost-user port, so what dpkit sends lands in a capture file
 * (compared frame by frame), and frames replayed from a capture arrive at
 * dpkit (each compared with the frame its sequence number names). Counts are
 * compared exactly once testpmd's forwarding has stopped and dpkit has drained
 * what was still in the ring.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { PackedRxQueue, PackedTxQueue } from '../../src/drivers/virtio/virtio-packed.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { memfdMemoryProvider } from '../../src/native/memory.js';
import { setVhostLog } from '../../src/vhost/log.js';
import { assertFull } from '../helpers.js';
import { readCapture, writeCapture } from '../pcap/captures.js';
import { noShim } from '../native/util.js';
import { InteractiveTestpmd, killTestpmds, leakedFds, openFds, seqFrame, seqOf, skipDpdk, waitFor } from './dpdk.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-vhost-'));
after(async () => {
  await killTestpmds();
  rmSync(dir, { recursive: true, force: true });
});
const SIZE_DEFAULT = [60, 64, 128, 511, 1024, 1514];
/** Up to jumbo frames: more than one mbuf each, so mergeable rx buffers and chained tx (dpkit's packed frontend). */
const JUMBO = [64, 128, 511, 1024, 1518, 2048, 4000, 9000];
/** Frames DPDK replays to dpkit (from a capture, looped), and frames dpkit sends. */
const REPLAYED = 64;
const SENT = 3000;
/** dpkit's heap: its pools plus room to map DPDK's guest memory (-m 1024). */
const HEAP = (64 << 20) + (1280 << 20);
const lines: string[] = [];
setVhostLog((l) => lines.push(l));

interface Pairing {
  what: string;
  dpkit: (sock: string) => string;
  dpdk: (sock: string) => string;
  /** dpkit's port is up (listening, or retrying its connect) before DPDK starts. */
  dpkitFirst: boolean;
  /** The pair negotiates packed virtqueues (dpkit's backend logs which layout it runs; dpkit's frontend runs PackedRxQueue). */
  packed?: boolean;
  /** Frame sizes both ways (SIZE_DEFAULT unless given). */
  sizes?: number[];
  /** The peer is dpkit's own testpmd in another process (the same command line as DPDK's), not DPDK. */
  dpkitPeer?: boolean;
}

/**
 * testpmd's pool for jumbo pairings: DPDK's pcap refuses multi-segment mbufs
 * with infinite_rx, so each frame must fit one mbuf (and -m 1024 must hold the pool).
 */
const JUMBO_MBUFS = ['--mbuf-size=9216', '--total-num-mbufs=16384'];

const PAIRINGS: Pairing[] = [
  { what: 'dpkit net_vhost (server) and DPDK virtio_user', dpkit: (s) => `net_vhost0,iface=${s}`, dpdk: (s) => `virtio_user0,path=${s}`, dpkitFirst: true, packed: false },
  { what: 'dpkit net_vhost (client=1) and DPDK virtio_user (server=1)', dpkit: (s) => `net_vhost0,iface=${s},client=1`, dpdk: (s) => `virtio_user0,path=${s},server=1`, dpkitFirst: true },
  { what: 'dpkit net_vhost and DPDK virtio_user (packed_vq=1)', dpkit: (s) => `net_vhost0,iface=${s}`, dpdk: (s) => `virtio_user0,path=${s},packed_vq=1`, dpkitFirst: true, packed: true },
  { what: 'dpkit net_vhost and DPDK virtio_user (packed_vq=1, mrg_rxbuf=0)', dpkit: (s) => `net_vhost0,iface=${s}`, dpdk: (s) => `virtio_user0,path=${s},packed_vq=1,mrg_rxbuf=0`, dpkitFirst: true, packed: true },
  { what: 'dpkit virtio_user and DPDK net_vhost (server)', dpkit: (s) => `virtio_user0,path=${s}`, dpdk: (s) => `net_vhost0,iface=${s}`, dpkitFirst: false },
  { what: 'dpkit virtio_user (server=1) and DPDK net_vhost (client=1)', dpkit: (s) => `virtio_user0,path=${s},server=1`, dpdk: (s) => `net_vhost0,iface=${s},client=1`, dpkitFirst: true },
  { what: 'dpkit virtio_user (packed_vq=1) and DPDK net_vhost, 64..9000 B', dpkit: (s) => `virtio_user0,path=${s},packed_vq=1`, dpdk: (s) => `net_vhost0,iface=${s}`, dpkitFirst: false, packed: true, sizes: JUMBO },
  {
    what: 'dpkit virtio_user (packed_vq=1) and dpkit net_vhost in another process (dpkit testpmd), 64..9000 B',
    dpkit: (s) => `virtio_user0,path=${s},packed_vq=1`,
    dpdk: (s) => `net_vhost0,iface=${s}`,
    dpkitFirst: false,
    packed: true,
    sizes: JUMBO,
    dpkitPeer: true,
  },
  { what: 'dpkit virtio_user (packed_vq=1, in_order=0, server=1) and DPDK net_vhost (client=1), 64..9000 B', dpkit: (s) => `virtio_user0,path=${s},packed_vq=1,in_order=0,server=1`, dpdk: (s) => `net_vhost0,iface=${s},client=1`, dpkitFirst: true, packed: true, sizes: JUMBO },
];

describe('vhost-user with real DPDK (and dpkit across processes)', () => {
  PAIRINGS.forEach((pair, k) => {
    it(`${pair.what}: both directions, counts equal on both sides, every byte intact`, { skip: pair.dpkitPeer ? noShim : skipDpdk }, async () => {
      const sock = join(dir, `vh${k}.sock`);
      const inPcap = join(dir, `in${k}.pcap`);
      const outPcap = join(dir, `out${k}.pcap`);
      const SIZES = pair.sizes ?? SIZE_DEFAULT;
      writeCapture(
        inPcap,
        Array.from({ length: REPLAYED }, (_, i) => ({ bytes: seqFrame(i, SIZES[i % SIZES.length]!), sec: 1, nsec: i })),
      );
      const guest = pair.dpkit(sock).startsWith('virtio_user');
      // A guest's heap is shared with the backend: made memfd-backed here (virtio_user would back it itself).
      const heap = guest ? Heap.create({ size: 96 << 20, provider: memfdMemoryProvider(96 << 20) }) : Heap.create({ size: HEAP });
      const pool = Mempool.create(heap, { name: 'pool', n: 8192, cacheSize: 64 });
      const ethdev = new Ethdev(heap, drivers);
      const mb = new Mbufs(heap);
      const fds0 = openFds();
      const port = ethdev.create(pair.dpkit(sock));
      const up = () => {
        ethdev.configure(port, 1, 1);
        ethdev.rxQueueSetup(port, 0, 0, pool);
        ethdev.txQueueSetup(port, 0, 0);
        ethdev.start(port);
      };
      const dpdkVdevs = [`net_pcap0,rx_pcap=${inPcap},infinite_rx=1,tx_pcap=${outPcap}`, pair.dpdk(sock)];
      const fwdArgs = ['--forward-mode=io', '--no-flush-rx', ...(pair.sizes ? JUMBO_MBUFS : [])];
      const peer = pair.dpkitPeer ? [process.execPath, 'bin/dpkit.js', 'testpmd'] : undefined;
      let tp: InteractiveTestpmd;
      if (pair.dpkitFirst) {
        up();
        tp = new InteractiveTestpmd(`dpkit-vh${k}-${process.pid}`, dpdkVdevs, fwdArgs, undefined, peer);
      } else {
        tp = new InteractiveTestpmd(`dpkit-vh${k}-${process.pid}`, dpdkVdevs, fwdArgs, undefined, peer);
        await tp.ready();
        assert.ok(existsSync(sock), `DPDK's net_vhost listens at ${sock}`);
        up();
      }
      const rx = heap.burst(32);
      const tx = heap.burst(32);
      /** A frame in one mbuf, or chained in 2048-byte segments when it is bigger. */
      const packet = (bytes: Uint8Array): number => {
        let head = 0;
        for (let off = 0; off < bytes.length; off += 2048) {
          const m = pool.alloc();
          assert.ok(m !== 0 && mb.write(m, bytes.subarray(off, off + 2048)));
          if (head === 0) head = m;
          else assert.equal(mb.chain(head, m), 0);
        }
        return head;
      };
      let sent = 0;
      let received = 0;
      /** Set once DPDK's ports have started: DPDK's virtio_user flushes its rx rings when its port starts. */
      let peerStarted = false;
      const pump = () => {
        for (let round = 0; round < 64; round++) {
          const n = ethdev.rxBurst(port, 0, rx, 32);
          for (let i = 0; i < n; i++) {
            const bytes = mb.read(rx[i]!);
            const seq = seqOf(bytes);
            assert.ok(seq < REPLAYED, `received frame ${received + i} names frame ${seq}, not one DPDK replays`);
            assert.deepEqual(bytes, seqFrame(seq, SIZES[seq % SIZES.length]!), `received frame ${received + i} (frame ${seq}) changed on the way`);
          }
          if (n > 0) mb.freeBulk(rx, n);
          received += n;
          if (peerStarted && sent < SENT && ethdev.linkUp(port)) {
            const want = Math.min(32, SENT - sent);
            for (let i = 0; i < want; i++) tx[i] = packet(seqFrame(sent + i, SIZES[(sent + i) % SIZES.length]!));
            const took = ethdev.txBurst(port, 0, tx, want);
            if (took < want) mb.freeBulk(tx, want - took, took);
            sent += took;
          }
        }
      };
      await tp.ready(pump);
      peerStarted = true;
      await waitFor('the dpkit port to get link', () => ethdev.linkUp(port), pump, tp);
      if (pair.packed !== undefined && !guest) assert.ok(lines.some((l) => l.includes(`link up (${pair.packed ? 'packed' : 'split'} rings)`)), `dpkit's backend runs ${pair.packed ? 'packed' : 'split'} rings:\n${lines.join('\n')}`);
      if (pair.packed !== undefined && guest) assert.equal(ethdev.rxQueue(port, 0) instanceof PackedRxQueue && ethdev.txQueue(port, 0) instanceof PackedTxQueue, pair.packed, `dpkit's virtio_user runs ${pair.packed ? 'packed' : 'split'} rings`);
      await tp.command('start', /Press enter to stop|testpmd> $/m, pump);
      // Forward until dpkit's frames are all in DPDK and DPDK's have reached dpkit.
      await waitFor(
        `DPDK to receive dpkit's ${SENT} frames and dpkit to receive ${SENT} of DPDK's`,
        () => sent === SENT && received >= SENT && tp.lastRx(1) >= SENT,
        () => {
          pump();
          tp.pollStats(1);
        },
        tp,
      );
      const stats = await tp.stopForwarding(pump);
      // What DPDK put in the ring before it stopped reaches dpkit: then the counts must agree exactly.
      await waitFor(`dpkit to receive all ${stats.get(1)!.tx} frames DPDK sent`, () => received >= stats.get(1)!.tx, pump, tp);
      pump();
      assert.equal(received, stats.get(1)!.tx, "dpkit's rx count is DPDK's tx count on its vhost-user port");
      assert.equal(stats.get(1)!.rx, SENT, "DPDK's rx count on its vhost-user port is what dpkit sent");
      assert.equal(stats.get(0)!.tx, SENT, 'DPDK forwarded every frame into the capture');
      await tp.quit();
      const captured = readCapture(outPcap);
      assert.equal(captured.length, SENT, 'the capture holds every frame dpkit sent');
      captured.forEach((c, i) => assert.deepEqual(c.bytes, seqFrame(i, SIZES[i % SIZES.length]!), `frame ${i} in DPDK's capture`));
      await waitFor('the dpkit port to lose link when DPDK exits', () => !ethdev.linkUp(port));
      ethdev.stop(port);
      ethdev.close(port);
      assertFull(pool);
      assert.deepEqual(leakedFds(fds0), [], 'every fd the port opened is closed');
    });
  });
});
