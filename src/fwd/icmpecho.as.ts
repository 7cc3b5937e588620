// icmpecho's kernel (twin: icmpEchoTwin in icmpecho.twin.ts). `s` is the
// stream's block (fwd.record.ts: the tx port's address, its engine's block
// with the drop list), `lc` the lcore block (unused), `burst` a burst's heap
// offset. The parse is parseHeaders' (src/net/headers.ts), as far as an ARP
// request or an ICMP echo request needs it; every length is checked before a
// byte is read.
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_DATA_LEN } from '../mem/mbuf-layout.as';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4, IPV4_HDR_LEN, etherAddrSwap, etherSkipTags, loadBe16 } from '../net/headers.as';
import { FWDE_DROPS, FWDS_ENGINE, FWDS_MAC } from './fwd-layout.as';

const ETHER_TYPE_ARP: u32 = 0x0806;
const ARP_HDR_LEN: u32 = 28;
/** An Ethernet/IPv4 ARP request's first 8 bytes (hrd 1, pro 0x0800, hlen 6, plen 4, op 1) as two little-endian words. */
const ARP_REQUEST_W0: u32 = 0x00080100;
const ARP_REQUEST_W1: u32 = 0x01000406;
/** op 2 (reply), big-endian, as a little-endian u16 store writes it. */
const ARP_OP_REPLY_LE: u16 = 0x0200;
const IPPROTO_ICMP: u32 = 1;
const ICMP_HDR_LEN: u32 = 8;
const ICMP_ECHO_REQUEST: u32 = 8;
const ICMP_ECHO_REPLY: u32 = 0;
/** IPv4 flags and offset: MF or a fragment offset marks a fragment. */
const IPV4_FRAG_MASK: u32 = 0x3fff;

/** Copies the 6-byte address at `src` to `dst`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function macCopy(dst: u32, src: u32): void {
  store<u32>(dst, load<u32>(src));
  store<u16>(dst, load<u16>(src, 4), 4);
}

/** The ARP request at `arp` (in the frame at `p`) turned into a reply from `mac`; false (drop) when it is not an IPv4-over-Ethernet request. */
// @ts-ignore: decorator
@inline
function arpReply(p: u32, arp: u32, mac: u32): bool {
  if ((load<u32>(arp) ^ ARP_REQUEST_W0) | (load<u32>(arp, 4) ^ ARP_REQUEST_W1)) return false;
  // Back to the requester, from us.
  macCopy(p, p + 6);
  macCopy(p + 6, mac);
  store<u16>(arp, ARP_OP_REPLY_LE, 6);
  // Target hardware address := the requester's; sender := us; the IP addresses trade places.
  macCopy(arp + 18, arp + 8);
  macCopy(arp + 8, mac);
  const sip = load<u32>(arp, 14);
  store<u32>(arp, load<u32>(arp, 24), 14);
  store<u32>(arp, sip, 24);
  return true;
}

/**
 * The ICMP echo request in the IPv4 header at `ip` (`room` bytes to the
 * frame's end, frame at `p`) turned into a reply, with testpmd's rules for
 * the source address; false (drop) for anything else, a fragment, or a
 * header that does not fit.
 */
// @ts-ignore: decorator
@inline
function echoReply(p: u32, ip: u32, room: u32): bool {
  if (room < IPV4_HDR_LEN) return false;
  const vihl = <u32>load<u8>(ip);
  const hl = (vihl & 0xf) << 2;
  const total = loadBe16(ip + 2);
  if (vihl >> 4 != 4 || hl < IPV4_HDR_LEN || hl > room || total < hl) return false;
  if (<u32>load<u8>(ip, 9) != IPPROTO_ICMP || (loadBe16(ip + 6) & IPV4_FRAG_MASK) != 0) return false;
  // The ICMP header must fit both the bytes there are and the datagram's own length.
  const left = room - hl;
  const dgram = total - hl;
  if ((left < dgram ? left : dgram) < ICMP_HDR_LEN) return false;
  const icmp = ip + hl;
  if (<u32>load<u8>(icmp) != ICMP_ECHO_REQUEST || load<u8>(icmp, 1) != 0) return false;

  etherAddrSwap(p);
  const srcWire = load<u32>(ip, 12);
  if (load<u8>(ip, 16) >> 4 == 0xe) {
    // Asked on a multicast group: answer from a unicast address near the requester's, not from the group.
    const src = bswap<u32>(srcWire);
    const replySrc = (src & 3) == 1 ? (src & ~3) | 2 : (src & ~3) | 1;
    store<u32>(ip, bswap<u32>(replySrc), 12);
    store<u32>(ip, srcWire, 16);
    // The header checksum afresh, summed in the words' own byte order (RFC 1071).
    store<u16>(ip, 0, 10);
    let sum: u32 = 0;
    for (let i: u32 = 0; i < hl; i += 2) sum += <u32>load<u16>(ip + i);
    sum = (sum & 0xffff) + (sum >>> 16);
    sum = (sum & 0xffff) + (sum >>> 16);
    store<u16>(ip, <u16>(~sum & 0xffff), 10);
  } else {
    store<u32>(ip, load<u32>(ip, 16), 12); // the header checksum does not change
    store<u32>(ip, srcWire, 16);
  }
  // Only the type changes: adjust the checksum for that word (RFC 1624, eqn. 3), as testpmd does.
  store<u8>(icmp, <u8>ICMP_ECHO_REPLY);
  let c = (~loadBe16(icmp + 2) & 0xffff) + (~(ICMP_ECHO_REQUEST << 8) & 0xffff);
  c = (c & 0xffff) + (c >>> 16);
  c = (c & 0xffff) + (c >>> 16);
  store<u16>(icmp, bswap<u16>(<u16>(~c & 0xffff)), 2);
  return true;
}

/**
 * icmpecho: each packet of the burst that is an ARP request or an ICMP echo
 * request over IPv4 becomes its reply in place and moves to the front of the
 * burst, in order; every other packet goes to the engine's drop list, in
 * order. @returns how many replies (the drops are the rest of `n`).
 */
export function icmpEcho(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const drops = load<u32>(load<u32>(s, FWDS_ENGINE), FWDE_DROPS);
  const mac = s + FWDS_MAC + 6;
  let k: u32 = 0;
  let d: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const h = load<u32>(burst + (i << 2));
    const r = h << MBUF_SHIFT;
    const p = mtod(r);
    const len = <u32>load<u16>(r, M_DATA_LEN);
    let reply: bool = false;
    if (len >= ETHER_HDR_LEN) {
      const l2 = etherSkipTags(p, len);
      const l2Len = l2 & 0xffff;
      const type = l2 >>> 16;
      if (type == ETHER_TYPE_ARP) reply = len - l2Len >= ARP_HDR_LEN && arpReply(p, p + l2Len, mac);
      else if (type == ETHER_TYPE_IPV4) reply = echoReply(p, p + l2Len, len - l2Len);
    }
    if (reply) store<u32>(burst + (k++ << 2), h);
    else store<u32>(drops + (d++ << 2), h);
  }
  return k;
}
