import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nicsimXmitTs } from '../../src/drivers/nicsim/hw.js';
import {
  DESC_SIZE,
  QBLOCK_SIZE,
  RX_STATUS_DD,
  RX_STATUS_EOP,
  RXD_ADDR,
  RXD_BUF_LEN,
  RXD_LEN,
  RXD_STATUS,
  RXQ_HEAD,
  RXQ_NB_DESC,
  RXQ_RING,
  RXQ_STATS,
  RXQ_TAIL,
  TX_CMD_EOP,
  TX_CMD_RS,
  TX_STATUS_DD,
  TXD_ADDR,
  TXD_LEN_CMD,
  TXD_STATUS,
  TXQ_HEAD,
  TXQ_LINK_DROPS_W,
  TXQ_NB_DESC,
  TXQ_RING,
  TXQ_TAIL,
} from '../../src/drivers/nicsim/layout.js';
import { RXQ_ERRORS, RXQ_MISSED, newQueueStats } from '../../src/ethdev/stats.js';
import { Heap } from '../../src/eal/heap.js';

/** A tx ring with posted packets and an rx ring with some free descriptors, written the same way into either heap. */
function build(datapath: 'wasm' | 'ts', seed: number) {
  const heap = Heap.create({ size: 4 << 20, datapath });
  const u32 = heap.u32;
  let rng = seed;
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  const nb = 64;
  const txq = heap.reserve(QBLOCK_SIZE, 64);
  const rxq = heap.reserve(QBLOCK_SIZE, 64);
  const txRing = heap.reserve(nb * DESC_SIZE, 128);
  const rxRing = heap.reserve(nb * DESC_SIZE, 128);
  const bufs = heap.reserve(nb * 2 * 2048, 64);
  const stats = newQueueStats(heap);
  // Source bytes: a pattern, so a copy from the wrong place shows.
  for (let i = bufs; i < bufs + nb * 2048; i++) heap.u8[i] = (i * 7 + seed) & 0xff;
  const t = txq >>> 2;
  const r = rxq >>> 2;
  u32[t + TXQ_RING] = txRing;
  u32[t + TXQ_NB_DESC] = nb;
  u32[r + RXQ_RING] = rxRing;
  u32[r + RXQ_NB_DESC] = nb;
  u32[r + RXQ_STATS] = stats;
  // Both rings start somewhere in the middle, so they wrap.
  const txHead = rand(nb);
  const rxHead = rand(nb);
  u32[t + TXQ_HEAD] = txHead;
  u32[r + RXQ_HEAD] = rxHead;
  // Posted packets of 1..3 segments, RS here and there, up to a whole packet before the tail.
  let at = txHead;
  for (let posted = 0; posted < nb - 4; ) {
    const segs = 1 + rand(3);
    if (posted + segs > nb - 4) break;
    for (let s = 0; s < segs; s++) {
      const d = (txRing >>> 2) + at * 4;
      u32[d + TXD_ADDR] = bufs + at * 2048 + rand(64);
      const cmd = (s === segs - 1 ? TX_CMD_EOP : 0) | (rand(4) === 0 ? TX_CMD_RS : 0);
      u32[d + TXD_LEN_CMD] = (1 + rand(900)) | (cmd << 16);
      u32[d + TXD_STATUS] = 0;
      at = (at + 1) % nb;
      posted++;
    }
  }
  u32[t + TXQ_TAIL] = at;
  // Rx descriptors for some of the packets only (imissed), and some too small (errors).
  const free = rand(nb / 2);
  for (let k = 0; k < nb; k++) {
    const d = (rxRing >>> 2) + k * 4;
    u32[d + RXD_ADDR] = bufs + nb * 2048 + k * 2048;
    u32[d + RXD_BUF_LEN] = rand(5) === 0 ? 200 : 2048;
  }
  u32[r + RXQ_TAIL] = (rxHead + free) % nb;
  return { heap, txq, rxq, stats, rand };
}

describe('nicsim kernel', () => {
  it('was compiled for the layout the TypeScript side uses', () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.ok(heap.kernels);
    const g = heap.kernels.nicsim as unknown as Record<string, { value: number }>;
    const layout = Object.fromEntries(Object.entries(g).filter(([k]) => k.startsWith('nicsimLayout')).map(([k, v]) => [k, v.value]));
    assert.deepEqual(layout, {
      nicsimLayoutTxdLenCmd: TXD_LEN_CMD * 4,
      nicsimLayoutTxdStatus: TXD_STATUS * 4,
      nicsimLayoutRxdBufLen: RXD_BUF_LEN * 4,
      nicsimLayoutRxdLen: RXD_LEN * 4,
      nicsimLayoutRxdStatus: RXD_STATUS * 4,
      nicsimLayoutTxqHead: TXQ_HEAD * 4,
      nicsimLayoutTxqRing: TXQ_RING * 4,
      nicsimLayoutTxqNbDesc: TXQ_NB_DESC * 4,
      nicsimLayoutTxqLinkDrops: TXQ_LINK_DROPS_W * 4,
      nicsimLayoutRxqHead: RXQ_HEAD * 4,
      nicsimLayoutRxqRing: RXQ_RING * 4,
      nicsimLayoutRxqNbDesc: RXQ_NB_DESC * 4,
      nicsimLayoutRxqStats: RXQ_STATS * 4,
    });
  });

  it('nicsimXmit leaves the heap exactly as its TypeScript twin does: copies, write-backs, heads and counters', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const sides = [build('wasm', seed), build('ts', seed)];
      const [w, t] = sides as [ReturnType<typeof build>, ReturnType<typeof build>];
      assert.ok(w.heap.kernels && !t.heap.kernels);
      // Every few seeds the cable's other end is down (rx queue 0); budgets cut packets short or not.
      const down = seed % 7 === 0;
      for (let call = 0; call < 4; call++) {
        const budget = 1 + w.rand(40);
        t.rand(40);
        const a: number = w.heap.kernels.nicsim.nicsimXmit(w.txq, down ? 0 : w.rxq, budget);
        const b: number = nicsimXmitTs(t.heap, t.txq, down ? 0 : t.rxq, budget);
        assert.equal(a, b, `seed ${seed} call ${call}: descriptors consumed`);
      }
      assert.ok(Buffer.from(w.heap.u8.buffer).equals(Buffer.from(t.heap.u8.buffer)), `seed ${seed}: heaps differ`);
    }
  });

  it('writes DD back only on RS descriptors, and DD|EOP with the length on each filled rx descriptor', () => {
    const s = build('wasm', 4);
    const u32 = s.heap.u32;
    const t = s.txq >>> 2;
    const r = s.rxq >>> 2;
    const head0 = u32[t + TXQ_HEAD]!;
    const rxHead0 = u32[r + RXQ_HEAD]!;
    const tail = u32[t + TXQ_TAIL]!;
    const ring = u32[t + TXQ_RING]! >>> 2;
    const done = s.heap.kernels!.nicsim.nicsimXmit(s.txq, s.rxq, 1000);
    assert.equal(u32[t + TXQ_HEAD], tail, 'everything posted was consumed');
    let packets = 0;
    for (let k = 0; k < done; k++) {
      const d = ring + ((head0 + k) % 64) * 4;
      const cmd = u32[d + TXD_LEN_CMD]! >>> 16;
      assert.equal(u32[d + TXD_STATUS], cmd & TX_CMD_RS ? TX_STATUS_DD : 0, `tx descriptor ${k}`);
      if (cmd & TX_CMD_EOP) packets++;
    }
    const rxRing = u32[r + RXQ_RING]! >>> 2;
    const filled = (u32[r + RXQ_HEAD]! - rxHead0 + 64) % 64;
    for (let k = 0; k < filled; k++) assert.equal(u32[rxRing + ((rxHead0 + k) % 64) * 4 + RXD_STATUS], RX_STATUS_DD | RX_STATUS_EOP);
    const f64 = s.heap.f64;
    assert.equal(filled + f64[s.stats + RXQ_MISSED]! + f64[s.stats + RXQ_ERRORS]!, packets, 'every packet is delivered, missed or an error');
    assert.ok(f64[s.stats + RXQ_MISSED]! > 0 && f64[s.stats + RXQ_ERRORS]! > 0 && filled > 0, 'this seed has all three outcomes');
  });
});
