/**
 * The lcore: basicfwd's loop (port p's packets out of port p ^ 1) with the
 * user's kernel run once over each burst between rx and tx.
 */
import { loadKernel, type LcoreContext } from 'dpkit';

const BURST_SIZE = 32;

export interface UserKernelArgs {
  ports: number[];
  /** The kernel module, built from ttl.as.ts. */
  wasm: string;
  /** Stop once this many packets were received (Infinity: until stopped). */
  count: number;
}

export interface UserKernelCounts {
  rx: number;
  tx: number;
  dropped: number;
  /** Packets whose TTL the kernel decremented. */
  ttlDecremented: number;
}

export function main(ctx: LcoreContext<UserKernelArgs>): UserKernelCounts {
  const { ports, count, wasm } = ctx.args;
  // Instantiated on this thread, over the heap every lcore shares.
  const { ttlDec } = loadKernel(ctx.heap, wasm, ['ttlDec']);
  const rxq = ports.map((p) => ctx.rxQueue(p, 0));
  const txq = ports.map((p) => ctx.txQueue(p ^ 1, 0));
  const bufs = ctx.burst(BURST_SIZE);
  let rx = 0;
  let tx = 0;
  let dropped = 0;
  let ttlDecremented = 0;
  while (rx < count && !ctx.stopping()) {
    for (let i = 0; i < ports.length; i++) {
      const nbRx = rxq[i]!.rxBurst(bufs, BURST_SIZE);
      if (nbRx === 0) continue;
      ttlDecremented += ttlDec(bufs.byteOffset, nbRx);
      const nbTx = txq[i]!.txBurst(bufs, nbRx);
      if (nbTx < nbRx) ctx.mbufs.freeBulk(bufs, nbRx - nbTx, nbTx);
      rx += nbRx;
      tx += nbTx;
      dropped += nbRx - nbTx;
    }
  }
  return { rx, tx, dropped, ttlDecremented };
}
