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
 * The work runs in the wasm kernel fiveTupleSwap (src/kernels/as/fwd.as.ts)
 * when the heap has kernels and the burst lives in the heap; otherwise the
 * TypeScript twin below runs.
 */
import { OlFlagsHi } from '../mem/mbuf-layout.js';
import { ETHER_TYPE_IPV4 } from '../net/ether.js';
import {
  IPPROTO_TCP,
  IPPROTO_UDP,
  PARSED_L2,
  etherAddrSwap,
  ipv4AddrSwap,
  ipv6AddrSwap,
  l4PortSwap,
  newHdrInfo,
  parseHeaders,
} from '../net/headers.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { KEEP_HI, txOlFlagsHi } from './tx-fields.js';

/**
 * Makes the 5tswap engine for one lcore (all views and the parse result are
 * made here, once).
 * @returns an engine whose fwd() receives a burst, swaps each packet in
 *   place and transmits it on the stream's tx queue. Never throws on packet
 *   contents.
 */
export function fiveTupleSwap(ctx: FwdContext): FwdEngine {
  const mb = ctx.mb;
  const u8 = ctx.heap.u8;
  const burst = ctx.burst;
  const info = newHdrInfo();
  // ol_flags_init, once per run as macswap does; the TCIs are read per burst.
  const txFlags = txOlFlagsHi(ctx.config);
  const kernel = ctx.heap.kernels?.fwd.fiveTupleSwap ?? null;
  const inHeap = burst.buffer === ctx.heap.buffer;
  const setVlan = txFlags & OlFlagsHi.TX_VLAN ? 1 : 0;
  const setQinq = txFlags & OlFlagsHi.TX_QINQ ? 1 : 0;

  return {
    name: '5tswap',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      const cfg = ctx.config;
      if (kernel !== null && inHeap) {
        kernel(burst.byteOffset, n, txFlags, KEEP_HI, cfg.vlanTci, cfg.vlanTciOuter, setVlan, setQinq);
        transmit(ctx, fs, n);
        return;
      }

      // The TypeScript twin of the fiveTupleSwap kernel.
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const off = mb.mtod(h);
        let l3Len = 0;
        let l4Len = 0;
        if (parseHeaders(u8, off, mb.dataLen(h), info) >= PARSED_L2) {
          etherAddrSwap(u8, off);
          if (info.l4Proto >= 0) {
            // An IP header is present (ARP leaves l4Proto at -1).
            if (info.ethertype === ETHER_TYPE_IPV4) ipv4AddrSwap(u8, info.l3Off);
            else ipv6AddrSwap(u8, info.l3Off);
            l3Len = info.l3Len;
            if (info.l4Off !== 0 && (info.l4Proto === IPPROTO_UDP || info.l4Proto === IPPROTO_TCP)) {
              l4PortSwap(u8, info.l4Off);
              l4Len = info.l4Len;
            }
          }
        }
        mb.setTxOffload(h, info.l2Len, l3Len, l4Len);
        mb.setOlFlags(h, 0);
        mb.setOlFlagsHi(h, (mb.olFlagsHi(h) & KEEP_HI) | txFlags);
        if ((txFlags & OlFlagsHi.TX_VLAN) !== 0) mb.setVlanTci(h, cfg.vlanTci);
        if ((txFlags & OlFlagsHi.TX_QINQ) !== 0) mb.setVlanTciOuter(h, cfg.vlanTciOuter);
      }
      transmit(ctx, fs, n);
    },
  };
}
