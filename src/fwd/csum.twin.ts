/**
 * csum's per-burst work: the wasm kernel csum (csum.as.ts) or its
 * TypeScript twin (here, same signature), chosen once when the engine is
 * made (`csumOps`). Its `state` is the stream's block (fwd.record.ts): the
 * address bytes, the counters, the engine's block.
 */
import type { Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
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
import { IPPROTO_TCP, IPPROTO_UDP, TCP_CKSUM_OFF, UDP_CKSUM_OFF, be16, newHdrInfo, parseHeaders, setBe16 } from '../net/headers.js';
import type { EngineKernel } from './engine.js';
import { FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FWDE_F_CSUM_NO_MAC, FWDE_W_FLAGS, FWDE_W_KEEP_HI, FWDS_MAC, FWDS_W_ENGINE, FWDS_W_STATS } from './fwd-layout.js';

/** DPDK's RTE_MBUF_F_RX_IP_CKSUM_MASK / _L4_: BAD alone = bad, GOOD alone = good, both = none, neither = unknown. */
const IP_CKSUM_MASK = OlFlags.RX_IP_CKSUM_BAD | OlFlags.RX_IP_CKSUM_GOOD;
const L4_CKSUM_MASK = OlFlags.RX_L4_CKSUM_BAD | OlFlags.RX_L4_CKSUM_GOOD;

/** The kernel when the heap has kernels, else the twin. */
export function csumOps(heap: Heap, mb: Mbufs): EngineKernel {
  const k = heap.kernels;
  return k === null ? csumTwin(heap, mb) : k.fn('csum');
}

/** The twin: parseHeaders, then src/net/checksum.ts's verify and set. */
export function csumTwin(heap: Heap, mb: Mbufs): EngineKernel {
  const u8 = heap.u8;
  const u32 = heap.u32;
  const f64 = heap.f64;
  const info = newHdrInfo();
  return (s, _lc, burst, n) => {
    const sw = s >>> 2;
    const ew = u32[sw + FWDS_W_ENGINE]! >>> 2;
    const keepHi = u32[ew + FWDE_W_KEEP_HI]!;
    // mac-swap off: no packet is long enough to get the addresses.
    const macLen = (u32[ew + FWDE_W_FLAGS]! & FWDE_F_CSUM_NO_MAC) !== 0 ? Infinity : ETHER_HDR_LEN;
    const mac = s + FWDS_MAC;
    const b = burst >>> 2;
    let badIp = 0;
    let badL4 = 0;

    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const l2 = mb.mtod(h);
      const len = mb.dataLen(h);
      const rx = mb.olFlags(h);
      const ipStatus = rx & IP_CKSUM_MASK;
      const l4Status = rx & L4_CKSUM_MASK;
      if (ipStatus === OlFlags.RX_IP_CKSUM_BAD) badIp++;
      if (l4Status === OlFlags.RX_L4_CKSUM_BAD) badL4++;

      if (len >= macLen) {
        // The peer, then the tx port, as the stream's block holds them.
        for (let k = 0; k < 2 * ETHER_ADDR_LEN; k++) u8[l2 + k] = u8[mac + k]!;
      }
      parseHeaders(u8, l2, len, info);
      let txFlags = mb.olFlagsHi(h) & keepHi;
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
    const stats = u32[sw + FWDS_W_STATS]! >>> 3;
    if (badIp > 0) f64[stats + FS_RX_BAD_IP_CSUM] += badIp;
    if (badL4 > 0) f64[stats + FS_RX_BAD_L4_CSUM] += badL4;
  };
}
