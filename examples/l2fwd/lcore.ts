/**
 * l2fwd's main loop on one lcore: receive on each of its ports, rewrite the
 * MACs (destination 02:00:00:00:00:<dst port>, source the dst port's
 * address) and send to the paired port, counting per port in shared memory
 * for the main thread's statistics. The rewrite is plain TypeScript through
 * the public accessors, or with `kernel` one BurstOps call per burst.
 */
import { BurstOps, type LcoreContext, type MacAddrs } from 'dpkit';

const MAX_PKT_BURST = 32;
/** Per-port counters in `stats`: Float64 slots port * 3 + these. */
export const STAT_TX = 0;
export const STAT_RX = 1;
export const STAT_DROPPED = 2;

export interface L2fwdArgs {
  /** The rx ports of each lcore, by launch order. */
  rxPorts: number[][];
  /** l2fwd_dst_ports: where port p's packets go. */
  dstPorts: number[];
  macUpdating: boolean;
  /** Rewrite with the BurstOps kernel call instead of the TypeScript loop. */
  kernel: boolean;
  /** Stop once this lcore received this many packets (Infinity: until stopped). */
  count: number;
  /** Per-port counters, shared with the main thread (one writer per slot). */
  stats: Float64Array;
}

export function main(ctx: LcoreContext<L2fwdArgs>): number {
  const a = ctx.args;
  const mine = a.rxPorts[ctx.lcores.indexOf(ctx.lcoreId)] ?? [];
  const rxq = mine.map((p) => ctx.rxQueue(p, 0));
  const txq = mine.map((p) => ctx.txQueue(a.dstPorts[p]!, 0));
  // The 12 bytes each destination gets: 02:00:00:00:00:<dst>, then the dst port's own address.
  const addrs = mine.map((p) => {
    const dst = a.dstPorts[p]!;
    const b = new Uint8Array(12);
    b.set([0x02, 0, 0, 0, 0, dst], 0);
    b.set(ctx.macAddr(dst), 6);
    return b;
  });
  const ops = new BurstOps(ctx.heap);
  const words: MacAddrs[] = addrs.map((b) => ops.macAddrs(b.subarray(0, 6), b.subarray(6)));
  const view = ctx.heap.view;
  const mb = ctx.mbufs;
  const stats = a.stats;
  const burst = ctx.burst(MAX_PKT_BURST);
  let rx = 0;
  while (rx < a.count && !ctx.stopping()) {
    for (let i = 0; i < mine.length; i++) {
      const n = rxq[i]!.rxBurst(burst, MAX_PKT_BURST);
      if (n === 0) continue;
      const port = mine[i]!;
      const dst = a.dstPorts[port]!;
      rx += n;
      stats[port * 3 + STAT_RX]! += n;
      if (a.macUpdating) {
        if (a.kernel) ops.macRewrite(burst, n, words[i]!);
        else {
          // Three 32-bit stores through the heap's DataView, which V8 compiles inline and which
          // need no alignment: u8.set(addrs, at) is a builtin call a packet and a byte loop
          // twelve bounds-checked stores (each about 7 x as long, measured by hand). The words
          // are macAddrs' (the 12 bytes as three little-endian u32), as the kernel takes them.
          const w = words[i]!;
          for (let k = 0; k < n; k++) {
            const d = mb.mtod(burst[k]!);
            view.setUint32(d, w[0]!, true);
            view.setUint32(d + 4, w[1]!, true);
            view.setUint32(d + 8, w[2]!, true);
          }
        }
      }
      const sent = txq[i]!.txBurst(burst, n);
      stats[dst * 3 + STAT_TX]! += sent;
      if (sent < n) {
        mb.freeBulk(burst, n - sent, sent);
        stats[dst * 3 + STAT_DROPPED]! += n - sent;
      }
    }
  }
  return rx;
}
