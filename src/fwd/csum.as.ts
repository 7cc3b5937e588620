// csum's kernel (twin: csumTwin in csum.twin.ts). The parse is
// parseHeaders' (src/net/headers.ts, in kernels src/net/headers.as.ts); the
// sums are those of src/net/checksum.ts: big-endian 16-bit words, an odd
// last byte as its word's high byte, folded with end-around carry at the
// end. Every byte summed lies in the packet's first segment (l3Complete is
// checked first). `s` is the stream's block (fwd.record.ts: its address
// words, its counters, its engine's block), `lc` the lcore block (unused),
// `burst` a burst's heap offset.
import { mtod } from '../mem/mbuf.as';
import {
  MBUF_SHIFT,
  M_DATA_LEN,
  M_OL_FLAGS,
  M_OL_FLAGS_HI,
  M_TSO_SEGSZ,
  M_TX_OFFLOAD,
  OL_HI_TX_IPV4,
  OL_HI_TX_IPV6,
  OL_RX_IP_CKSUM_BAD,
  OL_RX_IP_CKSUM_GOOD,
  OL_RX_L4_CKSUM_BAD,
  OL_RX_L4_CKSUM_GOOD,
} from '../mem/mbuf-layout.as';
import {
  ETHER_HDR_LEN,
  ETHER_TYPE_IPV4,
  ETHER_TYPE_IPV6,
  IPPROTO_UDP,
  IPV4_HDR_LEN,
  IPV4_HDR_MF_FLAG,
  IPV4_HDR_OFFSET_MASK,
  IPV6_HDR_LEN,
  etherSkipTags,
  l4HdrLen,
  loadBe16,
} from '../net/headers.as';
import { FS_STAT_RX_BAD_IP_CSUM, FS_STAT_RX_BAD_L4_CSUM, FWDE_FLAGS, FWDE_F_CSUM_NO_MAC, FWDE_KEEP_HI, FWDS_ENGINE, FWDS_MAC, FWDS_STATS } from './fwd-layout.as';

const IP_CKSUM_MASK: u32 = OL_RX_IP_CKSUM_BAD | OL_RX_IP_CKSUM_GOOD;
const L4_CKSUM_MASK: u32 = OL_RX_L4_CKSUM_BAD | OL_RX_L4_CKSUM_GOOD;
const UDP_CKSUM: u32 = 6;
const TCP_CKSUM: u32 = 16;
const IPV4_CKSUM: u32 = 10;

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
 * does (the MACs already written), with rx checksum status `ipStatus` and
 * `l4Status` (the packet's masked rx flags). Returns its tx_offload word
 * (l2Len byte 0, l4Len byte 1, l3Len bytes 2..3) in the low 32 bits, the
 * bad-arrival counts from software verification and the tx flags packed
 * above: bit 32 bad IP, bit 33 bad L4, bit 34 TX_IPV4, bit 35 TX_IPV6.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function csumOne(p: u32, len: u32, ipStatus: u32, l4Status: u32): u64 {
  if (len < ETHER_HDR_LEN) return 0;
  const l2 = etherSkipTags(p, len);
  const l2Len = l2 & 0xffff;
  const type = l2 >>> 16;
  if (type != ETHER_TYPE_IPV4 && type != ETHER_TYPE_IPV6) return <u64>l2Len;

  const l3 = p + l2Len;
  const room = len - l2Len;
  let l3Len: u32;
  let dgram: u32;
  let proto: u32;
  let complete: bool;
  let frag: bool = false;
  let bad: u64 = 0;
  let flags: u64;
  const v4 = type == ETHER_TYPE_IPV4;
  if (v4) {
    if (room < IPV4_HDR_LEN || load<u8>(l3) >> 4 != 4) return <u64>l2Len;
    l3Len = (<u32>load<u8>(l3) & 0x0f) << 2;
    const total = loadBe16(l3 + 2);
    if (l3Len < IPV4_HDR_LEN || l3Len > room || total < l3Len) return <u64>l2Len;
    proto = load<u8>(l3, 9);
    const f = loadBe16(l3 + 6);
    frag = (f & (IPV4_HDR_MF_FLAG | IPV4_HDR_OFFSET_MASK)) != 0;
    dgram = total - l3Len;
    complete = total <= room;
    flags = (<u64>1) << 34;
    // The header checksum: checked (status unknown), then set.
    const head = sumAdd(l3, IPV4_CKSUM, 0);
    const rest = sumAdd(l3 + IPV4_CKSUM + 2, l3Len - IPV4_CKSUM - 2, 0);
    if (ipStatus == 0 && sumFold(head + rest + <u64>loadBe16(l3 + IPV4_CKSUM)) != 0xffff) bad |= 1;
    setBe16(l3 + IPV4_CKSUM, ~sumFold(head + rest) & 0xffff);
    // Only the first fragment carries the L4 header.
    if ((f & IPV4_HDR_OFFSET_MASK) != 0) return (<u64>(l2Len | (l3Len << 16))) | (bad << 32) | flags;
  } else {
    if (room < IPV6_HDR_LEN || load<u8>(l3) >> 4 != 6) return <u64>l2Len;
    l3Len = IPV6_HDR_LEN;
    dgram = loadBe16(l3 + 4);
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
    const udp = proto == IPPROTO_UDP;
    const ck = udp ? UDP_CKSUM : TCP_CKSUM;
    const old = loadBe16(l4 + ck);
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
 * csum: for each packet, write the 12 address bytes (peer, then tx port)
 * when it holds an Ethernet header (unless the engine's FWDE_F_CSUM_NO_MAC
 * says `mac-swap off`), count bad arrivals from the rx flags
 * and, when they say nothing, by verifying in software, recompute the IPv4
 * header and UDP/TCP checksums, then set the tx fields (rx flags cleared,
 * TX_IPV4 / TX_IPV6, parsed lengths, tso_segsz 0). The counts are added to
 * the stream's counters.
 */
export function csum(s: u32, lc: u32, burst: u32, n: u32): void {
  const e = load<u32>(s, FWDS_ENGINE);
  const keepHi = load<u32>(e, FWDE_KEEP_HI);
  const macLen: u32 = load<u32>(e, FWDE_FLAGS) & FWDE_F_CSUM_NO_MAC ? 0xffffffff : ETHER_HDR_LEN;
  const w0 = load<u32>(s, FWDS_MAC);
  const w1 = load<u32>(s, FWDS_MAC + 4);
  const w2 = load<u32>(s, FWDS_MAC + 8);
  let badIp: u32 = 0;
  let badL4: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const p = mtod(r);
    const len = <u32>load<u16>(r, M_DATA_LEN);
    const rx = load<u32>(r, M_OL_FLAGS);
    const ipStatus = rx & IP_CKSUM_MASK;
    const l4Status = rx & L4_CKSUM_MASK;
    if (ipStatus == OL_RX_IP_CKSUM_BAD) badIp++;
    if (l4Status == OL_RX_L4_CKSUM_BAD) badL4++;
    if (len >= macLen) {
      store<u32>(p, w0);
      store<u32>(p, w1, 4);
      store<u32>(p, w2, 8);
    }
    const res = csumOne(p, len, ipStatus, l4Status);
    const hi = <u32>(res >> 32);
    badIp += hi & 1;
    badL4 += (hi >> 1) & 1;
    let txFlags: u32 = load<u32>(r, M_OL_FLAGS_HI) & keepHi;
    if (hi & 4) txFlags |= OL_HI_TX_IPV4;
    if (hi & 8) txFlags |= OL_HI_TX_IPV6;
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, txFlags, M_OL_FLAGS_HI);
    store<u32>(r, <u32>res, M_TX_OFFLOAD);
    store<u16>(r, 0, M_TSO_SEGSZ);
  }
  const stats = load<u32>(s, FWDS_STATS);
  if (badIp > 0) store<f64>(stats, load<f64>(stats, FS_STAT_RX_BAD_IP_CSUM) + <f64>badIp, FS_STAT_RX_BAD_IP_CSUM);
  if (badL4 > 0) store<f64>(stats, load<f64>(stats, FS_STAT_RX_BAD_L4_CSUM) + <f64>badL4, FS_STAT_RX_BAD_L4_CSUM);
}
