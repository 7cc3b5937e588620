/** The receive and transmit halves every engine shares (testpmd's common_fwd_stream_*). */
import type { FwdContext, FwdStream } from './engine.js';
import { FS_FWD_DROPPED, FS_RX_PACKETS, FS_TX_PACKETS } from './engine.js';

/** Receives up to a burst from the stream's rx queue into ctx.burst. @returns how many. */
export function receive(ctx: FwdContext, fs: FwdStream): number {
  const n = fs.rxq.rxBurst(ctx.burst, ctx.config.burst);
  if (n > 0) ctx.heap.f64[fs.stats + FS_RX_PACKETS] += n;
  return n;
}

/**
 * Transmits ctx.burst[0..n) on the stream's tx queue; what the queue refuses
 * is freed and counted as dropped, as testpmd does without --enable-tx-retry.
 */
export function transmit(ctx: FwdContext, fs: FwdStream, n: number): void {
  const sent = fs.txq.txBurst(ctx.burst, n);
  const f64 = ctx.heap.f64;
  f64[fs.stats + FS_TX_PACKETS] += sent;
  if (sent < n) {
    ctx.mb.freeBulk(ctx.burst, n - sent, sent);
    f64[fs.stats + FS_FWD_DROPPED] += n - sent;
  }
}
