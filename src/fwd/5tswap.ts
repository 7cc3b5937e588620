/**
 * 5tswap forwarding (testpmd's 5tswap.c): swaps source and destination at
 * layers 2, 3 and 4 — Ethernet addresses, IPv4 or IPv6 addresses, UDP or TCP
 * ports — then forwards. It swaps what it parses and stops at the first layer
 * it does not recognise: an ARP packet gets its MACs swapped only, an IPv4
 * packet carrying ICMP its MACs and addresses. Swaps keep every checksum
 * valid (a one's-complement sum does not depend on word order).
 *
 * Unlike testpmd, which reads headers without checking lengths, a header
 * that does not fit the first segment is left alone: a packet shorter than
 * an Ethernet header is forwarded untouched. Tx metadata is set as
 * macswap's mbuf_field_set does (rx flags cleared, VLAN/QinQ insert flags
 * from the tx port's offloads), but with the parsed header lengths where
 * testpmd overwrites them with 14 and 20.
 *
 * The work runs in the wasm kernel fiveTupleSwap (5tswap.as.ts) or, on the
 * TypeScript datapath, its twin (5tswap.twin.ts).
 */
import { engineBlock } from './blocks.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { fiveTupleSwapOps } from './5tswap.twin.js';

/**
 * Makes the 5tswap engine for one lcore (its block, and the twin's parse
 * result, are made here, once).
 * @returns an engine whose fwd() receives a burst, swaps each packet in
 *   place and transmits it on the stream's tx queue. Never throws on packet
 *   contents.
 */
export function fiveTupleSwap(ctx: FwdContext): FwdEngine {
  const burst = ctx.burst;
  const lc = ctx.heap.lcore;
  // ol_flags_init, once per run as macswap does.
  const e = engineBlock(ctx, '5tswap');
  const swap = fiveTupleSwapOps(ctx.heap, ctx.mb);
  return {
    name: '5tswap',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      swap(e, lc, burst.heapOffset, n);
      transmit(ctx, fs, n);
    },
  };
}
