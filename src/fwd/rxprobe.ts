/**
 * rxprobe: receive, check each packet's probe signature (gen/probe.ts:
 * per-stream loss, duplicates, reordering and latency on one clock), free.
 * One probe checker per lcore, made with the engine; each stream's counter
 * block records its heap offset so the control plane finds it (testpmd
 * prints it in the forward statistics).
 */
import { ProbeRx } from '../gen/probe.js';
import { receive } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { FS_PROBE } from './fwd-layout.js';

/** Probe stream ids an rxprobe lcore tracks (0 .. RXPROBE_STREAMS-1). */
export const RXPROBE_STREAMS = 16;

export function rxprobe(ctx: FwdContext): FwdEngine {
  const rx = ProbeRx.create(ctx.heap, { streams: RXPROBE_STREAMS });
  const f64 = ctx.heap.f64;
  return {
    name: 'rxprobe',
    fwd(fs: FwdStream): void {
      f64[fs.stats + FS_PROBE] = rx.block;
      const n = receive(ctx, fs);
      if (n === 0) return;
      rx.check(ctx.burst, n);
      ctx.mb.freeBulk(ctx.burst, n);
    },
  };
}
