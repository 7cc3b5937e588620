/**
 * icmpecho's per-burst work: the wasm kernel icmpEcho (icmpecho.as.ts) or
 * its TypeScript twin (here, same signature), chosen once when the engine is
 * made (`icmpEchoOps`). Its `state` is the stream's block (fwd.record.ts):
 * the tx port's address, the engine's block with the drop list.
 */
import type { Heap } from '../eal/heap.js';
import { cksumAdjust, ipv4CksumSet } from '../net/checksum.js';
import { ETHER_ADDR_LEN, ETHER_TYPE_ARP, ETHER_TYPE_IPV4 } from '../net/ether.js';
import {
  ARP_HLEN_OFF,
  ARP_HRD_ETHER,
  ARP_HRD_OFF,
  ARP_OP_OFF,
  ARP_OP_REPLY,
  ARP_OP_REQUEST,
  ARP_PLEN_OFF,
  ARP_PRO_OFF,
  ARP_SHA_OFF,
  ARP_SIP_OFF,
  ARP_THA_OFF,
  ARP_TIP_OFF,
  ETHER_DST_OFF,
  ETHER_SRC_OFF,
  ICMP_CKSUM_OFF,
  ICMP_CODE_OFF,
  ICMP_ECHO_REPLY,
  ICMP_ECHO_REQUEST,
  ICMP_TYPE_OFF,
  IPPROTO_ICMP,
  IPV4_DST_OFF,
  IPV4_SRC_OFF,
  PARSED_L3,
  PARSED_L4,
  be16,
  be32,
  etherAddrSwap,
  ipv4AddrSwap,
  newHdrInfo,
  parseHeaders,
  setBe16,
  setBe32,
  swapBytes,
} from '../net/headers.js';
import { H_DATA_LEN, H_DATA_OFF, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR } from '../mem/mbuf-layout.js';
import { FWDE_W_DROPS, FWDS_MAC, FWDS_W_ENGINE } from './fwd-layout.js';

/** icmpEcho's signature: replies kept at the front of the burst, their count returned, the rest in the engine's drop list. */
export type IcmpEchoKernel = (s: number, lc: number, burst: number, n: number) => number;

/** The kernel when the heap has kernels, else the twin. */
export function icmpEchoOps(heap: Heap): IcmpEchoKernel {
  const k = heap.kernels;
  return k === null ? icmpEchoTwin(heap) : k.fn('icmpEcho');
}

/** icmpEcho's twin, through parseHeaders: the same replies, bytes and order. */
export function icmpEchoTwin(heap: Heap): IcmpEchoKernel {
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const info = newHdrInfo();

  /** Copies the 6-byte address at `src` to `dst`. */
  const macCopy = (dst: number, src: number): void => {
    for (let i = 0; i < ETHER_ADDR_LEN; i++) u8[dst + i] = u8[src + i]!;
  };

  /** Turns the ARP request at `arp` into a reply from `mac`; false (drop) when it is not an IPv4-over-Ethernet request. */
  const arpReply = (l2: number, arp: number, mac: number): boolean => {
    if (
      be16(u8, arp + ARP_HRD_OFF) !== ARP_HRD_ETHER ||
      be16(u8, arp + ARP_PRO_OFF) !== ETHER_TYPE_IPV4 ||
      u8[arp + ARP_HLEN_OFF] !== ETHER_ADDR_LEN ||
      u8[arp + ARP_PLEN_OFF] !== 4 ||
      be16(u8, arp + ARP_OP_OFF) !== ARP_OP_REQUEST
    ) {
      return false;
    }
    // Back to the requester, from us.
    macCopy(l2 + ETHER_DST_OFF, l2 + ETHER_SRC_OFF);
    macCopy(l2 + ETHER_SRC_OFF, mac);
    setBe16(u8, arp + ARP_OP_OFF, ARP_OP_REPLY);
    // Target hardware address := requester's; sender := us; the IP addresses trade places.
    macCopy(arp + ARP_THA_OFF, arp + ARP_SHA_OFF);
    macCopy(arp + ARP_SHA_OFF, mac);
    swapBytes(u8, arp + ARP_SIP_OFF, arp + ARP_TIP_OFF, 4);
    return true;
  };

  /** Turns the echo request at `ip` / `icmp` into a reply (testpmd's rules for the source address). */
  const echoReply = (l2: number, ip: number, icmp: number): void => {
    etherAddrSwap(u8, l2);
    const src = be32(u8, ip + IPV4_SRC_OFF);
    if (u8[ip + IPV4_DST_OFF]! >>> 4 === 0xe) {
      // Asked on a multicast group: answer from a unicast address near the requester's, not from the group.
      const replySrc = ((src & 3) === 1 ? (src & ~3) | 2 : (src & ~3) | 1) >>> 0;
      setBe32(u8, ip + IPV4_SRC_OFF, replySrc);
      setBe32(u8, ip + IPV4_DST_OFF, src);
      ipv4CksumSet(u8, ip);
    } else {
      ipv4AddrSwap(u8, ip); // the header checksum does not change
    }
    // Only the type changes: adjust the checksum for that word, as testpmd does (no full resum).
    const oldWord = (u8[icmp + ICMP_TYPE_OFF]! << 8) | u8[icmp + ICMP_CODE_OFF]!;
    u8[icmp + ICMP_TYPE_OFF] = ICMP_ECHO_REPLY;
    const newWord = (ICMP_ECHO_REPLY << 8) | u8[icmp + ICMP_CODE_OFF]!;
    setBe16(u8, icmp + ICMP_CKSUM_OFF, cksumAdjust(be16(u8, icmp + ICMP_CKSUM_OFF), oldWord, newWord));
  };

  /** Builds the reply in place and says keep, or says drop. */
  const reply = (l2: number, len: number, mac: number): boolean => {
    const depth = parseHeaders(u8, l2, len, info);
    if (depth < PARSED_L3) return false;
    if (info.ethertype === ETHER_TYPE_ARP) return arpReply(l2, info.l3Off, mac);
    if (info.ethertype !== ETHER_TYPE_IPV4 || depth < PARSED_L4 || info.l4Proto !== IPPROTO_ICMP || info.ipFrag) return false;
    const icmp = info.l4Off;
    if (u8[icmp + ICMP_TYPE_OFF] !== ICMP_ECHO_REQUEST || u8[icmp + ICMP_CODE_OFF] !== 0) return false;
    echoReply(l2, info.l3Off, icmp);
    return true;
  };

  return (s, _lc, burst, n) => {
    const drops = u32[(u32[(s >>> 2) + FWDS_W_ENGINE]! >>> 2) + FWDE_W_DROPS]! >>> 2;
    const mac = s + FWDS_MAC + 6;
    const b = burst >>> 2;
    let k = 0;
    let d = 0;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const l2 = u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
      if (reply(l2, u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN]!, mac)) u32[b + k++] = h;
      else u32[drops + d++] = h;
    }
    return k;
  };
}
