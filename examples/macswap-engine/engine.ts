/**
 * testpmd's macswap as a user engine in plain TypeScript, through the public
 * API: each packet's Ethernet source and destination swap places, its rx
 * offload flags clear and its tx fields say Ethernet + IPv4 (l2_len 14,
 * l3_len 20), as the built-in engine does. Allocation-free: the views are
 * taken once in `setup`, and the loop only reads and writes numbers.
 * `dpkit testpmd ... -- --forward-mode=./dist/examples/macswap-engine/engine.js`.
 */
import type { Burst, Mbufs, UserEngine, UserEngineContext } from 'dpkit';

let mbufs: Mbufs;
let view: DataView;

function setup(ctx: UserEngineContext): void {
  mbufs = ctx.mbufs;
  view = ctx.heap.view;
}

function burst(b: Burst, n: number): number {
  for (let i = 0; i < n; i++) {
    const h = b[i]!;
    const p = mbufs.mtod(h);
    const d0 = view.getUint32(p, true);
    const d1 = view.getUint16(p + 4, true);
    view.setUint32(p, view.getUint32(p + 6, true), true);
    view.setUint16(p + 4, view.getUint16(p + 10, true), true);
    view.setUint32(p + 6, d0, true);
    view.setUint16(p + 10, d1, true);
    mbufs.setOlFlags(h, 0);
    mbufs.setTxOffload(h, 14, 20, mbufs.l4Len(h));
  }
  return n;
}

export const engine: UserEngine = { setup, burst };
