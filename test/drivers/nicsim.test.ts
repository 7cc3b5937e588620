import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { drivers } from '../../src/drivers/index.js';
import { NicsimHw } from '../../src/drivers/nicsim/hw.js';
import { ArgError } from '../../src/errors.js';
import { TxOffload } from '../../src/ethdev/driver.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { TX_FREE_MODES, type TxFreeMode } from '../../src/ethdev/tx-reclaim.js';
import { Heap, type Burst } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, burstOf } from '../helpers.js';

/** Upper bound on any wait for the model: a broken driver fails the test instead of hanging it. */
const DEADLINE_MS = 20_000;

interface Rig {
  heap: Heap;
  pool: Mempool;
  mb: Mbufs;
  ethdev: Ethdev;
  a: number;
  b: number;
  burst: Burst;
}

interface RigOptions {
  nbDesc?: number;
  rs?: number;
  free?: number;
  rxFree?: number;
  mode?: TxFreeMode;
  fastFree?: boolean;
  /** A single port cabled to itself instead of two ports. */
  loopback?: boolean;
  queues?: number;
  datapath?: 'wasm' | 'ts';
  poolSize?: number;
}

/** Two nicsim ports cabled together (or one looped back), one pool, started. */
function rig(o: RigOptions = {}): Rig {
  const heap = Heap.create({ size: 96 << 20, datapath: o.datapath ?? 'wasm' });
  const pool = Mempool.create(heap, { name: 'nicsim_test', n: o.poolSize ?? 8192, cacheSize: 128 });
  const ethdev = new Ethdev(heap, drivers);
  const mode = o.mode ?? 'bulk64';
  const a = ethdev.create(`net_nicsim0,tx_free_mode=${mode}${o.loopback ? '' : ',peer=net_nicsim1'}`);
  const b = o.loopback ? a : ethdev.create(`net_nicsim1,tx_free_mode=${mode}`);
  const queues = o.queues ?? 1;
  for (const p of o.loopback ? [a] : [a, b]) {
    ethdev.configure(p, queues, queues);
    for (let q = 0; q < queues; q++) {
      ethdev.rxQueueSetup(p, q, o.nbDesc ?? 512, pool, { rxFreeThresh: o.rxFree ?? 0 });
      ethdev.txQueueSetup(p, q, o.nbDesc ?? 512, { txRsThresh: o.rs ?? 0, txFreeThresh: o.free ?? 0, offloads: o.fastFree ? TxOffload.MBUF_FAST_FREE : 0 });
    }
    ethdev.start(p);
  }
  return { heap, pool, mb: new Mbufs(heap), ethdev, a, b, burst: heap.burst(64) };
}

function close(r: Rig, ...pools: Mempool[]): void {
  r.ethdev.close(r.a);
  if (r.b !== r.a) r.ethdev.close(r.b);
  assertFull(r.pool, ...pools);
}

/** Packet `seq`: its length and bytes, so a lost, duplicated, reordered or corrupted packet shows. */
function payload(seq: number): Uint8Array {
  const len = 60 + (seq % 197);
  const p = new Uint8Array(len);
  new DataView(p.buffer).setUint32(0, seq);
  for (let i = 4; i < len; i++) p[i] = (seq * 31 + i) & 0xff;
  return p;
}

/**
 * Sends `count` numbered packets from port a, queue q, made by `make`, and
 * receives them on port b, yielding to the event loop (the hardware thread
 * starts there) whenever nothing moves. At most `window` packets are in
 * flight, so the rx ring never overflows. Checks each arrival in order.
 * @returns the sequence numbers received, in order.
 */
async function pump(r: Rig, count: number, make: (seq: number, burst: Burst, at: number) => void, window = 128, q = 0): Promise<number[]> {
  const { ethdev, mb, burst } = r;
  const got: number[] = [];
  let sent = 0;
  const until = performance.now() + DEADLINE_MS;
  while (got.length < count) {
    if (performance.now() > until) assert.fail(`stuck: ${sent} sent, ${got.length} received, stats ${JSON.stringify(ethdev.xstats(r.b))}`);
    let moved = false;
    const k = Math.min(32, count - sent, window - (sent - got.length));
    if (k > 0) {
      for (let i = 0; i < k; i++) make(sent + i, burst, i);
      const s = ethdev.txBurst(r.a, q, burst, k);
      if (s < k) r.mb.freeBulk(burst, k - s, s);
      sent += s;
      moved ||= s > 0;
    }
    const n = ethdev.rxBurst(r.b, q, burst, 32);
    for (let i = 0; i < n; i++) {
      const h = burst[i]!;
      const bytes = mb.read(h);
      const seq = new DataView(bytes.buffer).getUint32(0);
      assert.deepEqual(bytes, payload(seq), `packet ${seq}: bytes`);
      assert.equal(mb.nbSegs(h), 1);
      assert.equal(mb.port(h), r.b);
      got.push(seq);
    }
    mb.freeBulk(burst, n);
    moved ||= n > 0;
    if (!moved) await tick();
  }
  return got;
}

/** A fresh single-segment packet of `pool` holding payload(seq). */
function single(r: Rig, pool = r.pool) {
  return (seq: number, burst: Burst, at: number) => {
    const h = pool.alloc();
    assert.notEqual(h, 0, 'pool empty');
    assert.ok(r.mb.write(h, payload(seq)));
    burst[at] = h;
  };
}

const seqs = (n: number) => Array.from({ length: n }, (_, i) => i);

/** DPDK's allowed threshold pairs of the issue, by ring size: 512/512 only fits a ring of 1024. */
const PAIRS: [number, number, number][] = [
  [512, 32, 32],
  [512, 64, 128],
  [512, 256, 256],
  [1024, 32, 32],
  [1024, 64, 128],
  [1024, 256, 256],
  [1024, 512, 512],
];

describe('net_nicsim', () => {
  for (const [nbDesc, rs, free] of PAIRS) {
    for (const mode of TX_FREE_MODES) {
      it(`nb_desc ${nbDesc}, tx_rs_thresh/tx_free_thresh ${rs}/${free}, ${mode}, fast free: every packet arrives once, in order, whole; reclaim goes in batches of tx_rs_thresh; pools full`, async () => {
        const r = rig({ nbDesc, rs, free, mode, fastFree: true });
        // Several laps of the tx ring, so reclaim wraps too.
        const count = 4 * nbDesc + 77;
        const got = await pump(r, count, single(r), 256);
        assert.deepEqual(got, seqs(count));
        const x = r.ethdev.xstats(r.a);
        const reclaims = x['tx_q0_reclaims']!;
        // Every descriptor not still held (at most nb_desc - 1) came back, rs at a time.
        assert.ok(reclaims * rs <= count && reclaims * rs >= count - (nbDesc - 1), `${reclaims} reclaims of ${rs} for ${count} packets`);
        assert.equal(r.ethdev.stats(r.b).imissed, 0);
        assert.equal(r.ethdev.stats(r.a).opackets, count);
        assert.equal(r.ethdev.stats(r.b).ipackets, count);
        close(r);
      });
    }
  }

  it('a burst as large as the ring: the driver keeps one descriptor free, so a full ring never reads as empty, and all it took arrives', async () => {
    const r = rig({ nbDesc: 512, rs: 32, free: 32 });
    const big = r.heap.burst(512);
    const make = single(r);
    for (let i = 0; i < 512; i++) make(i, big, i);
    // Posted at once, most likely before the hardware thread ran at all (it starts on the event loop):
    // 511 then, and a tail back at 0, where the head still is, would hide them all. More only if it ran and completed some.
    const took = r.ethdev.txBurst(r.a, 0, big, 512);
    r.mb.freeBulk(big, 512 - took, took);
    assert.ok(took >= 511, `took ${took}`);
    const got: number[] = [];
    const until = performance.now() + DEADLINE_MS;
    while (got.length < took) {
      if (performance.now() > until) assert.fail(`${got.length} of ${took} arrived`);
      const n = r.ethdev.rxBurst(r.b, 0, r.burst, 32);
      for (let i = 0; i < n; i++) got.push(new DataView(r.mb.read(r.burst[i]!).buffer).getUint32(0));
      r.mb.freeBulk(r.burst, n);
      if (n === 0) await tick();
    }
    assert.deepEqual(got, seqs(took));
    close(r);
  });

  it('rx refills in blocks of rx_free_thresh: with rx_free_thresh 128 every packet still arrives', async () => {
    const r = rig({ nbDesc: 1024, rxFree: 128, rs: 64, free: 128 });
    assert.deepEqual(await pump(r, 3000, single(r), 256), seqs(3000));
    close(r);
  });

  for (const mode of TX_FREE_MODES) {
    it(`${mode}, no fast free: packets from two pools, clones (refcnt 2) and chains go back only when their last reference does`, async () => {
      const r = rig({ nbDesc: 512, rs: 32, free: 64, mode });
      const other = Mempool.create(r.heap, { name: 'other', n: 2048, cacheSize: 64 });
      const clones = Mempool.create(r.heap, { name: 'clones', n: 1024 });
      const held: number[] = [];
      const make = (seq: number, burst: Burst, at: number) => {
        const p = payload(seq);
        const kind = seq % 4;
        if (kind === 0) {
          single(r, other)(seq, burst, at);
        } else if (kind === 1) {
          // A clone: the application keeps the original, so its refcnt is 2 while in flight.
          const orig = r.pool.alloc();
          assert.ok(r.mb.write(orig, p));
          const c = r.mb.clone(orig, clones);
          assert.notEqual(c, 0);
          held.push(orig);
          burst[at] = c;
        } else if (kind === 2) {
          // A chain of three segments from both pools: one descriptor each, gathered into one rx buffer.
          const segs = [r.pool.alloc(), other.alloc(), r.pool.alloc()];
          const cut = [0, 20, 41, p.length];
          segs.forEach((s, i) => assert.ok(r.mb.write(s, p.subarray(cut[i]!, cut[i + 1]!))));
          assert.equal(r.mb.chain(segs[0]!, segs[1]!), 0);
          assert.equal(r.mb.chain(segs[0]!, segs[2]!), 0);
          burst[at] = segs[0]!;
        } else {
          single(r)(seq, burst, at);
        }
      };
      const count = 2000;
      assert.deepEqual(await pump(r, count, make, 128), seqs(count));
      r.ethdev.close(r.a);
      r.ethdev.close(r.b);
      // The originals came through untouched, referenced once more by the application only.
      for (const h of held) assert.equal(r.mb.refcnt(h), 1);
      assert.equal(r.pool.inUse(), held.length);
      r.mb.freeBulk(burstOf(r.heap, held), held.length);
      assertFull(r.pool, other, clones);
    });
  }

  it('the TypeScript datapath (the twin of the hardware kernel) carries the same traffic', async () => {
    const r = rig({ datapath: 'ts', nbDesc: 512, rs: 64, free: 128, mode: 'bulkall', fastFree: true });
    assert.deepEqual(await pump(r, 1500, single(r), 256), seqs(1500));
    close(r);
  });

  it('one port cabled to itself, two queues: tx queue q lands in rx queue q', async () => {
    const r = rig({ loopback: true, queues: 2 });
    for (const q of [0, 1]) assert.deepEqual(await pump(r, 600, single(r), 128, q), seqs(600));
    assert.deepEqual(r.ethdev.stats(r.a).qIpackets, [600, 600]);
    close(r);
  });

  it('counts imissed when the rx ring is full, and frees everything the rings hold at stop', async () => {
    const r = rig({ nbDesc: 512 });
    const make = single(r);
    let sent = 0;
    // Nobody receives: the peer's ring fills (511 descriptors), the rest is dropped on the wire.
    const until = performance.now() + DEADLINE_MS;
    while (r.ethdev.stats(r.b).imissed < 100) {
      if (performance.now() > until) assert.fail(`no drop counted after ${sent} packets`);
      for (let i = 0; i < 32; i++) make(sent + i, r.burst, i);
      const s = r.ethdev.txBurst(r.a, 0, r.burst, 32);
      r.mb.freeBulk(r.burst, 32 - s, s);
      sent += s;
      await tick();
    }
    const hwTail = r.ethdev.stats(r.b);
    assert.ok(hwTail.imissed > 0 && hwTail.ipackets === 0);
    close(r);
  });

  it('a packet larger than the rx buffer is an rx error, and its mbufs still come back', async () => {
    const heap = Heap.create({ size: 64 << 20 });
    const small = Mempool.create(heap, { name: 'small', n: 2048, dataRoomSize: 128 + 256 });
    const big = Mempool.create(heap, { name: 'big', n: 2048 });
    const ethdev = new Ethdev(heap, drivers);
    const a = ethdev.create('net_nicsim0,peer=net_nicsim1');
    const b = ethdev.create('net_nicsim1');
    for (const p of [a, b]) {
      ethdev.configure(p, 1, 1);
      ethdev.rxQueueSetup(p, 0, 512, small);
      ethdev.txQueueSetup(p, 0, 512);
      ethdev.start(p);
    }
    const mb = new Mbufs(heap);
    const burst = heap.burst(2);
    burst[0] = big.alloc();
    burst[1] = big.alloc();
    assert.ok(mb.write(burst[0]!, new Uint8Array(1000)) && mb.write(burst[1]!, new Uint8Array(100)));
    assert.equal(ethdev.txBurst(a, 0, burst, 2), 2);
    const until = performance.now() + DEADLINE_MS;
    let got = 0;
    while (got === 0) {
      if (performance.now() > until) assert.fail('nothing received');
      got = ethdev.rxBurst(b, 0, burst, 2);
      await tick();
    }
    assert.equal(got, 1);
    assert.equal(mb.pktLen(burst[0]!), 100);
    assert.equal(ethdev.stats(b).ierrors, 1);
    mb.free(burst[0]!);
    ethdev.close(a);
    ethdev.close(b);
    assertFull(small, big);
  });

  it('with the other end stopped, sending still completes: link-down drops, no leak; after restart traffic flows again', async () => {
    const r = rig({ nbDesc: 512, rs: 32, free: 32 });
    r.ethdev.stop(r.b);
    const make = single(r);
    let sent = 0;
    const until = performance.now() + DEADLINE_MS;
    while ((r.ethdev.xstats(r.a)['tx_q0_link_down_drops'] ?? 0) < 1000) {
      if (performance.now() > until) assert.fail(`no link-down drop after ${sent}`);
      for (let i = 0; i < 32; i++) make(i, r.burst, i);
      const s = r.ethdev.txBurst(r.a, 0, r.burst, 32);
      r.mb.freeBulk(r.burst, 32 - s, s);
      sent += s;
      await tick();
    }
    assert.ok(r.ethdev.xstats(r.a)['tx_q0_reclaims']! > 0, 'dropped on the wire, still completed and reclaimed');
    // Everything posted is on the wire before the other end comes back, or it would arrive there.
    while (r.ethdev.xstats(r.a)['tx_q0_link_down_drops'] !== sent) {
      if (performance.now() > until) assert.fail(`${sent} sent, ${r.ethdev.xstats(r.a)['tx_q0_link_down_drops']} dropped`);
      await tick();
    }
    r.ethdev.start(r.b);
    assert.deepEqual(await pump(r, 700, single(r), 128), seqs(700));
    close(r);
  });

  it('the hardware thread stops when the last port stops, and starts again with the next', async () => {
    const r = rig({ nbDesc: 512 });
    const hw = NicsimHw.of(r.heap);
    assert.deepEqual(await pump(r, 100, single(r)), seqs(100));
    assert.equal(hw.threadState, 'running');
    r.ethdev.stop(r.a);
    assert.equal(hw.threadState, 'running', 'port b is still started');
    r.ethdev.stop(r.b);
    assert.match(hw.threadState, /^(exited|cancelled)$/);
    r.ethdev.start(r.a);
    r.ethdev.start(r.b);
    assert.deepEqual(await pump(r, 100, single(r)), seqs(100));
    close(r);
    assert.match(hw.threadState, /^(exited|cancelled)$/);
  });

  it('stopping before the hardware thread ever ran leaves nothing behind', () => {
    const r = rig();
    close(r);
    assert.match(NicsimHw.of(r.heap).threadState, /^(exited|cancelled)$/);
  });

  describe('thresholds', () => {
    const heap = Heap.create({ size: 64 << 20 });
    const pool = Mempool.create(heap, { name: 'p', n: 8192 });
    const ethdev = new Ethdev(heap, drivers);
    const p = ethdev.create('net_nicsim0');
    ethdev.configure(p, 1, 1);
    const tx = (nb: number, rs: number, free: number) => () => ethdev.txQueueSetup(p, 0, nb, { txRsThresh: rs, txFreeThresh: free });
    const rx = (nb: number, free: number) => () => ethdev.rxQueueSetup(p, 0, nb, pool, { rxFreeThresh: free });
    const arg = (re: RegExp) => (e: unknown) => e instanceof ArgError && re.test(e.message);

    it('accepts every pair of the study that fits its ring', () => {
      for (const [nb, rs, free] of PAIRS) tx(nb, rs, free)();
      for (const [nb, free] of [[512, 32], [1024, 128], [4096, 64], [128, 0]] as const) rx(nb, free)();
    });

    it('rejects illegal tx pairs, naming the port, the queue and the values', () => {
      assert.throws(tx(512, 512, 512), arg(/port 0 txq 0: tx_rs_thresh=512 must be less than nb_desc - 2 \(510\)/));
      assert.throws(tx(512, 64, 32), arg(/port 0 txq 0: tx_rs_thresh=64 must be less than or equal to tx_free_thresh=32/));
      assert.throws(tx(512, 48, 64), arg(/tx_rs_thresh=48 must be a divisor of nb_desc=512/));
      assert.throws(tx(512, 256, 384), arg(/tx_rs_thresh=256 \+ tx_free_thresh=384 must not exceed nb_desc=512/));
      assert.throws(tx(512, 32, 510), arg(/tx_free_thresh=510 must be less than nb_desc - 3 \(509\)/));
      assert.throws(tx(384, 96, 96), arg(/net_nicsim0 \(port 0\) txq 0: tx_rs_thresh=96 must be a power of 2/));
      assert.throws(tx(500, 32, 32), arg(/nb_tx_desc=500: net_nicsim allows 64..4096, a multiple of 32/));
    });

    it('rejects rx_free_thresh values the bulk refill cannot use', () => {
      assert.throws(rx(512, 16), arg(/net_nicsim0 \(port 0\) rxq 0: rx_free_thresh=16 must be at least 32/));
      assert.throws(rx(512, 96), arg(/rxq 0: rx_free_thresh=96 must be a divisor of nb_desc=512/));
      assert.throws(rx(512, 256), arg(/rxq 0: rx_free_thresh=256: nb_desc=512 must be more than 2 × rx_free_thresh/));
      // The default rx_free_thresh (32) does not fit the smallest ring, as on i40e.
      assert.throws(rx(64, 0), arg(/rx_free_thresh=32: nb_desc=64 must be more than 2 × rx_free_thresh/));
    });

    it('names a bad devarg', () => {
      assert.throws(() => ethdev.create('net_nicsim1,tx_free_mode=bulk'), arg(/net_nicsim1: tx_free_mode=bulk: expected one of single, bulk64, bulkall/));
      assert.throws(() => ethdev.create('net_nicsim2,hw_cpu=x'), arg(/net_nicsim2: hw_cpu=x: expected an integer/));
      const q = ethdev.create('net_nicsim3,peer=net_nicsim9');
      ethdev.configure(q, 1, 1);
      ethdev.rxQueueSetup(q, 0, 512, pool);
      ethdev.txQueueSetup(q, 0, 512);
      assert.throws(() => ethdev.start(q), arg(/net_nicsim3: peer=net_nicsim9: no net_nicsim port of that name/));
      assertFull(pool);
    });
  });
});
