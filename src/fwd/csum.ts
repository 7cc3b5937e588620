/**
 * csum forwarding (testpmd's csumonly.c) in software mode: for each packet,
 * rewrite the MACs (testpmd's default `csum mac-swap on`: destination = the
 * peer, source = the tx port), parse Ethernet / VLAN / IPv4 / IPv6 / UDP /
 * TCP, recompute the IPv4 header checksum and the UDP or TCP checksum in
 * software, set the tx metadata (header lengths, TX_IPV4 / TX_IPV6) and
 * forward.
 *
 * Rx checksum status: a driver that checked the checksums says so in the rx
 * flags (RX_IP_CKSUM_* / RX_L4_CKSUM_*), which testpmd counts; when the
 * status is unknown (no driver here checks), the engine verifies in software
 * before rewriting, and counts bad arrivals in FS_RX_BAD_IP_CSUM /
 * FS_RX_BAD_L4_CSUM.
 *
 * Checksum rules, as testpmd and the RFCs: a UDP checksum of 0 over IPv4
 * means "none" (RFC 768) and is left 0, not counted bad; over IPv6 it is
 * invalid (RFC 8200 §8.1), so it counts as bad and is computed (testpmd
 * leaves it 0). L4 checksums are skipped for IPv4 fragments and for
 * datagrams that do not lie wholly in the first segment (single-segment
 * assumption; see src/net/checksum.ts). Packets that are not IP, or are
 * truncated, are forwarded with whatever could be parsed; nothing throws.
 *
 * The work runs in the wasm kernel csum (csum.as.ts) or, on the TypeScript
 * datapath, its twin (csum.twin.ts).
 */
import { engineBlock, streamBlocks } from './blocks.js';
import { receive, transmit } from './common.js';
import { csumOps } from './csum.twin.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';

/**
 * Makes the csum engine for one lcore (its block, and the twin's parse
 * result, are made here, once).
 * @returns an engine whose fwd() receives a burst, fixes each packet's
 *   checksums in place, counts bad arrivals and transmits the burst on the
 *   stream's tx queue. Never throws on packet contents.
 */
export function csum(ctx: FwdContext): FwdEngine {
  const burst = ctx.burst;
  const lc = ctx.heap.lcore;
  const block = streamBlocks(ctx, engineBlock(ctx, 'csum'), 'csum');
  const fix = csumOps(ctx.heap, ctx.mb);
  return {
    name: 'csum',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      fix(block(fs), lc, burst.heapOffset, n);
      transmit(ctx, fs, n);
    },
  };
}
