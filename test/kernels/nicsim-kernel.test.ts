import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  NICRXQ_W_HEAD,
  NICRXQ_W_NB_DESC,
  NICRXQ_W_RING,
  NICRXQ_W_STATS,
  NICRXQ_W_TAIL,
  NICSIM_LAYOUT_ID,
  NICSIM_RX_DESC_SIZE,
  NICSIM_RX_QUEUE_SIZE,
  NICSIM_TX_DESC_SIZE,
  NICSIM_TX_QUEUE_SIZE,
  NICTXQ_W_HEAD,
  NICTXQ_W_NB_DESC,
  NICTXQ_W_PEER_RXQ,
  NICTXQ_W_RING,
  NICTXQ_W_TAIL,
  RX_STATUS_DD,
  RX_STATUS_EOP,
  RXD_W_ADDR,
  RXD_W_BUF_LEN,
  RXD_W_STATUS,
  TX_CMD_EOP,
  TX_CMD_RS,
  TX_STATUS_DD,
  TXD_W_ADDR,
  TXD_W_LEN_CMD,
  TXD_W_STATUS,
} from '../../src/drivers/nicsim/nicsim-layout.js';
import { nicsimOps } from '../../src/drivers/nicsim/nicsim.twin.js';
import { RXQ_ERRORS, RXQ_MISSED, newQueueStats } from '../../src/ethdev/stats.js';
import { Heap } from '../../src/eal/heap.js';

/** A tx ring with posted packets and an rx ring with some free descriptors, written the same way into either heap. */
function build(datapath: 'wasm' | 'ts', seed: number) {
  const heap = Heap.create({ size: 4 << 20, datapath });
  const u32 = heap.u32;
  let rng = seed;
  const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
  const nb = 64;
  const txq = heap.reserve(NICSIM_TX_QUEUE_SIZE, 64);
  const rxq = heap.reserve(NICSIM_RX_QUEUE_SIZE, 64);
  const txRing = heap.reserve(nb * NICSIM_TX_DESC_SIZE, 128);
  const rxRing = heap.reserve(nb * NICSIM_RX_DESC_SIZE, 128);
  const bufs = heap.reserve(nb * 2 * 2048, 64);
  const stats = newQueueStats(heap);
  // Source bytes: a pattern, so a copy from the wrong place shows.
  for (let i = bufs; i < bufs + nb * 2048; i++) heap.u8[i] = (i * 7 + seed) & 0xff;
  const t = txq >>> 2;
  const r = rxq >>> 2;
  u32[t + NICTXQ_W_RING] = txRing;
  u32[t + NICTXQ_W_NB_DESC] = nb;
  u32[r + NICRXQ_W_RING] = rxRing;
  u32[r + NICRXQ_W_NB_DESC] = nb;
  u32[r + NICRXQ_W_STATS] = stats * 8;
  // Both rings start somewhere in the middle, so they wrap.
  const txHead = rand(nb);
  const rxHead = rand(nb);
  u32[t + NICTXQ_W_HEAD] = txHead;
  u32[r + NICRXQ_W_HEAD] = rxHead;
  // Posted packets of 1..3 segments, RS here and there, up to a whole packet before the tail.
  let at = txHead;
  for (let posted = 0; posted < nb - 4; ) {
    const segs = 1 + rand(3);
    if (posted + segs > nb - 4) break;
    for (let s = 0; s < segs; s++) {
      const d = (txRing >>> 2) + at * 4;
      u32[d + TXD_W_ADDR] = bufs + at * 2048 + rand(64);
      const cmd = (s === segs - 1 ? TX_CMD_EOP : 0) | (rand(4) === 0 ? TX_CMD_RS : 0);
      u32[d + TXD_W_LEN_CMD] = (1 + rand(900)) | (cmd << 16);
      u32[d + TXD_W_STATUS] = 0;
      at = (at + 1) % nb;
      posted++;
    }
  }
  u32[t + NICTXQ_W_TAIL] = at;
  // Rx descriptors for some of the packets only (imissed), and some too small (errors).
  const free = rand(nb / 2);
  for (let k = 0; k < nb; k++) {
    const d = (rxRing >>> 2) + k * 4;
    u32[d + RXD_W_ADDR] = bufs + nb * 2048 + k * 2048;
    u32[d + RXD_W_BUF_LEN] = rand(5) === 0 ? 200 : 2048;
  }
  u32[r + NICRXQ_W_TAIL] = (rxHead + free) % nb;
  // The hardware thread writes the peer when it reads its port table; here, the test does.
  const cable = (up: boolean) => (u32[t + NICTXQ_W_PEER_RXQ] = up ? rxq : 0);
  cable(true);
  return { heap, txq, rxq, stats, rand, cable, ops: nicsimOps(heap) };
}

describe('nicsim kernel', () => {
  it('was compiled for the layout the TypeScript side uses', () => {
    const heap = Heap.create({ size: 1 << 20 });
    assert.ok(heap.kernels);
    assert.equal(heap.kernels.layout.layoutNicsim, NICSIM_LAYOUT_ID);
  });

  it('nicsimXmit leaves the heap exactly as its TypeScript twin does: copies, write-backs, heads and counters', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const sides = [build('wasm', seed), build('ts', seed)];
      const [w, t] = sides as [ReturnType<typeof build>, ReturnType<typeof build>];
      assert.ok(w.heap.kernels && !t.heap.kernels);
      // Every few seeds the cable's other end is down (rx queue 0); budgets cut packets short or not.
      const down = seed % 7 === 0;
      for (const s of sides) s.cable(!down);
      for (let call = 0; call < 4; call++) {
        const budget = 1 + w.rand(40);
        t.rand(40);
        const a = w.ops.xmit(w.txq, budget);
        const b = t.ops.xmit(t.txq, budget);
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
    const head0 = u32[t + NICTXQ_W_HEAD]!;
    const rxHead0 = u32[r + NICRXQ_W_HEAD]!;
    const tail = u32[t + NICTXQ_W_TAIL]!;
    const ring = u32[t + NICTXQ_W_RING]! >>> 2;
    const done = s.ops.xmit(s.txq, 1000);
    assert.equal(u32[t + NICTXQ_W_HEAD], tail, 'everything posted was consumed');
    let packets = 0;
    for (let k = 0; k < done; k++) {
      const d = ring + ((head0 + k) % 64) * 4;
      const cmd = u32[d + TXD_W_LEN_CMD]! >>> 16;
      assert.equal(u32[d + TXD_W_STATUS], cmd & TX_CMD_RS ? TX_STATUS_DD : 0, `tx descriptor ${k}`);
      if (cmd & TX_CMD_EOP) packets++;
    }
    const rxRing = u32[r + NICRXQ_W_RING]! >>> 2;
    const filled = (u32[r + NICRXQ_W_HEAD]! - rxHead0 + 64) % 64;
    for (let k = 0; k < filled; k++) assert.equal(u32[rxRing + ((rxHead0 + k) % 64) * 4 + RXD_W_STATUS], RX_STATUS_DD | RX_STATUS_EOP);
    const f64 = s.heap.f64;
    assert.equal(filled + f64[s.stats + RXQ_MISSED]! + f64[s.stats + RXQ_ERRORS]!, packets, 'every packet is delivered, missed or an error');
    assert.ok(f64[s.stats + RXQ_MISSED]! > 0 && f64[s.stats + RXQ_ERRORS]! > 0 && filled > 0, 'this seed has all three outcomes');
  });
});
