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
 */
import { ETHER_ADDR_LEN, ETHER_TYPE_ARP, ETHER_TYPE_IPV4 } from '../net/ether.js';
import { cksumAdjust, ipv4CksumSet } from '../net/checksum.js';
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
import { compact, receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';

/**
 * Makes the icmpecho engine for one lcore (views, the parse result and the
 * per-packet callback are made here, once).
 * @returns an engine whose fwd() receives a burst, turns ARP requests and
 *   ICMP echo requests into replies, frees everything else and transmits the
 *   replies. Never throws on packet contents.
 */
export function icmpEcho(ctx: FwdContext): FwdEngine {
  const mb = ctx.mb;
  const u8 = ctx.heap.u8;
  const info = newHdrInfo();
  /** The port's MAC for the burst being answered (set by fwd before compact runs). */
  let portMac: Uint8Array = new Uint8Array(ETHER_ADDR_LEN);

  const copyMac = (dst: number, mac: Uint8Array): void => {
    for (let i = 0; i < ETHER_ADDR_LEN; i++) u8[dst + i] = mac[i]!;
  };

  /** Turns the ARP request at `arp` into a reply; false (drop) when it is not an IPv4-over-Ethernet request. */
  const arpReply = (l2: number, arp: number): boolean => {
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
    for (let i = 0; i < ETHER_ADDR_LEN; i++) u8[l2 + ETHER_DST_OFF + i] = u8[l2 + ETHER_SRC_OFF + i]!;
    copyMac(l2 + ETHER_SRC_OFF, portMac);
    setBe16(u8, arp + ARP_OP_OFF, ARP_OP_REPLY);
    // Target hardware address := requester's; sender := us; the IP addresses trade places.
    for (let i = 0; i < ETHER_ADDR_LEN; i++) u8[arp + ARP_THA_OFF + i] = u8[arp + ARP_SHA_OFF + i]!;
    copyMac(arp + ARP_SHA_OFF, portMac);
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

  /** compact()'s predicate: builds the reply in place and keeps it, or says drop. */
  const reply = (h: number): boolean => {
    const l2 = mb.mtod(h);
    const depth = parseHeaders(u8, l2, mb.dataLen(h), info);
    if (depth < PARSED_L3) return false;
    if (info.ethertype === ETHER_TYPE_ARP) return arpReply(l2, info.l3Off);
    if (info.ethertype !== ETHER_TYPE_IPV4 || depth < PARSED_L4 || info.l4Proto !== IPPROTO_ICMP || info.ipFrag) return false;
    const icmp = info.l4Off;
    if (u8[icmp + ICMP_TYPE_OFF] !== ICMP_ECHO_REQUEST || u8[icmp + ICMP_CODE_OFF] !== 0) return false;
    echoReply(l2, info.l3Off, icmp);
    return true;
  };

  return {
    name: 'icmpecho',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      portMac = fs.txMac;
      const replies = compact(ctx, n, reply);
      if (replies > 0) transmit(ctx, fs, replies);
    },
  };
}
