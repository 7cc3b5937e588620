// Per-burst work of drivers and forwarding engines on packet metadata and
// headers: one call per burst, in place in the shared heap. Each has a
// TypeScript twin in the module that calls it (see the comments).
import { copyBytes } from '../../mem/copy.as';
import {
  MBUF_SHIFT,
  M_BUF_ADDR,
  M_BUF_LEN,
  M_DATA_LEN,
  M_DATA_OFF,
  M_OL_FLAGS,
  M_OL_FLAGS_HI,
  M_PKT_LEN,
  M_TSO_SEGSZ,
  M_TX_OFFLOAD,
  M_VLAN_TCI,
  M_VLAN_TCI_OUTER,
} from '../../mem/mbuf-layout.as';

// The memory layer's mbufPktLenSum under its old name, for net_vhost's byte
// counters (src/drivers/burst-bytes.ts) until they use Mbufs.pktLenSum.
export { mbufPktLenSum as pktLenSum } from '../../mem/mbuf.as';

// ---- macswap, in the variants of the SIMD macswap study ------------------
// Every variant leaves the same bytes and metadata (test/kernels compares
// them with the TypeScript twin in fwd/macswap.ts); they differ only in the
// order of the work, which is what DPDK's SSE macswap patches measured:
//   simd            load, shuffle, store per packet; offload fields after
//   simd-ofl        offload fields first (their second step: the mbuf's line
//                   while the packet's line loads)
//   simd-interleave 4 packets at a time: 4 loads interleaved with 4 field
//                   sets, then 4 shuffles, then 4 stores (their third step)
// A packet with fewer than 16 bytes of buffer after its data start takes a
// 12-byte scalar swap, so a vector store never leaves the buffer.

/** The mbuf_field_set of do_macswap: rx flags cleared, tx flags, l2/l3 lengths 14/20 (l4 kept), VLAN ids when asked. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function fieldSet(r: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  store<u32>(r, 0, M_OL_FLAGS);
  store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
  store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & 0xff00) | 14 | (20 << 16), M_TX_OFFLOAD);
  if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
  if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
}

/** Heap offset of the packet data of record `r`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function dataAddr(r: u32): u32 {
  return load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
}

/** At least 16 bytes of buffer from the data start: a 16-byte vector store stays inside. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function roomy(r: u32): bool {
  return <u32>load<u16>(r, M_BUF_LEN) - <u32>load<u16>(r, M_DATA_OFF) >= 16;
}

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swapScalar(p: u32): void {
  const d0 = load<u32>(p);
  const d1 = load<u16>(p, 4);
  store<u32>(p, load<u32>(p, 6));
  store<u16>(p, load<u16>(p, 10), 4);
  store<u32>(p, d0, 6);
  store<u16>(p, d1, 10);
}

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swapVector(p: u32): void {
  const v = v128.load(p);
  v128.store(p, i8x16.shuffle(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
}

/** Swaps one packet's addresses: vector when there is room, else scalar. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swap(r: u32): void {
  const p = dataAddr(r);
  if (roomy(r)) swapVector(p);
  else swapScalar(p);
}

/** macswap, variant simd: DPDK's SSE macswap as it was before the study's patches. */
export function macswap(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    swap(r);
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
  }
}

/** macswap, variant simd-ofl: offload fields before the header work (the study's second step). */
export function macswapOfl(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    swap(r);
  }
}

/** macswap, variant simd-interleave: four packets at a time, loads, shuffles and stores interleaved (the study's third step). */
export function macswapInterleave(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  let i: u32 = 0;
  for (; i + 4 <= n; i += 4) {
    const r0 = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const r1 = load<u32>(objs + ((i + 1) << 2)) << MBUF_SHIFT;
    const r2 = load<u32>(objs + ((i + 2) << 2)) << MBUF_SHIFT;
    const r3 = load<u32>(objs + ((i + 3) << 2)) << MBUF_SHIFT;
    if (!(roomy(r0) && roomy(r1) && roomy(r2) && roomy(r3))) {
      // A short buffer tail among the four: do them one by one.
      for (let k: u32 = 0; k < 4; k++) {
        const r = load<u32>(objs + ((i + k) << 2)) << MBUF_SHIFT;
        swap(r);
        fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
      }
      continue;
    }
    const p0 = dataAddr(r0);
    const p1 = dataAddr(r1);
    const p2 = dataAddr(r2);
    const p3 = dataAddr(r3);
    const a0 = v128.load(p0);
    fieldSet(r0, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const a1 = v128.load(p1);
    fieldSet(r1, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s0 = i8x16.shuffle(a0, a0, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const a2 = v128.load(p2);
    fieldSet(r2, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s1 = i8x16.shuffle(a1, a1, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const a3 = v128.load(p3);
    fieldSet(r3, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s2 = i8x16.shuffle(a2, a2, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const s3 = i8x16.shuffle(a3, a3, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    v128.store(p0, s0);
    v128.store(p1, s1);
    v128.store(p2, s2);
    v128.store(p3, s3);
  }
  for (; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    swap(r);
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
  }
}

/**
 * mac (twin: fwd/mac.ts): write the 12 address bytes (peer, then tx port)
 * given as three little-endian words, then the tx fields as macfwd does
 * (VLAN ids set on every packet).
 */
export function macFwd(objs: u32, n: u32, w0: u32, w1: u32, w2: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const p = load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
    store<u32>(p, w0);
    store<u32>(p, w1, 4);
    store<u32>(p, w2, 8);
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
    store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & 0xff00) | 14 | (20 << 16), M_TX_OFFLOAD);
    store<u16>(r, <u16>vlan, M_VLAN_TCI);
    store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
  }
}

/**
 * txonly, single-segment packets (twin: fwd/txonly.ts): for each freshly
 * allocated mbuf, set its lengths and tx fields and copy the 42-byte
 * Ethernet/IPv4/UDP header from the template at `tmpl` (48 readable bytes).
 * With `multiFlow`, the IPv4 source becomes (dst | var << 8) + lcore and the
 * header checksum is finished from `sumNoSrc` (the header's sum without the
 * source and checksum fields).
 * Returns the next value of the 8-bit flow variable.
 */
export function txonlyFill(
  objs: u32,
  n: u32,
  tmpl: u32,
  pktLen: u32,
  olHi: u32,
  setVlan: u32,
  vlan: u32,
  setQinq: u32,
  vlanOuter: u32,
  multiFlow: u32,
  ipDst: u32,
  ipVar: u32,
  lcore: u32,
  sumNoSrc: u32,
): u32 {
  const t0 = v128.load(tmpl);
  const t1 = v128.load(tmpl, 16);
  const t2 = load<u64>(tmpl, 32);
  const t3 = load<u16>(tmpl, 40);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    store<u16>(r, <u16>pktLen, M_DATA_LEN);
    store<u32>(r, pktLen, M_PKT_LEN);
    store<u32>(r, olHi, M_OL_FLAGS_HI);
    store<u32>(r, 14 | (20 << 16), M_TX_OFFLOAD);
    if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
    if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
    const p = load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
    v128.store(p, t0);
    v128.store(p, t1, 16);
    store<u64>(p, t2, 32);
    store<u16>(p, t3, 40);
    if (multiFlow) {
      const src = (ipDst | ((ipVar & 0xff) << 8)) + lcore;
      ipVar = (ipVar + 1) & 0xff;
      store<u32>(p, bswap<u32>(src), 26);
      let sum = sumNoSrc + (src >>> 16) + (src & 0xffff);
      sum = (sum & 0xffff) + (sum >>> 16);
      sum = (sum & 0xffff) + (sum >>> 16);
      store<u16>(p, bswap<u16>(<u16>(~sum & 0xffff)), 24);
    }
  }
  return ipVar;
}

// ---- 5tswap (twin: fwd/5tswap.ts) ----------------------------------------
// The parse is parseHeaders' (src/net/headers.ts), branch for branch: every
// length is checked against the first segment's dataLen and the IP length
// fields before a byte is read, so nothing outside the packet is touched.

const ETH_HDR_LEN: u32 = 14;
const ETH_TYPE_IPV4: u32 = 0x0800;
const ETH_TYPE_IPV6: u32 = 0x86dd;
const ETH_TYPE_VLAN: u32 = 0x8100;
const ETH_TYPE_QINQ: u32 = 0x88a8;
const VLAN_HDR_LEN: u32 = 4;
const MAX_VLAN_TAGS: u32 = 2;
const IPV4_HDR_LEN: u32 = 20;
const IPV4_OFFSET_MASK: u32 = 0x1fff;
const IPV6_HDR_LEN: u32 = 40;
const PROTO_TCP: u32 = 6;
const PROTO_UDP: u32 = 17;
const UDP_HDR_LEN: u32 = 8;
const TCP_HDR_LEN: u32 = 20;

/** Big-endian u16 at heap offset `p`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function be16(p: u32): u32 {
  return (<u32>load<u8>(p) << 8) | <u32>load<u8>(p, 1);
}

/**
 * The UDP or TCP header length at `l4` when that header fits the `l4Room`
 * bytes the packet and its IP length allow (TCP: a data offset of at least
 * 5 words that fits), as parseHeaders decides it; 0 for other protocols and
 * headers that do not fit.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function l4HdrLen(l4: u32, proto: u32, l4Room: u32): u32 {
  let len: u32;
  if (proto == PROTO_UDP) {
    len = UDP_HDR_LEN;
  } else if (proto == PROTO_TCP) {
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
 * `p` (`len` bytes, at least ETH_HDR_LEN), as parseHeaders does.
 * @returns the L2 length in the low 16 bits and the ethertype after the tags above them.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function skipTags(p: u32, len: u32): u32 {
  let l2Len = ETH_HDR_LEN;
  let type = be16(p + 12);
  let tags: u32 = 0;
  while ((type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ) && tags < MAX_VLAN_TAGS && l2Len + VLAN_HDR_LEN <= len) {
    type = be16(p + l2Len + 2);
    l2Len += VLAN_HDR_LEN;
    tags++;
  }
  return l2Len | (type << 16);
}

/**
 * Swaps the addresses of the packet of `len` bytes at `p` as the 5tswap
 * engine does and returns its tx_offload word: l2Len (byte 0), l4Len
 * (byte 1), l3Len (bytes 2..3), each 0 where that layer was not swapped.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function fiveTupleSwapOne(p: u32, len: u32): u32 {
  // Shorter than an Ethernet header: untouched, all lengths 0.
  if (len < ETH_HDR_LEN) return 0;
  const l2 = skipTags(p, len);
  const l2Len = l2 & 0xffff;
  const type = l2 >>> 16;
  swapScalar(p); // the Ethernet addresses
  // More tags than skipped or cut short, ARP, anything not IP: MACs only, l3Len 0.
  if (type != ETH_TYPE_IPV4 && type != ETH_TYPE_IPV6) return l2Len;

  const l3 = p + l2Len;
  const room = len - l2Len;
  let l3Len: u32;
  let dgram: u32;
  let proto: u32;
  if (type == ETH_TYPE_IPV4) {
    if (room < IPV4_HDR_LEN || load<u8>(l3) >> 4 != 4) return l2Len;
    l3Len = (<u32>load<u8>(l3) & 0x0f) << 2;
    const total = be16(l3 + 2);
    if (l3Len < IPV4_HDR_LEN || l3Len > room || total < l3Len) return l2Len;
    const a = load<u32>(l3, 12);
    store<u32>(l3, load<u32>(l3, 16), 12);
    store<u32>(l3, a, 16);
    // Only the first fragment carries the L4 header.
    if ((be16(l3 + 6) & IPV4_OFFSET_MASK) != 0) return l2Len | (l3Len << 16);
    proto = load<u8>(l3, 9);
    dgram = total - l3Len;
  } else {
    if (room < IPV6_HDR_LEN || load<u8>(l3) >> 4 != 6) return l2Len;
    l3Len = IPV6_HDR_LEN;
    dgram = be16(l3 + 4);
    proto = load<u8>(l3, 6);
    const a = v128.load(l3, 8);
    v128.store(l3, v128.load(l3, 24), 8);
    v128.store(l3, a, 24);
  }
  const word = l2Len | (l3Len << 16);

  const l4 = l3 + l3Len;
  // The L4 header must fit both the bytes there are and the datagram's own length.
  const left = room - l3Len;
  // ICMP and the rest, or a header that does not fit: addresses only, l4Len 0.
  const l4Len = l4HdrLen(l4, proto, left < dgram ? left : dgram);
  if (l4Len == 0) return word;
  const s = load<u16>(l4);
  store<u16>(l4, load<u16>(l4, 2));
  store<u16>(l4, s, 2);
  return word | (l4Len << 8);
}

/**
 * 5tswap (twin: fwd/5tswap.ts): swap the Ethernet, IPv4/IPv6 and UDP/TCP
 * source and destination of each packet, as deep as its headers parse, then
 * set the tx fields: parsed lengths, rx flags cleared, tx flags, VLAN ids
 * when asked.
 */
export function fiveTupleSwap(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    store<u32>(r, fiveTupleSwapOne(dataAddr(r), <u32>load<u16>(r, M_DATA_LEN)), M_TX_OFFLOAD);
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
    if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
    if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
  }
}

// ---- csum (twin: fwd/csum.ts) --------------------------------------------
// The parse is parseHeaders' again, branch for branch; the sums are those of
// src/net/checksum.ts: big-endian 16-bit words, an odd last byte as its
// word's high byte, folded with end-around carry at the end. Every byte
// summed lies in the packet's first segment (l3Complete is checked first).

const RX_L4_CKSUM_BAD: u32 = 1 << 3;
const RX_IP_CKSUM_BAD: u32 = 1 << 4;
const RX_IP_CKSUM_GOOD: u32 = 1 << 7;
const RX_L4_CKSUM_GOOD: u32 = 1 << 8;
const IP_CKSUM_MASK: u32 = RX_IP_CKSUM_BAD | RX_IP_CKSUM_GOOD;
const L4_CKSUM_MASK: u32 = RX_L4_CKSUM_BAD | RX_L4_CKSUM_GOOD;
const TX_IPV4: u32 = 1 << 23;
const TX_IPV6: u32 = 1 << 24;
const IPV4_MF_FLAG: u32 = 0x2000;
const UDP_CKSUM: u32 = 6;
const TCP_CKSUM: u32 = 16;
const IPV4_CKSUM: u32 = 10;
/** Stream counters FS_RX_BAD_IP_CSUM / FS_RX_BAD_L4_CSUM (engine.ts), as byte offsets from the stream's slot. */
const FS_RX_BAD_IP_CSUM_OFF: u32 = 3 * 8;
const FS_RX_BAD_L4_CSUM_OFF: u32 = 4 * 8;

/** Adds the `len` bytes at `p` to `sum` as big-endian 16-bit words (cksumAdd). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function sumAdd(p: u32, len: u32, sum: u64): u64 {
  const pairs = len & ~(<u32>1);
  let i: u32 = 0;
  for (; i < pairs; i += 2) sum += <u64>bswap<u16>(load<u16>(p + i));
  if (len & 1) sum += <u64>load<u8>(p + i) << 8;
  return sum;
}

/** Folds `sum` to 16 bits with end-around carry (cksumFold). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function sumFold(sum: u64): u32 {
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  return <u32>sum;
}

/** Stores `v` big-endian at `p`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function setBe16(p: u32, v: u32): void {
  store<u16>(p, bswap<u16>(<u16>v));
}

/**
 * Fixes the checksums of the packet of `len` bytes at `p` as the csum engine
 * does (the MACs already written), with rx checksum status `rx` (the
 * packet's masked rx flags: IP status bits, then L4 status bits). Returns
 * its tx_offload word (l2Len byte 0, l4Len byte 1, l3Len bytes 2..3) in the
 * low 32 bits, the tx flags (TX_IPV4 / TX_IPV6) and the bad-arrival counts
 * (bit 0: bad IP, bit 1: bad L4, from software verification) packed above:
 * bits 32..33 the counts, bit 34 TX_IPV4, bit 35 TX_IPV6.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function csumOne(p: u32, len: u32, ipStatus: u32, l4Status: u32): u64 {
  if (len < ETH_HDR_LEN) return 0;
  const l2 = skipTags(p, len);
  const l2Len = l2 & 0xffff;
  const type = l2 >>> 16;
  if (type != ETH_TYPE_IPV4 && type != ETH_TYPE_IPV6) return <u64>l2Len;

  const l3 = p + l2Len;
  const room = len - l2Len;
  let l3Len: u32;
  let dgram: u32;
  let proto: u32;
  let complete: bool;
  let frag: bool = false;
  let bad: u64 = 0;
  let flags: u64;
  const v4 = type == ETH_TYPE_IPV4;
  if (v4) {
    if (room < IPV4_HDR_LEN || load<u8>(l3) >> 4 != 4) return <u64>l2Len;
    l3Len = (<u32>load<u8>(l3) & 0x0f) << 2;
    const total = be16(l3 + 2);
    if (l3Len < IPV4_HDR_LEN || l3Len > room || total < l3Len) return <u64>l2Len;
    proto = load<u8>(l3, 9);
    const f = be16(l3 + 6);
    frag = (f & (IPV4_MF_FLAG | IPV4_OFFSET_MASK)) != 0;
    dgram = total - l3Len;
    complete = total <= room;
    flags = (<u64>1) << 34;
    // The header checksum: checked (status unknown), then set.
    const head = sumAdd(l3, IPV4_CKSUM, 0);
    const rest = sumAdd(l3 + IPV4_CKSUM + 2, l3Len - IPV4_CKSUM - 2, 0);
    if (ipStatus == 0 && sumFold(head + rest + <u64>be16(l3 + IPV4_CKSUM)) != 0xffff) bad |= 1;
    setBe16(l3 + IPV4_CKSUM, ~sumFold(head + rest) & 0xffff);
    // Only the first fragment carries the L4 header.
    if ((f & IPV4_OFFSET_MASK) != 0) return (<u64>(l2Len | (l3Len << 16))) | (bad << 32) | flags;
  } else {
    if (room < IPV6_HDR_LEN || load<u8>(l3) >> 4 != 6) return <u64>l2Len;
    l3Len = IPV6_HDR_LEN;
    dgram = be16(l3 + 4);
    proto = load<u8>(l3, 6);
    complete = IPV6_HDR_LEN + dgram <= room;
    flags = (<u64>1) << 35;
  }
  const word = (<u64>(l2Len | (l3Len << 16))) | flags;

  const l4 = l3 + l3Len;
  const left = room - l3Len;
  // ICMP and the rest, or a header that does not fit: no L4 checksum here.
  const l4Len = l4HdrLen(l4, proto, left < dgram ? left : dgram);
  if (l4Len == 0) return word | (bad << 32);

  if (complete && !frag) {
    const udp = proto == PROTO_UDP;
    const ck = udp ? UDP_CKSUM : TCP_CKSUM;
    const old = be16(l4 + ck);
    // IPv4 UDP with checksum 0 carries none: left as it is.
    if (!(v4 && udp && old == 0)) {
      // Pseudo-header: addresses, protocol, L4 length (dgram < 2^16).
      let sum: u64 = v4 ? sumAdd(l3 + 12, 8, 0) : sumAdd(l3 + 8, 32, 0);
      sum += <u64>proto + <u64>dgram;
      sum = sumAdd(l4, ck, sum);
      sum = sumAdd(l4 + ck + 2, dgram - ck - 2, sum);
      if (l4Status == 0) {
        // IPv6 UDP with checksum 0 is invalid (RFC 8200 §8.1).
        const ok = !(udp && old == 0) && sumFold(sum + <u64>old) == 0xffff;
        if (!ok) bad |= 2;
      }
      let c = ~sumFold(sum) & 0xffff;
      if (c == 0 && udp) c = 0xffff;
      setBe16(l4 + ck, c);
    }
  }
  return word | (<u64>(l4Len << 8)) | (bad << 32);
}

/**
 * csum (twin: fwd/csum.ts): for each packet, write the 12 address bytes
 * (peer, then tx port; three little-endian words) when it holds an Ethernet
 * header, count bad arrivals from the rx flags and, when they say nothing,
 * by verifying in software, recompute the IPv4 header and UDP/TCP
 * checksums, then set the tx fields (rx flags cleared, TX_IPV4 / TX_IPV6,
 * parsed lengths, tso_segsz 0). The counts are added to the f64 counters of
 * the stream whose slot starts at heap byte offset `stats`.
 */
export function csum(objs: u32, n: u32, w0: u32, w1: u32, w2: u32, keepHi: u32, stats: u32): void {
  let badIp: u32 = 0;
  let badL4: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const p = dataAddr(r);
    const len = <u32>load<u16>(r, M_DATA_LEN);
    const rx = load<u32>(r, M_OL_FLAGS);
    const ipStatus = rx & IP_CKSUM_MASK;
    const l4Status = rx & L4_CKSUM_MASK;
    if (ipStatus == RX_IP_CKSUM_BAD) badIp++;
    if (l4Status == RX_L4_CKSUM_BAD) badL4++;
    if (len >= ETH_HDR_LEN) {
      store<u32>(p, w0);
      store<u32>(p, w1, 4);
      store<u32>(p, w2, 8);
    }
    const res = csumOne(p, len, ipStatus, l4Status);
    const hi = <u32>(res >> 32);
    badIp += hi & 1;
    badL4 += (hi >> 1) & 1;
    let txFlags: u32 = load<u32>(r, M_OL_FLAGS_HI) & keepHi;
    if (hi & 4) txFlags |= TX_IPV4;
    if (hi & 8) txFlags |= TX_IPV6;
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, txFlags, M_OL_FLAGS_HI);
    store<u32>(r, <u32>res, M_TX_OFFLOAD);
    store<u16>(r, 0, M_TSO_SEGSZ);
  }
  if (badIp > 0) store<f64>(stats, load<f64>(stats, FS_RX_BAD_IP_CSUM_OFF) + <f64>badIp, FS_RX_BAD_IP_CSUM_OFF);
  if (badL4 > 0) store<f64>(stats, load<f64>(stats, FS_RX_BAD_L4_CSUM_OFF) + <f64>badL4, FS_RX_BAD_L4_CSUM_OFF);
}

// ---- copy list (twin: src/vhost/copy-list.ts) ---------------------------

/**
 * vhost's byte work for a burst: `count` copies described as (dst, src, len)
 * u32 triples at `list`. The addresses were checked
 * against guest memory before they were listed; this only moves bytes.
 */
export function copyList(list: u32, count: u32): void {
  for (let i: u32 = 0; i < count; i++) {
    const e = list + i * 12;
    copyBytes(load<u32>(e), load<u32>(e, 4), load<u32>(e, 8));
  }
}
