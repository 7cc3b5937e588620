/** basicfwd's lcore_main: port p's packets go out of port p ^ 1, a burst at a time. */
import type { LcoreContext } from 'dpkit';

const BURST_SIZE = 32;

export interface SkeletonArgs {
  ports: number[];
  /** Stop once this many packets were received (Infinity: until stopped). */
  count: number;
}

export interface SkeletonCounts {
  rx: number;
  tx: number;
  dropped: number;
}

export function main(ctx: LcoreContext<SkeletonArgs>): SkeletonCounts {
  const { ports, count } = ctx.args;
  const rxq = ports.map((p) => ctx.rxQueue(p, 0));
  const txq = ports.map((p) => ctx.txQueue(p ^ 1, 0));
  const bufs = ctx.burst(BURST_SIZE);
  let rx = 0;
  let tx = 0;
  let dropped = 0;
  while (rx < count && !ctx.stopping()) {
    for (let i = 0; i < ports.length; i++) {
      const nbRx = rxq[i]!.rxBurst(bufs, BURST_SIZE);
      if (nbRx === 0) continue;
      const nbTx = txq[i]!.txBurst(bufs, nbRx);
      // Free any unsent packets.
      if (nbTx < nbRx) ctx.mbufs.freeBulk(bufs, nbRx - nbTx, nbTx);
      rx += nbRx;
      tx += nbTx;
      dropped += nbRx - nbTx;
    }
  }
  return { rx, tx, dropped };
}
