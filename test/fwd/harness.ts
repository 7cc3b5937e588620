// The one rig every engine test runs on: two looped-back net_ring ports, a stream that receives
// on port 0 and sends on port 1, packets put in by sending on port 0 and taken out of port 1.
import assert from 'node:assert/strict';
import { FS_FWD_DROPPED, FS_RX_PACKETS, FS_TX_PACKETS, defaultFwdConfig, type EngineFactory, type FwdEngine, type FwdContext, type FwdStream } from '../../src/fwd/engine.js';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';

/** The peer MAC the stream's engines address (testpmd's --eth-peer). */
export const PEER = [2, 0, 0, 0, 0, 1];

/** What left port 1: the bytes and the tx metadata an engine set, copied out before the mbuf was freed. */
export interface Sent {
  h: number;
  bytes: Uint8Array;
  pktLen: number;
  nbSegs: number;
  l2: number;
  l3: number;
  l4: number;
  ol: number;
  olHi: number;
  vlan: number;
  vlanOuter: number;
}

/** A rig with a pool of `poolSize` mbufs (default 512) named fwd_pool. */
export function rig(opts: { poolSize?: number } = {}) {
  const heap = Heap.create({ size: 64 << 20 });
  const pool = Mempool.create(heap, { name: 'fwd_pool', n: opts.poolSize ?? 512, cacheSize: 32 });
  const ethdev = new Ethdev(heap, drivers);
  const ports = [ethdev.create('net_ring0'), ethdev.create('net_ring1')];
  for (const p of ports) portUp(ethdev, pool, p);
  const fs: FwdStream = {
    rxPort: 0,
    rxQueue: 0,
    txPort: 1,
    txQueue: 0,
    rxq: ethdev.rxQueue(0, 0),
    txq: ethdev.txQueue(1, 0),
    stats: heap.reserve(64) >>> 3,
    txMac: ethdev.macAddr(1),
    peerMac: Uint8Array.from(PEER),
  };
  const mb = new Mbufs(heap);
  const ctx: FwdContext = { heap, mb, pool, burst: heap.burst(512), config: defaultFwdConfig() };
  const out = heap.burst(64);

  /** Puts packets into port 0's rx ring (by sending on port 0, which loops back). @returns their handles. */
  const inject = (...pkts: Uint8Array[]): number[] => {
    const b = heap.burst(pkts.length);
    pkts.forEach((p, i) => {
      const h = pool.alloc();
      assert.notEqual(h, 0);
      assert.ok(mb.write(h, p));
      b[i] = h;
    });
    assert.equal(ethdev.txBurst(0, 0, b, pkts.length), pkts.length);
    return [...b];
  };
  /** Takes what the engine sent on port 1 (up to `max`), copies bytes and metadata out and frees the mbufs. */
  const collect = (max = 64): Sent[] => {
    const got: Sent[] = [];
    for (let n; got.length < max && (n = ethdev.rxBurst(1, 0, out, Math.min(64, max - got.length))) > 0; ) {
      for (let i = 0; i < n; i++) {
        const h = out[i]!;
        got.push({ h, bytes: mb.read(h), pktLen: mb.pktLen(h), nbSegs: mb.nbSegs(h), l2: mb.l2Len(h), l3: mb.l3Len(h), l4: mb.l4Len(h), ol: mb.olFlags(h), olHi: mb.olFlagsHi(h), vlan: mb.vlanTci(h), vlanOuter: mb.vlanTciOuter(h) });
      }
      mb.freeBulk(out, n);
    }
    return got;
  };
  const counter = (slot: number) => heap.f64[fs.stats + slot]!;
  /** The stream's [rx packets, tx packets, dropped] counters. */
  const counters = () => [counter(FS_RX_PACKETS), counter(FS_TX_PACKETS), counter(FS_FWD_DROPPED)];
  /** Builds the engine over this rig's context (after any config change) and runs one burst. */
  const run = (factory: EngineFactory): FwdEngine => {
    const engine = factory(ctx);
    engine.fwd(fs);
    return engine;
  };
  /** Closes both ports (draining their rings) and ends with assertFull: every mbuf came home. */
  const done = () => {
    for (const p of ports) ethdev.close(p);
    assertFull(pool);
  };
  return { heap, pool, ethdev, fs, ctx, mb, inject, collect, counter, counters, run, done };
}

/**
 * One net_ring port looped on itself on a heap of `datapath`, and a stream
 * that receives and sends on it: for an engine's kernel and its twin run on
 * the same traffic, heap against heap.
 */
export function loopPort(datapath: 'wasm' | 'ts') {
  const heap = Heap.create({ size: 16 << 20, datapath });
  const pool = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 32 });
  const ethdev = new Ethdev(heap, drivers);
  portUp(ethdev, pool, ethdev.create('net_ring0'));
  const mb = new Mbufs(heap);
  const fs: FwdStream = {
    rxPort: 0,
    rxQueue: 0,
    txPort: 0,
    txQueue: 0,
    rxq: ethdev.rxQueue(0, 0),
    txq: ethdev.txQueue(0, 0),
    stats: heap.reserve(64) >>> 3,
    txMac: Uint8Array.of(2, 0, 0, 0, 0x10, 0),
    peerMac: Uint8Array.of(2, 0, 0, 0, 0x20, 0),
  };
  return { heap, pool, ethdev, mb, fs };
}
