// l3fwd's per-burst forward (twin: l3fwdTwin in l3fwd.twin.ts): for each
// packet, DPDK's l3fwd_lpm_simple_forward / l3fwd_em_simple_forward with
// DO_RFC_1812_CHECKS: drop a frame longer than the rx port's MTU allows (as
// the NIC would), and what is neither a valid IPv4 packet (is_valid_ipv4_pkt,
// plus the header checksum the NIC would check and TTL <= 1, RFC 1812
// 5.3.1) nor an IPv6 one (version 6, hop limit > 1); look the destination
// port up (LPM: destination address; EM: the 5-tuple) in the family's
// table, fall back to the rx port when the lookup misses or names a port
// not enabled, decrement the TTL and patch the checksum as DPDK does
// (`++hdr_checksum` on the little-endian word: +0x0100 with end-around
// carry) or decrement the hop limit (which DPDK 22.11 leaves as it is),
// write the port's MACs and append the packet to the port's tx buffer. `s`
// is the lcore's block (l3fwd.record.ts).
import { hashData, hashFind, hashKey16, hashKeyAt } from '../../hash/hash.as';
import { HASH_INIT_VAL } from '../../hash/hash-layout.as';
import { mtod } from '../../mem/mbuf.as';
import { MBUF_SHIFT, M_DATA_LEN, M_PKT_LEN } from '../../mem/mbuf-layout.as';
import { lpmEntry } from '../../lpm/lpm.as';
import { LPM_NEXT_HOP_MASK, LPM_TBL24, LPM_TBL8, LPM_VALID } from '../../lpm/lpm-layout.as';
import { lpm6Find } from '../../lpm/lpm6.as';
import { LPM6_TBL24, LPM6_TBL8 } from '../../lpm/lpm6-layout.as';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4_LE, ETHER_TYPE_IPV6_LE, IPV4_HDR_LEN, IPV6_HDR_LEN, loadBe16 } from '../../net/headers.as';
import {
  L3L_BAD_PACKETS,
  L3L_DROPS,
  L3L_FLAGS,
  L3L_FLAG_EM,
  L3L_HASHES,
  L3L_HASH_BURST,
  L3L_KEY,
  L3L_KEY6,
  L3L_MAC,
  L3L_MAX_LEN,
  L3L_MAX_PORTS,
  L3L_NB_DROPS,
  L3L_PORT_MASK,
  L3L_RX_PACKETS,
  L3L_RX_OVERSIZE,
  L3L_RX_PORT,
  L3L_TABLE,
  L3L_TABLE6,
  L3L_TX_BUFS,
  L3L_TX_BUF_LEN,
  L3L_TX_LEN,
} from './l3fwd-layout.as';

/** is_valid_ipv4_pkt, the header checksum and the TTL: the IPv4 header at `ip` in a frame of `len` bytes may be forwarded. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function l3fwdValidIpv4(ip: u32, len: u32): bool {
  if (len < ETHER_HDR_LEN + IPV4_HDR_LEN) return false;
  const w0 = load<u32>(ip);
  if ((w0 & 0xff) == 0x45) {
    // No options, the common header: its five words summed unrolled, the
    // checks or-ed into one test (V8 makes each || a compare and branch).
    const w2 = load<u32>(ip, 8);
    let sum: u64 = <u64>w0 + <u64>load<u32>(ip, 4) + <u64>w2 + <u64>load<u32>(ip, 12) + <u64>load<u32>(ip, 16);
    sum = (sum & 0xffffffff) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    const total = ((w0 >> 8) & 0xff00) | (w0 >>> 24);
    // A total length under 20 or a TTL under 2 wraps its difference into the sign bit.
    return (((total - IPV4_HDR_LEN) | ((w2 & 0xff) - 2)) >>> 31 | (<u32>sum ^ 0xffff)) == 0;
  }
  const vihl = w0 & 0xff;
  const hl = (vihl & 0xf) << 2;
  if (vihl >> 4 != 4 || hl < IPV4_HDR_LEN || hl > len - ETHER_HDR_LEN) return false;
  if (loadBe16(ip + 2) < IPV4_HDR_LEN || load<u8>(ip, 8) <= 1) return false;
  // The ones' complement sum in the words' own byte order (RFC 1071: the sum
  // of swapped words is the swapped sum, and 0xffff is its own swap), 4 bytes
  // at a time: hl is a multiple of 4.
  let sum: u64 = 0;
  for (let i: u32 = 0; i < hl; i += 4) sum += <u64>load<u32>(ip + i);
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

/** An IPv6 header at `ip` in a frame of `len` bytes may be forwarded: version 6, hop limit > 1. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function l3fwdValidIpv6(ip: u32, len: u32): bool {
  return len >= ETHER_HDR_LEN + IPV6_HDR_LEN && load<u8>(ip) >> 4 == 6 && load<u8>(ip, 7) > 1;
}

/** ipv4_5tuple_host: the 16 bytes from the TTL of the IPv4 header at `ip`, TTL and checksum masked out. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function emKey4(ip: u32): v128 {
  return v128.and(v128.load(ip, 8), i32x4(0xff00, -1, -1, -1));
}

/** ipv6_5tuple_host into the 48 bytes at `key6`: from the payload length, all of the first 4 but the protocol masked out, then 8 zero bytes. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function emKey6(ip: u32, key6: u32): void {
  v128.store(key6, v128.and(v128.load(ip, 4), i32x4(0xff0000, -1, -1, -1)));
  v128.store(key6, v128.load(ip, 20), 16);
  v128.store(key6, v128.and(v128.load(ip, 36), i32x4(-1, -1, 0, 0)), 32);
}

/**
 * EM's first pass over packets lo..hi-1 of `burst`: each one's key hash into
 * L3L_HASHES (0 for a packet that is no IP, or whose family has no table:
 * it is never read). Apart from the searches, as the hash table's bulk
 * lookup is: the searches then depend on no hashing, and the CPU has several
 * packets' bucket loads in flight.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function emHashes(s: u32, table: u32, table6: u32, burst: u32, lo: u32, hi: u32): void {
  const init = table != 0 ? load<u32>(table, HASH_INIT_VAL) : 0;
  const init6 = table6 != 0 ? load<u32>(table6, HASH_INIT_VAL) : 0;
  const key6 = s + L3L_KEY6;
  for (let i = lo; i < hi; i++) {
    // The buffer holds an Ethernet header and the keys' bytes whatever the frame's length; a short frame's hash is never read.
    const l2 = mtod(load<u32>(burst + (i << 2)) << MBUF_SHIFT);
    const type = <u32>load<u16>(l2, 12);
    let hash: u32 = 0;
    if (type == ETHER_TYPE_IPV4_LE && table != 0) {
      const k = emKey4(l2 + ETHER_HDR_LEN);
      hash = hashKey16(<u64>i64x2.extract_lane(k, 0), <u64>i64x2.extract_lane(k, 1), init);
    } else if (type == ETHER_TYPE_IPV6_LE && table6 != 0) {
      emKey6(l2 + ETHER_HDR_LEN, key6);
      hash = hashKeyAt(key6, 48, init6);
    }
    store<u32>(s + L3L_HASHES + ((i - lo) << 2), hash);
  }
}

/**
 * Forwards the `n` packets of `burst`: each lands in its port's tx buffer or
 * in the drop list (L3L_NB_DROPS says how many). Returns the drop count.
 * EM hashes L3L_HASH_BURST packets in a first pass (emHashes), then routes them.
 */
export function l3fwdRoute(s: u32, burst: u32, n: u32): u32 {
  const table = load<u32>(s, L3L_TABLE);
  const table6 = load<u32>(s, L3L_TABLE6);
  const em = (load<u32>(s, L3L_FLAGS) & L3L_FLAG_EM) != 0;
  const mask = load<u32>(s, L3L_PORT_MASK);
  const rxPort = load<u32>(s, L3L_RX_PORT);
  const maxLen = load<u32>(s + L3L_MAX_LEN + (rxPort << 2));
  const drops = load<u32>(s, L3L_DROPS);
  const bufs = load<u32>(s, L3L_TX_BUFS);
  const tbl24 = load<u32>(table, LPM_TBL24);
  const tbl8 = load<u32>(table, LPM_TBL8);
  const tbl24v6 = load<u32>(table6, LPM6_TBL24);
  const tbl8v6 = load<u32>(table6, LPM6_TBL8);
  const key = s + L3L_KEY;
  const key6 = s + L3L_KEY6;
  let nd: u32 = 0;
  let over: u32 = 0;
  for (let lo: u32 = 0; lo < n; lo += L3L_HASH_BURST) {
    const hi = min(n, lo + L3L_HASH_BURST);
    if (em) emHashes(s, table, table6, burst, lo, hi);
    for (let i = lo; i < hi; i++) {
      const h = load<u32>(burst + (i << 2));
      const r = h << MBUF_SHIFT;
      const l2 = mtod(r);
      const len = <u32>load<u16>(r, M_DATA_LEN);
      const ip = l2 + ETHER_HDR_LEN;
      const type = len < ETHER_HDR_LEN ? 0 : <u32>load<u16>(l2, 12);
      const v4 = type == ETHER_TYPE_IPV4_LE;
      const big = load<u32>(r, M_PKT_LEN) > maxLen;
      if (big) over++;
      if (big || !(v4 ? l3fwdValidIpv4(ip, len) : type == ETHER_TYPE_IPV6_LE && l3fwdValidIpv6(ip, len))) {
        store<u32>(drops + (nd << 2), h);
        nd++;
        continue;
      }
      let port = rxPort;
      if (v4) {
        if (em) {
          if (table != 0) {
            v128.store(key, emKey4(ip));
            const pos = hashFind(table, key, load<u32>(s + L3L_HASHES + ((i - lo) << 2)));
            if (pos >= 0) port = hashData(table, pos);
          }
        } else {
          const e = lpmEntry(tbl24, tbl8, bswap<u32>(load<u32>(ip, 16)));
          if (e & LPM_VALID) port = e & LPM_NEXT_HOP_MASK;
        }
        store<u8>(ip, load<u8>(ip, 8) - 1, 8);
        store<u16>(ip, load<u16>(ip, 10) + 1, 10);
      } else {
        if (table6 != 0) {
          if (em) {
            emKey6(ip, key6);
            const pos = hashFind(table6, key6, load<u32>(s + L3L_HASHES + ((i - lo) << 2)));
            if (pos >= 0) port = hashData(table6, pos);
          } else {
            const hop = lpm6Find(tbl24v6, tbl8v6, ip + 24);
            if (hop >= 0) port = <u32>hop;
          }
        }
        store<u8>(ip, load<u8>(ip, 7) - 1, 7);
      }
      if (port >= L3L_MAX_PORTS || ((mask >> port) & 1) == 0) port = rxPort;
      const mac = s + L3L_MAC + (port << 4);
      store<u64>(l2, load<u64>(mac));
      store<u32>(l2, load<u32>(mac, 8), 8);
      const lenAt = s + L3L_TX_LEN + (port << 2);
      const k = load<u32>(lenAt);
      store<u32>(bufs + ((port * L3L_TX_BUF_LEN + k) << 2), h);
      store<u32>(lenAt, k + 1);
    }
  }
  store<f64>(s, load<f64>(s, L3L_RX_PACKETS) + <f64>n, L3L_RX_PACKETS);
  store<f64>(s, load<f64>(s, L3L_BAD_PACKETS) + <f64>(nd - over), L3L_BAD_PACKETS);
  store<f64>(s, load<f64>(s, L3L_RX_OVERSIZE) + <f64>over, L3L_RX_OVERSIZE);
  store<u32>(s, nd, L3L_NB_DROPS);
  return nd;
}
