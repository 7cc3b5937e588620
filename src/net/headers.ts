/**
 * Protocol header layouts (rte_ether.h, rte_ip.h, rte_udp.h, rte_tcp.h,
 * rte_icmp.h, rte_arp.h) as byte offsets, plus small readers, writers and a
 * header parser that work in place on the heap.
 *
 * Everything takes `u8`, a Uint8Array over the whole heap (`heap.u8`), and
 * heap byte offsets (`mb.mtod(h)`). Fields are big-endian on the wire; the
 * readers assemble them from bytes, so no alignment is assumed and nothing is
 * allocated. A Uint8Array read past its end yields undefined (read as 0)
 * instead of throwing, so a bad offset produces a wrong value, never an
 * exception; the parser checks lengths so that it never needs that.
 *
 * Scope: Ethernet with up to two 802.1Q / 802.1ad tags, IPv4 (options
 * included), IPv6 without extension headers, UDP, TCP, ICMP and ICMPv6, and
 * ARP for IPv4 over Ethernet. Headers are parsed in the first segment only:
 * a packet whose headers continue into a second segment parses as truncated.
 */
import {
  ETHER_ADDR_LEN,
  ETHER_HDR_LEN,
  ETHER_TYPE_ARP,
  ETHER_TYPE_IPV4,
  ETHER_TYPE_IPV6,
  ETHER_TYPE_QINQ,
  ETHER_TYPE_VLAN,
} from './ether.js';

// ---- IP protocol numbers (netinet/in.h) -------------------------------------

export const IPPROTO_HOPOPTS = 0;
export const IPPROTO_ICMP = 1;
export const IPPROTO_TCP = 6;
export const IPPROTO_UDP = 17;
export const IPPROTO_IPV6 = 41;
export const IPPROTO_ICMPV6 = 58;
export const IPPROTO_SCTP = 132;

// ---- Ethernet (struct rte_ether_hdr, rte_vlan_hdr) ----------------------------

/** Offsets in the Ethernet header. */
export const ETHER_DST_OFF = 0;
export const ETHER_SRC_OFF = ETHER_ADDR_LEN;
export const ETHER_TYPE_OFF = 2 * ETHER_ADDR_LEN;
/** An 802.1Q / 802.1ad tag: u16 TCI, then the next ethertype. */
export const VLAN_HDR_LEN = 4;
/** Most tags the parser skips (rte_net_get_ptype: one VLAN, or QinQ = outer + inner). */
export const MAX_VLAN_TAGS = 2;

// ---- IPv4 (struct rte_ipv4_hdr) -----------------------------------------------

/** Length of an IPv4 header without options (IHL 5). */
export const IPV4_HDR_LEN = 20;
/** Longest IPv4 header (IHL 15). */
export const IPV4_HDR_MAX_LEN = 60;
/** RTE_IPV4_VHL_DEF: version 4, IHL 5. */
export const IPV4_VHL_DEF = 0x45;
/** Default TTL (RFC 1340), as testpmd's IP_DEFTTL. */
export const IP_DEFTTL = 64;
export const IPV4_VHL_OFF = 0;
export const IPV4_TOS_OFF = 1;
export const IPV4_TOTAL_LEN_OFF = 2;
export const IPV4_ID_OFF = 4;
export const IPV4_FRAG_OFF = 6;
export const IPV4_TTL_OFF = 8;
export const IPV4_PROTO_OFF = 9;
export const IPV4_CKSUM_OFF = 10;
export const IPV4_SRC_OFF = 12;
export const IPV4_DST_OFF = 16;
/** fragment_offset field: more-fragments flag and offset mask (RTE_IPV4_HDR_MF_FLAG, _OFFSET_MASK). */
export const IPV4_HDR_MF_FLAG = 0x2000;
export const IPV4_HDR_DF_FLAG = 0x4000;
export const IPV4_HDR_OFFSET_MASK = 0x1fff;

// ---- IPv6 (struct rte_ipv6_hdr) -----------------------------------------------

export const IPV6_HDR_LEN = 40;
export const IPV6_ADDR_LEN = 16;
export const IPV6_VTC_FLOW_OFF = 0;
export const IPV6_PAYLOAD_LEN_OFF = 4;
export const IPV6_NEXT_HDR_OFF = 6;
export const IPV6_HOP_LIMIT_OFF = 7;
export const IPV6_SRC_OFF = 8;
export const IPV6_DST_OFF = 24;

// ---- UDP, TCP (struct rte_udp_hdr, rte_tcp_hdr) ---------------------------------

export const UDP_HDR_LEN = 8;
export const UDP_SRC_PORT_OFF = 0;
export const UDP_DST_PORT_OFF = 2;
export const UDP_LEN_OFF = 4;
export const UDP_CKSUM_OFF = 6;

/** Length of a TCP header without options (data offset 5). */
export const TCP_HDR_LEN = 20;
export const TCP_SRC_PORT_OFF = 0;
export const TCP_DST_PORT_OFF = 2;
export const TCP_SEQ_OFF = 4;
export const TCP_ACK_OFF = 8;
/** High nibble: header length in 32-bit words. */
export const TCP_DATA_OFF_OFF = 12;
export const TCP_FLAGS_OFF = 13;
export const TCP_WINDOW_OFF = 14;
export const TCP_CKSUM_OFF = 16;
export const TCP_URP_OFF = 18;

// ---- ICMP echo (struct rte_icmp_hdr) ------------------------------------------

/** ICMP header with the echo identifier and sequence number. */
export const ICMP_HDR_LEN = 8;
export const ICMP_TYPE_OFF = 0;
export const ICMP_CODE_OFF = 1;
export const ICMP_CKSUM_OFF = 2;
export const ICMP_IDENT_OFF = 4;
export const ICMP_SEQ_OFF = 6;
/** RTE_IP_ICMP_ECHO_REQUEST / _REPLY. */
export const ICMP_ECHO_REQUEST = 8;
export const ICMP_ECHO_REPLY = 0;
/** ICMPv6 echo types (RFC 4443). */
export const ICMPV6_ECHO_REQUEST = 128;
export const ICMPV6_ECHO_REPLY = 129;

// ---- ARP for IPv4 over Ethernet (struct rte_arp_hdr) ----------------------------

/** ARP header plus its IPv4-over-Ethernet body (rte_arp_ipv4). */
export const ARP_HDR_LEN = 28;
export const ARP_HRD_OFF = 0;
export const ARP_PRO_OFF = 2;
export const ARP_HLEN_OFF = 4;
export const ARP_PLEN_OFF = 5;
export const ARP_OP_OFF = 6;
export const ARP_SHA_OFF = 8;
export const ARP_SIP_OFF = 14;
export const ARP_THA_OFF = 18;
export const ARP_TIP_OFF = 24;
/** RTE_ARP_HRD_ETHER, RTE_ARP_OP_REQUEST / _REPLY. */
export const ARP_HRD_ETHER = 1;
export const ARP_OP_REQUEST = 1;
export const ARP_OP_REPLY = 2;

// ---- byte-order access ------------------------------------------------------------

/** Big-endian u16 at `off`. */
export function be16(u8: Uint8Array, off: number): number {
  return (u8[off]! << 8) | u8[off + 1]!;
}

/** Big-endian u32 at `off`, as an unsigned number. */
export function be32(u8: Uint8Array, off: number): number {
  return ((u8[off]! << 24) | (u8[off + 1]! << 16) | (u8[off + 2]! << 8) | u8[off + 3]!) >>> 0;
}

/** Stores `v` (low 16 bits) big-endian at `off`. */
export function setBe16(u8: Uint8Array, off: number, v: number): void {
  u8[off] = v >>> 8;
  u8[off + 1] = v;
}

/** Stores `v` (low 32 bits) big-endian at `off`. */
export function setBe32(u8: Uint8Array, off: number, v: number): void {
  u8[off] = v >>> 24;
  u8[off + 1] = v >>> 16;
  u8[off + 2] = v >>> 8;
  u8[off + 3] = v;
}

/** Exchanges the `len` bytes at `a` with those at `b` (non-overlapping), in place. */
export function swapBytes(u8: Uint8Array, a: number, b: number, len: number): void {
  for (let i = 0; i < len; i++) {
    const t = u8[a + i]!;
    u8[a + i] = u8[b + i]!;
    u8[b + i] = t;
  }
}

// ---- field readers ------------------------------------------------------------------

/** Ethernet type field of the outer header at `l2` (before any tag is skipped). */
export function etherType(u8: Uint8Array, l2: number): number {
  return be16(u8, l2 + ETHER_TYPE_OFF);
}

/** Swaps the Ethernet destination and source addresses of the header at `l2`. */
export function etherAddrSwap(u8: Uint8Array, l2: number): void {
  swapBytes(u8, l2 + ETHER_DST_OFF, l2 + ETHER_SRC_OFF, ETHER_ADDR_LEN);
}

/** IP version nibble (4 or 6 for a sane packet) of the L3 header at `l3`. */
export function ipVersion(u8: Uint8Array, l3: number): number {
  return u8[l3]! >>> 4;
}

/** IPv4 header length in bytes (IHL × 4; rte_ipv4_hdr_len). */
export function ipv4HdrLen(u8: Uint8Array, l3: number): number {
  return (u8[l3 + IPV4_VHL_OFF]! & 0x0f) << 2;
}
export function ipv4TotalLen(u8: Uint8Array, l3: number): number {
  return be16(u8, l3 + IPV4_TOTAL_LEN_OFF);
}
export function ipv4Proto(u8: Uint8Array, l3: number): number {
  return u8[l3 + IPV4_PROTO_OFF]!;
}
export function ipv4Src(u8: Uint8Array, l3: number): number {
  return be32(u8, l3 + IPV4_SRC_OFF);
}
export function ipv4Dst(u8: Uint8Array, l3: number): number {
  return be32(u8, l3 + IPV4_DST_OFF);
}
/** True when the header is a fragment: more-fragments set or a non-zero offset (rte_ipv4_frag_pkt_is_fragmented). */
export function ipv4IsFragment(u8: Uint8Array, l3: number): boolean {
  return (be16(u8, l3 + IPV4_FRAG_OFF) & (IPV4_HDR_MF_FLAG | IPV4_HDR_OFFSET_MASK)) !== 0;
}
/** Swaps the IPv4 source and destination addresses (the header checksum stays valid). */
export function ipv4AddrSwap(u8: Uint8Array, l3: number): void {
  swapBytes(u8, l3 + IPV4_SRC_OFF, l3 + IPV4_DST_OFF, 4);
}

export function ipv6PayloadLen(u8: Uint8Array, l3: number): number {
  return be16(u8, l3 + IPV6_PAYLOAD_LEN_OFF);
}
export function ipv6NextHdr(u8: Uint8Array, l3: number): number {
  return u8[l3 + IPV6_NEXT_HDR_OFF]!;
}
/** Swaps the IPv6 source and destination addresses. */
export function ipv6AddrSwap(u8: Uint8Array, l3: number): void {
  swapBytes(u8, l3 + IPV6_SRC_OFF, l3 + IPV6_DST_OFF, IPV6_ADDR_LEN);
}

/** UDP or TCP source port (both start with src, dst ports). */
export function l4SrcPort(u8: Uint8Array, l4: number): number {
  return be16(u8, l4);
}
export function l4DstPort(u8: Uint8Array, l4: number): number {
  return be16(u8, l4 + 2);
}
/** Swaps the UDP or TCP source and destination ports (the L4 checksum stays valid). */
export function l4PortSwap(u8: Uint8Array, l4: number): void {
  swapBytes(u8, l4, l4 + 2, 2);
}
/** TCP header length in bytes (data offset × 4). */
export function tcpHdrLen(u8: Uint8Array, l4: number): number {
  return (u8[l4 + TCP_DATA_OFF_OFF]! & 0xf0) >>> 2;
}

// ---- parser --------------------------------------------------------------------------

/** How deep parseHeaders got: nothing (shorter than an Ethernet header), L2, L3, L4. */
export const PARSED_NONE = 0;
export const PARSED_L2 = 2;
export const PARSED_L3 = 3;
export const PARSED_L4 = 4;

/**
 * What parseHeaders found (rte_net_hdr_lens plus offsets). Make one per lcore
 * with newHdrInfo() and pass it to every call: it is overwritten, never
 * reallocated. Offsets are heap byte offsets; 0 means "not present" (heap
 * offset 0 is the heap header, never packet data).
 */
export interface HdrInfo {
  /** Ethertype after the VLAN tags (host order), 0 when the Ethernet header is missing. */
  ethertype: number;
  /** 802.1Q / 802.1ad tags skipped. */
  vlanTags: number;
  /** Ethernet header plus tags, in bytes. */
  l2Len: number;
  /** Heap offset of the L3 header (IPv4, IPv6 or ARP), 0 when not parsed. */
  l3Off: number;
  /** L3 header length in bytes (IPv4 IHL × 4, 40 for IPv6, 28 for ARP), 0 when not parsed. */
  l3Len: number;
  /** IPv4 protocol / IPv6 next header (IPPROTO_*), -1 when there is no IP header. */
  l4Proto: number;
  /** Heap offset of the UDP, TCP, ICMP or ICMPv6 header, 0 when not parsed. */
  l4Off: number;
  /** L4 header length in bytes (8 for UDP and ICMP, data offset × 4 for TCP), 0 when not parsed. */
  l4Len: number;
  /** Bytes of L4 header plus payload per the IP header (total length − IHL × 4, or payload length). */
  l4DgramLen: number;
  /** IPv4 fragment (MF set or non-zero offset): an L4 checksum cannot be checked on it. */
  ipFrag: boolean;
  /** The whole IP datagram, per its length field, lies within the parsed bytes. */
  l3Complete: boolean;
}

/** A zeroed HdrInfo to reuse across calls. */
export function newHdrInfo(): HdrInfo {
  return { ethertype: 0, vlanTags: 0, l2Len: 0, l3Off: 0, l3Len: 0, l4Proto: -1, l4Off: 0, l4Len: 0, l4DgramLen: 0, ipFrag: false, l3Complete: false };
}

/**
 * Parses the headers of the packet whose bytes are u8[off .. off + len)
 * (pass `mb.mtod(h)` and `mb.dataLen(h)`: the first segment) into `info`,
 * checking every length against `len` and the IP length fields, and
 * allocating nothing. A header that does not fit, or is not sane (IP
 * version, IHL < 5, IPv4 total length below its header, TCP data offset
 * < 5), ends the parse there; non-first IPv4 fragments carry no L4 header.
 *
 * @returns the deepest layer parsed: PARSED_NONE, PARSED_L2, PARSED_L3
 *   (IPv4, IPv6 or ARP header present) or PARSED_L4 (UDP, TCP, ICMP or
 *   ICMPv6 header present). Never throws.
 */
export function parseHeaders(u8: Uint8Array, off: number, len: number, info: HdrInfo): number {
  info.ethertype = 0;
  info.vlanTags = 0;
  info.l2Len = 0;
  info.l3Off = 0;
  info.l3Len = 0;
  info.l4Proto = -1;
  info.l4Off = 0;
  info.l4Len = 0;
  info.l4DgramLen = 0;
  info.ipFrag = false;
  info.l3Complete = false;
  if (!(len >= ETHER_HDR_LEN)) return PARSED_NONE;
  const end = off + len;

  let l2Len = ETHER_HDR_LEN;
  let type = be16(u8, off + ETHER_TYPE_OFF);
  let tags = 0;
  while ((type === ETHER_TYPE_VLAN || type === ETHER_TYPE_QINQ) && tags < MAX_VLAN_TAGS && l2Len + VLAN_HDR_LEN <= len) {
    // The tag's own ethertype sits after its TCI, i.e. in its last 2 bytes.
    type = be16(u8, off + l2Len + 2);
    l2Len += VLAN_HDR_LEN;
    tags++;
  }
  info.ethertype = type;
  info.vlanTags = tags;
  info.l2Len = l2Len;
  if (type === ETHER_TYPE_VLAN || type === ETHER_TYPE_QINQ) return PARSED_L2; // tags deeper than we skip, or cut short

  const l3 = off + l2Len;
  const room = end - l3;
  let l3Len: number;
  let dgram: number;
  if (type === ETHER_TYPE_IPV4) {
    if (room < IPV4_HDR_LEN || ipVersion(u8, l3) !== 4) return PARSED_L2;
    l3Len = ipv4HdrLen(u8, l3);
    const total = ipv4TotalLen(u8, l3);
    if (l3Len < IPV4_HDR_LEN || l3Len > room || total < l3Len) return PARSED_L2;
    info.l4Proto = ipv4Proto(u8, l3);
    const frag = be16(u8, l3 + IPV4_FRAG_OFF);
    info.ipFrag = (frag & (IPV4_HDR_MF_FLAG | IPV4_HDR_OFFSET_MASK)) !== 0;
    dgram = total - l3Len;
    info.l3Complete = total <= room;
    info.l3Off = l3;
    info.l3Len = l3Len;
    info.l4DgramLen = dgram;
    // Only the first fragment carries the L4 header.
    if ((frag & IPV4_HDR_OFFSET_MASK) !== 0) return PARSED_L3;
  } else if (type === ETHER_TYPE_IPV6) {
    if (room < IPV6_HDR_LEN || ipVersion(u8, l3) !== 6) return PARSED_L2;
    l3Len = IPV6_HDR_LEN;
    dgram = ipv6PayloadLen(u8, l3);
    info.l4Proto = ipv6NextHdr(u8, l3);
    info.l3Complete = IPV6_HDR_LEN + dgram <= room;
    info.l3Off = l3;
    info.l3Len = l3Len;
    info.l4DgramLen = dgram;
  } else if (type === ETHER_TYPE_ARP) {
    if (room < ARP_HDR_LEN) return PARSED_L2;
    info.l3Off = l3;
    info.l3Len = ARP_HDR_LEN;
    return PARSED_L3;
  } else {
    return PARSED_L2;
  }

  const l4 = l3 + l3Len;
  // The L4 header must fit both the bytes we have and the datagram's own length.
  const l4Room = Math.min(end - l4, dgram);
  let l4Len: number;
  switch (info.l4Proto) {
    case IPPROTO_UDP:
      l4Len = UDP_HDR_LEN;
      break;
    case IPPROTO_TCP:
      if (l4Room < TCP_HDR_LEN) return PARSED_L3;
      l4Len = tcpHdrLen(u8, l4);
      if (l4Len < TCP_HDR_LEN) return PARSED_L3;
      break;
    case IPPROTO_ICMP:
    case IPPROTO_ICMPV6:
      l4Len = ICMP_HDR_LEN;
      break;
    default:
      return PARSED_L3;
  }
  if (l4Len > l4Room) return PARSED_L3;
  info.l4Off = l4;
  info.l4Len = l4Len;
  return PARSED_L4;
}
