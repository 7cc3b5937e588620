/**
 * mac: rewrite each packet's Ethernet destination to the tx port's peer and
 * its source to the tx port's address (testpmd's macfwd), and set the tx
 * fields. The work: mac.as.ts, or its twin in mac.twin.ts.
 */
import { engineBlock, streamBlocks } from './blocks.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { macOps } from './mac.twin.js';

export function mac(ctx: FwdContext): FwdEngine {
  const burst = ctx.burst;
  const lc = ctx.heap.lcore;
  const block = streamBlocks(ctx, engineBlock(ctx, 'mac'), 'mac');
  const fwd = macOps(ctx.heap);
  return {
    name: 'mac',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      fwd(block(fs), lc, burst.heapOffset, n);
      transmit(ctx, fs, n);
    },
  };
}
