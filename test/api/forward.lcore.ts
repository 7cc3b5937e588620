// An lcore function for the launch tests: forwards its pair's rx port to its tx port until stopped
// (or throws once it has forwarded, with nothing in hand, when it is the lcore `throwOn` names).
import type { LcoreContext } from 'dpkit';

export interface ForwardArgs {
  /** [rx port, tx port] of each launched lcore, by launch order. */
  pairs: [number, number][];
  throwOn?: number;
}

export function main(ctx: LcoreContext<ForwardArgs>): { fwd: number; dropped: number } {
  const [rxPort, txPort] = ctx.args.pairs[ctx.lcores.indexOf(ctx.lcoreId)]!;
  const rx = ctx.rxQueue(rxPort, 0);
  const tx = ctx.txQueue(txPort, 0);
  const burst = ctx.burst(32);
  let fwd = 0;
  let dropped = 0;
  while (!ctx.stopping()) {
    if (ctx.args.throwOn === ctx.lcoreId && fwd > 0) throw new TypeError('engine exploded');
    const n = rx.rxBurst(burst, 32);
    if (n === 0) continue;
    const sent = tx.txBurst(burst, n);
    if (sent < n) {
      ctx.mbufs.freeBulk(burst, n - sent, sent);
      dropped += n - sent;
    }
    fwd += sent;
  }
  return { fwd, dropped };
}
