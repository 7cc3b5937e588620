/**
 * macswap: swap each packet's Ethernet source and destination (testpmd's
 * macswap), then set the tx fields as do_macswap does. The work runs in the
 * arm of the SIMD macswap study `config.variants.macswap` names (variants.ts;
 * kernels in macswap.as.ts); `scalar` and the TypeScript datapath run the
 * twin (macswap.twin.ts). Like DPDK's SSE macswap, the vector arms load 16
 * bytes per packet: two mbufs of one burst sharing data (clones) are not
 * supported by the interleaved arm, which loads before it stores.
 */
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { engineBlock } from './blocks.js';
import { macswapOps } from './macswap.twin.js';

export function macswap(ctx: FwdContext): FwdEngine {
  const burst = ctx.burst;
  const lc = ctx.heap.lcore;
  const e = engineBlock(ctx, 'macswap');
  const swap = macswapOps(ctx.heap, ctx.config.variants.macswap);
  return {
    name: 'macswap',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      swap(e, lc, burst.heapOffset, n);
      transmit(ctx, fs, n);
    },
  };
}
