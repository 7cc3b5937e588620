// The header parse of parseHeaders (headers.ts) for kernels, branch for
// branch: every length is checked against the bytes there are before a byte
// is read, so nothing outside the packet is touched. Used by the 5tswap and
// csum engine kernels (src/fwd/5tswap.as.ts, src/fwd/csum.as.ts).

export const ETHER_HDR_LEN: u32 = 14;
export const ETHER_TYPE_IPV4: u32 = 0x0800;
export const ETHER_TYPE_IPV6: u32 = 0x86dd;
const ETHER_TYPE_VLAN: u32 = 0x8100;
const ETHER_TYPE_QINQ: u32 = 0x88a8;
/** EtherTypes as a little-endian u16 load of the wire's bytes reads them (0x0800 is bytes 08 00): a kernel that loads the type itself compares it so, with no byte swap. */
export const ETHER_TYPE_IPV4_LE: u32 = 0x0008;
export const ETHER_TYPE_IPV6_LE: u32 = 0xdd86;
export const ETHER_TYPE_VLAN_LE: u32 = 0x0081;
export const ETHER_TYPE_QINQ_LE: u32 = 0xa888;
const VLAN_HDR_LEN: u32 = 4;
const MAX_VLAN_TAGS: u32 = 2;
export const IPV4_HDR_LEN: u32 = 20;
export const IPV4_HDR_OFFSET_MASK: u32 = 0x1fff;
export const IPV4_HDR_MF_FLAG: u32 = 0x2000;
export const IPV6_HDR_LEN: u32 = 40;
export const IPPROTO_TCP: u32 = 6;
export const IPPROTO_UDP: u32 = 17;
const UDP_HDR_LEN: u32 = 8;
const TCP_HDR_LEN: u32 = 20;

/** Big-endian u16 at heap offset `p`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function loadBe16(p: u32): u32 {
  return (<u32>load<u8>(p) << 8) | <u32>load<u8>(p, 1);
}

/** Swaps the Ethernet destination and source at `p` (etherAddrSwap). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function etherAddrSwap(p: u32): void {
  const d0 = load<u32>(p);
  const d1 = load<u16>(p, 4);
  store<u32>(p, load<u32>(p, 6));
  store<u16>(p, load<u16>(p, 10), 4);
  store<u32>(p, d0, 6);
  store<u16>(p, d1, 10);
}

/**
 * The UDP or TCP header length at `l4` when that header fits the `l4Room`
 * bytes the packet and its IP length allow (TCP: a data offset of at least
 * 5 words that fits), as parseHeaders decides it; 0 for other protocols and
 * headers that do not fit.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function l4HdrLen(l4: u32, proto: u32, l4Room: u32): u32 {
  let len: u32;
  if (proto == IPPROTO_UDP) {
    len = UDP_HDR_LEN;
  } else if (proto == IPPROTO_TCP) {
    if (l4Room < TCP_HDR_LEN) return 0;
    len = (<u32>load<u8>(l4, 12) & 0xf0) >> 2;
    if (len < TCP_HDR_LEN) return 0;
  } else {
    return 0;
  }
  return len > l4Room ? 0 : len;
}

/**
 * Skips up to MAX_VLAN_TAGS VLAN / QinQ tags after the Ethernet header at
 * `p` (`len` bytes, at least ETHER_HDR_LEN), as parseHeaders does.
 * @returns the L2 length in the low 16 bits and the ethertype after the tags above them.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function etherSkipTags(p: u32, len: u32): u32 {
  // The untagged frame first, in one test: the type as a little-endian load
  // reads it against the tags' byte-swapped types (each factor is 0 only for
  // its type, and the product fits 32 bits), where the loop's condition is a
  // compare and branch per term in V8's code.
  const t = <u32>load<u16>(p, 12);
  if ((t ^ ETHER_TYPE_VLAN_LE) * (t ^ ETHER_TYPE_QINQ_LE) != 0) return ETHER_HDR_LEN | (((t & 0xff) << 24) | ((t & 0xff00) << 8));
  let l2Len = ETHER_HDR_LEN;
  let type = loadBe16(p + 12);
  let tags: u32 = 0;
  while ((type == ETHER_TYPE_VLAN || type == ETHER_TYPE_QINQ) && tags < MAX_VLAN_TAGS && l2Len + VLAN_HDR_LEN <= len) {
    type = loadBe16(p + l2Len + 2);
    l2Len += VLAN_HDR_LEN;
    tags++;
  }
  return l2Len | (type << 16);
}
