/**
 * icmpecho forwarding (testpmd's icmpecho.c): a responder. It answers ARP
 * requests for any IPv4 address with the port's own MAC, and ICMP echo
 * requests over IPv4 with echo replies; every other packet is freed. Replies
 * are built in place in the request's mbuf and sent on the stream's tx queue
 * (icmpecho streams transmit on the port they receive from, so fs.txMac is
 * the receiving port's address).
 *
 * Differences from testpmd, all on packets testpmd would mangle: lengths are
 * checked (a truncated ARP or ICMP packet is dropped), the ICMP header is
 * found after the IPv4 options (testpmd assumes IHL 5), IPv4 fragments are
 * dropped (a reply to one fragment is no reply), and a multicast destination
 * is any of 224.0.0.0/4 (testpmd tests 224.0.0.0/8 only).
 *
 * The per-packet work runs in the kernel icmpEcho (icmpecho.as.ts) or its
 * twin (icmpecho.twin.ts): replies stay at the burst's front, the rest go to
 * the engine's drop list, freed here in bulk.
 */
import { engineBlock, streamBlocks } from './blocks.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { FWDE_W_DROPS } from './fwd-layout.js';
import { icmpEchoOps } from './icmpecho.twin.js';

/**
 * Makes the icmpecho engine for one lcore: its blocks, its drop list and the
 * kernel (icmpecho.as.ts) or its twin, once.
 * @returns an engine whose fwd() receives a burst, turns ARP requests and
 *   ICMP echo requests into replies, frees everything else and transmits the
 *   replies. Never throws on packet contents.
 */
export function icmpEcho(ctx: FwdContext): FwdEngine {
  const { heap, mb, burst } = ctx;
  const e = engineBlock(ctx, 'icmpecho');
  const drops = heap.burst(burst.length);
  heap.u32[(e >>> 2) + FWDE_W_DROPS] = drops.heapOffset;
  const block = streamBlocks(ctx, e, 'icmpecho');
  const echo = icmpEchoOps(heap);
  const lc = heap.lcore;

  return {
    name: 'icmpecho',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      const replies = echo(block(fs), lc, burst.heapOffset, n);
      if (replies < n) mb.freeBulk(drops, n - replies);
      if (replies > 0) transmit(ctx, fs, replies);
    },
  };
}
