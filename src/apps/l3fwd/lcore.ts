/**
 * One l3fwd lcore (DPDK's lpm_main_loop / em_main_loop): poll each of its
 * rx queues, run the forward kernel over the burst (l3fwd.as.ts: checks,
 * lookup, rewrite, into per-port tx buffers), free what it dropped, and
 * after each burst send every tx buffer that holds packets, freeing what a
 * tx queue refuses, as DPDK's send_burst does.
 */
import type { LcoreContext } from '../../api/lcore.js';
import type { TxQueueHandle } from '../../api/queue.js';
import { L3L_F_TX_DROPPED, L3L_F_TX_PACKETS, L3L_MAX_PORTS, L3L_TX_BUF_LEN, L3L_W_DROPS, L3L_W_RX_PORT, L3L_W_TX_BUFS, L3L_W_TX_LEN } from './l3fwd-layout.js';
import { l3fwdOps } from './l3fwd.twin.js';

/** DPDK's MAX_PKT_BURST. */
export const MAX_PKT_BURST = 32;

export interface L3fwdLcoreArgs {
  /** Per lcore, in launch order: the heap offset of its block (l3fwd.record.ts). */
  blocks: number[];
  /** Per lcore: the (port, rx queue) pairs it polls. */
  rx: [number, number][][];
  /** Per lcore: the tx queue it sends on, on every port (its index among the lcores). */
  txQueue: number[];
  /** The enabled ports. */
  ports: number[];
}

export function main(ctx: LcoreContext<L3fwdLcoreArgs>): number {
  const a = ctx.args;
  const me = ctx.lcores.indexOf(ctx.lcoreId);
  const { heap, mbufs: mb } = ctx;
  const s = a.blocks[me]!;
  const sw = s >>> 2;
  const f = s >>> 3;
  const rxq = a.rx[me]!.map(([p, q]) => ctx.rxQueue(p, q));
  const rxPorts = a.rx[me]!.map(([p]) => p);
  const txq: (TxQueueHandle | undefined)[] = new Array(L3L_MAX_PORTS);
  for (const p of a.ports) txq[p] = ctx.txQueue(p, a.txQueue[me]!);
  const txBufs = a.ports.map((p) => heap.burstAt(heap.u32[sw + L3L_W_TX_BUFS]! + 4 * p * L3L_TX_BUF_LEN, L3L_TX_BUF_LEN));
  const drops = heap.burstAt(heap.u32[sw + L3L_W_DROPS]!, MAX_PKT_BURST);
  const route = l3fwdOps(heap, mb);
  const burst = ctx.burst(MAX_PKT_BURST);
  const { u32, f64 } = heap;
  let rx = 0;
  while (!ctx.stopping()) {
    for (let i = 0; i < rxq.length; i++) {
      const n = rxq[i]!.rxBurst(burst, MAX_PKT_BURST);
      if (n === 0) continue;
      rx += n;
      u32[sw + L3L_W_RX_PORT] = rxPorts[i]!;
      const nd = route(s, burst.heapOffset, n);
      if (nd > 0) mb.freeBulk(drops, nd);
      for (let k = 0; k < a.ports.length; k++) {
        const p = a.ports[k]!;
        const len = u32[sw + L3L_W_TX_LEN + p]!;
        if (len === 0) continue;
        u32[sw + L3L_W_TX_LEN + p] = 0;
        const sent = txq[p]!.txBurst(txBufs[k]!, len);
        f64[f + L3L_F_TX_PACKETS] += sent;
        if (sent < len) {
          mb.freeBulk(txBufs[k]!, len - sent, sent);
          f64[f + L3L_F_TX_DROPPED] += len - sent;
        }
      }
    }
  }
  return rx;
}
