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
 * The work runs in the wasm kernel csum (src/kernels/as/fwd.as.ts) when the
 * heap has kernels and the burst lives in the heap; otherwise the
 * TypeScript twin below runs.
 */
import { OlFlags, OlFlagsHi } from '../mem/mbuf-layout.js';
import { ETHER_ADDR_LEN, ETHER_HDR_LEN, ETHER_TYPE_IPV4, ETHER_TYPE_IPV6 } from '../net/ether.js';
import {
  ipv4CksumSet,
  ipv4CksumVerify,
  ipv4UdptcpCksum,
  ipv4UdptcpCksumVerify,
  ipv6UdptcpCksum,
  ipv6UdptcpCksumVerify,
} from '../net/checksum.js';
import { ETHER_SRC_OFF, IPPROTO_TCP, IPPROTO_UDP, TCP_CKSUM_OFF, UDP_CKSUM_OFF, be16, newHdrInfo, parseHeaders, setBe16 } from '../net/headers.js';
import { receive, transmit } from './common.js';
import { FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, type FwdContext, type FwdEngine, type FwdStream } from './engine.js';
import { KEEP_HI, streamAddressWords } from './tx-fields.js';

/** DPDK's RTE_MBUF_F_RX_IP_CKSUM_MASK / _L4_: BAD alone = bad, GOOD alone = good, both = none, neither = unknown. */
const IP_CKSUM_MASK = OlFlags.RX_IP_CKSUM_BAD | OlFlags.RX_IP_CKSUM_GOOD;
const L4_CKSUM_MASK = OlFlags.RX_L4_CKSUM_BAD | OlFlags.RX_L4_CKSUM_GOOD;

/**
 * Makes the csum engine for one lcore (views and the parse result are made
 * here, once).
 * @returns an engine whose fwd() receives a burst, fixes each packet's
 *   checksums in place, counts bad arrivals and transmits the burst on the
 *   stream's tx queue. Never throws on packet contents.
 */
export function csum(ctx: FwdContext): FwdEngine {
  const mb = ctx.mb;
  const u8 = ctx.heap.u8;
  const f64 = ctx.heap.f64;
  const burst = ctx.burst;
  const info = newHdrInfo();
  const kernel = ctx.heap.kernels?.fwd.csum ?? null;
  const inHeap = burst.buffer === ctx.heap.buffer;
  const words = streamAddressWords();

  return {
    name: 'csum',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      if (kernel !== null && inHeap) {
        const w = words(fs);
        kernel(burst.byteOffset, n, w[0]!, w[1]!, w[2]!, KEEP_HI, fs.stats * 8);
        transmit(ctx, fs, n);
        return;
      }

      // The TypeScript twin of the csum kernel.
      const peer = fs.peerMac;
      const own = fs.txMac;
      let badIp = 0;
      let badL4 = 0;

      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const l2 = mb.mtod(h);
        const len = mb.dataLen(h);
        const rx = mb.olFlags(h);
        const ipStatus = rx & IP_CKSUM_MASK;
        const l4Status = rx & L4_CKSUM_MASK;
        if (ipStatus === OlFlags.RX_IP_CKSUM_BAD) badIp++;
        if (l4Status === OlFlags.RX_L4_CKSUM_BAD) badL4++;

        if (len >= ETHER_HDR_LEN) {
          for (let k = 0; k < ETHER_ADDR_LEN; k++) {
            u8[l2 + k] = peer[k]!;
            u8[l2 + ETHER_SRC_OFF + k] = own[k]!;
          }
        }
        parseHeaders(u8, l2, len, info);
        let txFlags = mb.olFlagsHi(h) & KEEP_HI;
        let l3Len = 0;
        let l4Len = 0;
        const l3 = info.l3Off;
        const l4 = info.l4Off;
        const proto = info.l4Proto;
        if (proto >= 0) {
          // IPv4 or IPv6 header present.
          const v4 = info.ethertype === ETHER_TYPE_IPV4;
          l3Len = info.l3Len;
          if (v4) {
            txFlags |= OlFlagsHi.TX_IPV4;
            if (ipStatus === 0 && !ipv4CksumVerify(u8, l3)) badIp++;
            ipv4CksumSet(u8, l3);
          } else if (info.ethertype === ETHER_TYPE_IPV6) {
            txFlags |= OlFlagsHi.TX_IPV6;
          }
          if (l4 !== 0 && (proto === IPPROTO_UDP || proto === IPPROTO_TCP)) {
            l4Len = info.l4Len;
            if (info.l3Complete && !info.ipFrag) {
              const field = l4 + (proto === IPPROTO_UDP ? UDP_CKSUM_OFF : TCP_CKSUM_OFF);
              const old = be16(u8, field);
              // IPv4 UDP with checksum 0 carries none: leave it (testpmd: "do not recalculate udp cksum if it was 0").
              if (!(v4 && proto === IPPROTO_UDP && old === 0)) {
                if (l4Status === 0) {
                  const ok = v4 ? ipv4UdptcpCksumVerify(u8, l3, l4) : !(proto === IPPROTO_UDP && old === 0) && ipv6UdptcpCksumVerify(u8, l3, l4);
                  if (!ok) badL4++;
                }
                setBe16(u8, field, v4 ? ipv4UdptcpCksum(u8, l3, l4) : ipv6UdptcpCksum(u8, l3, l4));
              }
            }
          }
        }
        mb.setOlFlags(h, 0);
        mb.setOlFlagsHi(h, txFlags);
        mb.setTxOffload(h, info.l2Len, l3Len, l4Len);
        mb.setTsoSegsz(h, 0);
      }
      transmit(ctx, fs, n);
      if (badIp > 0) f64[fs.stats + FS_RX_BAD_IP_CSUM] += badIp;
      if (badL4 > 0) f64[fs.stats + FS_RX_BAD_L4_CSUM] += badL4;
    },
  };
}
