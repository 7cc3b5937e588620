/**
 * The Internet checksum (RFC 1071) in place on the heap: rte_cksum.h and the
 * checksum half of rte_ip4.h / rte_ip6.h.
 *
 * Every function takes `u8`, a Uint8Array over the whole heap, and heap byte
 * offsets, reads the bytes where they are and allocates nothing. Sums are
 * kept unfolded in a JS number (exact up to 2^53, i.e. for any region a heap
 * can hold) and folded once at the end.
 *
 * Contiguity: the L4 functions read the IP header, the L4 header and the
 * whole L4 payload from one run of bytes, so the datagram must lie in the
 * packet's first segment (check `HdrInfo.l3Complete` from parseHeaders, or
 * `off + len <= mb.mtod(h) + mb.dataLen(h)`). They trust the IP header's
 * length field; a region past the end of `u8` reads as zeros rather than
 * throwing, so a bad length gives a wrong checksum, never an exception.
 */
import {
  IPPROTO_ICMPV6,
  IPPROTO_TCP,
  IPPROTO_UDP,
  IPV4_CKSUM_OFF,
  IPV4_SRC_OFF,
  IPV6_HDR_LEN,
  IPV6_SRC_OFF,
  ICMP_CKSUM_OFF,
  TCP_CKSUM_OFF,
  UDP_CKSUM_OFF,
  ipv4HdrLen,
  ipv4Proto,
  ipv4TotalLen,
  ipv6NextHdr,
  ipv6PayloadLen,
} from './headers.js';

/**
 * Adds the bytes u8[off .. off + len) to the running sum `sum` as big-endian
 * 16-bit words (__rte_raw_cksum). An odd final byte counts as its word's high
 * byte, so only the last region of a multi-part sum may have an odd length.
 * @returns the new sum, unfolded (pass it on, then to cksumFold).
 */
export function cksumAdd(u8: Uint8Array, off: number, len: number, sum = 0): number {
  const pairs = off + (len & ~1);
  let i = off;
  for (; i < pairs; i += 2) sum += (u8[i]! << 8) | u8[i + 1]!;
  if ((len & 1) !== 0) sum += u8[i]! << 8;
  return sum;
}

/**
 * Folds an unfolded sum to 16 bits with end-around carry (__rte_raw_cksum_reduce).
 * @returns the one's-complement sum in [0, 0xffff], not complemented.
 */
export function cksumFold(sum: number): number {
  // Above 2^32 a shift would drop bits: divide first.
  if (sum > 0xffffffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/**
 * One's-complement sum of u8[off .. off + len) (rte_raw_cksum).
 * @returns the folded sum, not complemented; 0xffff over a region that
 *   includes a correct checksum field.
 */
export function rawCksum(u8: Uint8Array, off: number, len: number): number {
  return cksumFold(cksumAdd(u8, off, len, 0));
}

/**
 * Updates checksum `cksum` for one 16-bit word of the covered data changing
 * from `oldWord` to `newWord`, without resumming (RFC 1624, eqn. 3).
 * @returns the checksum to store.
 */
export function cksumAdjust(cksum: number, oldWord: number, newWord: number): number {
  return ~cksumFold((~cksum & 0xffff) + (~oldWord & 0xffff) + (newWord & 0xffff)) & 0xffff;
}

// ---- IPv4 header --------------------------------------------------------------------

/**
 * The IPv4 header checksum of the header at `l3` (IHL × 4 bytes, options
 * included), with the checksum field counted as zero whatever it holds, so
 * the caller need not clear it (rte_ipv4_cksum_simple, with options).
 * @returns the complemented checksum to store at l3 + IPV4_CKSUM_OFF.
 */
export function ipv4Cksum(u8: Uint8Array, l3: number): number {
  const len = ipv4HdrLen(u8, l3);
  const ck = l3 + IPV4_CKSUM_OFF;
  const sum = cksumAdd(u8, ck + 2, len - IPV4_CKSUM_OFF - 2, cksumAdd(u8, l3, IPV4_CKSUM_OFF, 0));
  return ~cksumFold(sum) & 0xffff;
}

/**
 * Computes and stores the IPv4 header checksum of the header at `l3`.
 * @returns the checksum stored.
 */
export function ipv4CksumSet(u8: Uint8Array, l3: number): number {
  const c = ipv4Cksum(u8, l3);
  u8[l3 + IPV4_CKSUM_OFF] = c >>> 8;
  u8[l3 + IPV4_CKSUM_OFF + 1] = c;
  return c;
}

/**
 * Checks the IPv4 header checksum of the header at `l3`.
 * @returns true when it is correct (the header sums to 0xffff), false
 *   otherwise, also for an IHL below 5.
 */
export function ipv4CksumVerify(u8: Uint8Array, l3: number): boolean {
  const len = ipv4HdrLen(u8, l3);
  return len >= 20 && rawCksum(u8, l3, len) === 0xffff;
}

// ---- pseudo-headers ---------------------------------------------------------------------

/**
 * Sum of the IPv4 pseudo-header (src, dst, zero, protocol, L4 length) for
 * the header at `l3` (rte_ipv4_phdr_cksum with no offload flags).
 * @returns the unfolded sum, to seed cksumAdd over the L4 bytes.
 */
export function ipv4PhdrSum(u8: Uint8Array, l3: number, proto: number, l4Len: number): number {
  return cksumAdd(u8, l3 + IPV4_SRC_OFF, 8, 0) + proto + l4Len;
}

/**
 * Sum of the IPv6 pseudo-header (src, dst, 32-bit upper-layer length, next
 * header) for the header at `l3` (rte_ipv6_phdr_cksum).
 * @returns the unfolded sum, to seed cksumAdd over the L4 bytes.
 */
export function ipv6PhdrSum(u8: Uint8Array, l3: number, proto: number, l4Len: number): number {
  return cksumAdd(u8, l3 + IPV6_SRC_OFF, 32, 0) + Math.floor(l4Len / 0x10000) + (l4Len & 0xffff) + proto;
}

// ---- UDP / TCP ---------------------------------------------------------------------------

/** Where the checksum field sits in the L4 header, -1 when the protocol has none we know. */
function l4CksumOff(proto: number): number {
  return proto === IPPROTO_UDP ? UDP_CKSUM_OFF : proto === IPPROTO_TCP ? TCP_CKSUM_OFF : proto === IPPROTO_ICMPV6 ? ICMP_CKSUM_OFF : -1;
}

/** Sums `len` L4 bytes at `l4` onto `sum`, the checksum field counted as zero. */
function l4SumSkippingCksum(u8: Uint8Array, l4: number, len: number, proto: number, sum: number): number {
  const ck = l4CksumOff(proto);
  if (ck < 0 || len < ck + 2) return cksumAdd(u8, l4, len, sum);
  // The field is at an even offset, so both parts stay word-aligned.
  return cksumAdd(u8, l4 + ck + 2, len - ck - 2, cksumAdd(u8, l4, ck, sum));
}

/** Complements a folded L4 sum; a UDP result of 0 goes out as 0xffff (RFC 768: 0 means "no checksum"). */
function l4Final(sum: number, proto: number): number {
  const c = ~cksumFold(sum) & 0xffff;
  return c === 0 && proto === IPPROTO_UDP ? 0xffff : c;
}

/**
 * The UDP or TCP checksum of the datagram whose IPv4 header is at `l3` and
 * L4 header at `l4`, over the pseudo-header and total length − IHL × 4 L4
 * bytes, with the L4 checksum field counted as zero whatever it holds
 * (rte_ipv4_udptcp_cksum). The datagram must be contiguous (see the module
 * comment).
 * @returns the complemented checksum to store (0xffff for a UDP sum of 0),
 *   or 0 when the total length is shorter than the IPv4 header.
 */
export function ipv4UdptcpCksum(u8: Uint8Array, l3: number, l4: number): number {
  const hl = ipv4HdrLen(u8, l3);
  const total = ipv4TotalLen(u8, l3);
  if (total < hl) return 0;
  const proto = ipv4Proto(u8, l3);
  const len = total - hl;
  return l4Final(l4SumSkippingCksum(u8, l4, len, proto, ipv4PhdrSum(u8, l3, proto, len)), proto);
}

/**
 * Checks the UDP or TCP checksum of the IPv4 datagram at `l3` / `l4`
 * (rte_ipv4_udptcp_cksum_verify). As in DPDK, a UDP checksum of 0 means "none
 * sent": the caller tests for it first; this only does the arithmetic.
 * @returns true when the pseudo-header plus L4 bytes sum to 0xffff.
 */
export function ipv4UdptcpCksumVerify(u8: Uint8Array, l3: number, l4: number): boolean {
  const hl = ipv4HdrLen(u8, l3);
  const total = ipv4TotalLen(u8, l3);
  if (total < hl) return false;
  const len = total - hl;
  return cksumFold(cksumAdd(u8, l4, len, ipv4PhdrSum(u8, l3, ipv4Proto(u8, l3), len))) === 0xffff;
}

/**
 * The UDP, TCP (or ICMPv6) checksum of the datagram whose IPv6 header is at
 * `l3` and L4 header at `l4`, over the pseudo-header and payload-length L4
 * bytes, with the L4 checksum field counted as zero (rte_ipv6_udptcp_cksum).
 * No extension headers: the next header field is the L4 protocol, and `l4`
 * is normally l3 + 40. The datagram must be contiguous.
 * @returns the complemented checksum to store (0xffff for a UDP sum of 0).
 */
export function ipv6UdptcpCksum(u8: Uint8Array, l3: number, l4: number): number {
  const proto = ipv6NextHdr(u8, l3);
  // Payload length counts from the end of the fixed header: extension bytes before l4 are not L4.
  const len = ipv6PayloadLen(u8, l3) - (l4 - l3 - IPV6_HDR_LEN);
  if (len < 0) return 0;
  return l4Final(l4SumSkippingCksum(u8, l4, len, proto, ipv6PhdrSum(u8, l3, proto, len)), proto);
}

/**
 * Checks the UDP, TCP (or ICMPv6) checksum of the IPv6 datagram at `l3` /
 * `l4` (rte_ipv6_udptcp_cksum_verify). For IPv6 a UDP checksum of 0 is not
 * allowed (RFC 8200 §8.1); the caller rejects it first, as this only does
 * the arithmetic.
 * @returns true when the pseudo-header plus L4 bytes sum to 0xffff.
 */
export function ipv6UdptcpCksumVerify(u8: Uint8Array, l3: number, l4: number): boolean {
  const len = ipv6PayloadLen(u8, l3) - (l4 - l3 - IPV6_HDR_LEN);
  if (len < 0) return false;
  return cksumFold(cksumAdd(u8, l4, len, ipv6PhdrSum(u8, l3, ipv6NextHdr(u8, l3), len))) === 0xffff;
}
