/**
 * l3fwd's per-burst forward, the wasm kernel l3fwdRoute (l3fwd.as.ts) or its
 * TypeScript twin (here, same signature), chosen once when an lcore starts
 * (`l3fwdOps`). `s` is the lcore's block (l3fwd.record.ts), `burst` a burst's
 * heap offset; the result is how many packets went to the drop list.
 */
import type { Heap } from '../../eal/heap.js';
import { Hash } from '../../hash/hash.js';
import { HASH_W_INIT_VAL } from '../../hash/hash-layout.js';
import { hashFinder, hashKeyTo } from '../../hash/hash.twin.js';
import { Lpm } from '../../lpm/lpm.js';
import { LPM6_W_TBL24, LPM6_W_TBL8 } from '../../lpm/lpm6-layout.js';
import { lpm6Find } from '../../lpm/lpm6.twin.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { ipv4CksumVerify } from '../../net/checksum.js';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4, ETHER_TYPE_IPV6 } from '../../net/ether.js';
import { IPV4_HDR_LEN, IPV6_HDR_LEN } from '../../net/headers.js';
import {
  L3L_F_BAD_PACKETS,
  L3L_FLAG_EM,
  L3L_HASH_BURST,
  L3L_W_HASHES,
  L3L_F_RX_OVERSIZE,
  L3L_F_RX_PACKETS,
  L3L_KEY,
  L3L_KEY6,
  L3L_MAC,
  L3L_MAC_STRIDE,
  L3L_MAX_PORTS,
  L3L_W_MAX_LEN,
  L3L_TX_BUF_LEN,
  L3L_W_DROPS,
  L3L_W_FLAGS,
  L3L_W_NB_DROPS,
  L3L_W_PORT_MASK,
  L3L_W_RX_PORT,
  L3L_W_TABLE,
  L3L_W_TABLE6,
  L3L_W_TX_BUFS,
  L3L_W_TX_LEN,
} from './l3fwd-layout.js';

/** l3fwdRoute's signature. @returns the packets put on the drop list */
export type L3fwdRoute = (s: number, burst: number, n: number) => number;

/** The kernel when the heap has them, else the twin. */
export function l3fwdOps(heap: Heap, mb: Mbufs): L3fwdRoute {
  const k = heap.kernels;
  return k === null ? l3fwdTwin(heap, mb) : k.fn('l3fwdRoute');
}

/** is_valid_ipv4_pkt plus the checksum and TTL checks (l3fwdValidIpv4's twin). */
export function validIpv4(u8: Uint8Array, ip: number, len: number): boolean {
  if (len < ETHER_HDR_LEN + IPV4_HDR_LEN) return false;
  const vihl = u8[ip]!;
  const hl = (vihl & 0xf) << 2;
  if (vihl >> 4 !== 4 || hl < IPV4_HDR_LEN || hl > len - ETHER_HDR_LEN) return false;
  if (((u8[ip + 2]! << 8) | u8[ip + 3]!) < IPV4_HDR_LEN || u8[ip + 8]! <= 1) return false;
  return ipv4CksumVerify(u8, ip);
}

/** l3fwdValidIpv6's twin: version 6, hop limit > 1. */
export function validIpv6(u8: Uint8Array, ip: number, len: number): boolean {
  return len >= ETHER_HDR_LEN + IPV6_HDR_LEN && u8[ip]! >> 4 === 6 && u8[ip + 7]! > 1;
}

/** ipv4_5tuple_host of the IPv4 header at `ip` of `u8` into the 16 bytes of `key` at `at`: from the TTL, TTL and checksum zeroed. */
function ipv4Key(u8: Uint8Array, ip: number, key: Uint8Array, at: number): void {
  for (let k = 0; k < 16; k++) key[at + k] = k === 0 || k === 2 || k === 3 ? 0 : u8[ip + 8 + k]!;
}

/** The IPv4 key of the packet at hand, off the heap. */
const key4 = new Uint8Array(16);

/** ipv6_5tuple_host of the IPv6 header at `ip` into the 48 bytes at `key6`: 0, 0, proto, 0, src, dst, ports, 8 zero bytes. */
function ipv6Key(u8: Uint8Array, ip: number, key6: number): void {
  for (let k = 0; k < 48; k++) u8[key6 + k] = k === 2 || (k >= 4 && k < 40) ? u8[ip + 4 + k]! : 0;
}

/** The twin: the kernel's steps, a byte at a time. */
export function l3fwdTwin(heap: Heap, mb: Mbufs): L3fwdRoute {
  const { u8, u32, f64 } = heap;
  const find = hashFinder(heap);
  // The block's tables, opened once (the block names them by offset).
  let lpm: Lpm | undefined;
  let hash: Hash | undefined;
  let hash6: Hash | undefined;
  return (s, burst, n) => {
    const sw = s >>> 2;
    const table = u32[sw + L3L_W_TABLE]!;
    const table6 = u32[sw + L3L_W_TABLE6]!;
    const em = (u32[sw + L3L_W_FLAGS]! & L3L_FLAG_EM) !== 0;
    const mask = u32[sw + L3L_W_PORT_MASK]!;
    const rxPort = u32[sw + L3L_W_RX_PORT]!;
    const maxLen = u32[sw + L3L_W_MAX_LEN + rxPort]!;
    const drops = u32[sw + L3L_W_DROPS]! >>> 2;
    const bufs = u32[sw + L3L_W_TX_BUFS]! >>> 2;
    if (table !== 0 && em && hash?.offset !== table) hash = Hash.attach(heap, table);
    if (table !== 0 && !em && lpm?.offset !== table) lpm = Lpm.attach(heap, table);
    if (table6 !== 0 && em && hash6?.offset !== table6) hash6 = Hash.attach(heap, table6);
    const key = s + L3L_KEY;
    const key6 = s + L3L_KEY6;
    let nd = 0;
    let over = 0;
    for (let lo = 0; lo < n; lo += L3L_HASH_BURST) {
      const hi = Math.min(n, lo + L3L_HASH_BURST);
      // EM's first pass (emHashes): every packet's key hash into L3L_HASHES.
      for (let i = lo; em && i < hi; i++) {
        const l2 = mb.mtod(u32[(burst >>> 2) + i]!);
        const ip = l2 + ETHER_HDR_LEN;
        const type = (u8[l2 + 12]! << 8) | u8[l2 + 13]!;
        const at = sw + L3L_W_HASHES + i - lo;
        if (type === ETHER_TYPE_IPV4 && table !== 0) {
          // The kernel hashes this key from a register: here it is built outside the heap, which stays as the kernel leaves it.
          ipv4Key(u8, ip, key4, 0);
          hashKeyTo(key4, 0, 16, u32[(table >>> 2) + HASH_W_INIT_VAL]!, u32, at);
        } else if (type === ETHER_TYPE_IPV6 && table6 !== 0) {
          ipv6Key(u8, ip, key6);
          hashKeyTo(u8, key6, 48, u32[(table6 >>> 2) + HASH_W_INIT_VAL]!, u32, at);
        } else u32[at] = 0;
      }
      for (let i = lo; i < hi; i++) {
        const h = u32[(burst >>> 2) + i]!;
        const l2 = mb.mtod(h);
        const len = mb.dataLen(h);
        const ip = l2 + ETHER_HDR_LEN;
        const type = len < ETHER_HDR_LEN ? 0 : (u8[l2 + 12]! << 8) | u8[l2 + 13]!;
        const v4 = type === ETHER_TYPE_IPV4;
        const big = mb.pktLen(h) > maxLen;
        if (big) over++;
        if (big || !(v4 ? validIpv4(u8, ip, len) : type === ETHER_TYPE_IPV6 && validIpv6(u8, ip, len))) {
          u32[drops + nd++] = h;
          continue;
        }
        let port = rxPort;
        if (v4) {
          if (em) {
            if (table !== 0) {
              ipv4Key(u8, ip, u8, key);
              const pos = find(table, key, sw + L3L_W_HASHES + i - lo);
              if (pos >= 0) port = hash!.data(pos);
            }
          } else {
            const hop = lpm!.lookup(((u8[ip + 16]! << 24) | (u8[ip + 17]! << 16) | (u8[ip + 18]! << 8) | u8[ip + 19]!) >>> 0);
            if (hop >= 0) port = hop;
          }
          u8[ip + 8]!--;
          // DPDK's ++hdr_checksum: +1 on the little-endian u16 over the big-endian field.
          const c = ((u8[ip + 10]! | (u8[ip + 11]! << 8)) + 1) & 0xffff;
          u8[ip + 10] = c & 0xff;
          u8[ip + 11] = c >>> 8;
        } else {
          if (table6 !== 0 && em) {
            ipv6Key(u8, ip, key6);
            const pos = find(table6, key6, sw + L3L_W_HASHES + i - lo);
            if (pos >= 0) port = hash6!.data(pos);
          } else if (table6 !== 0) {
            const hop = lpm6Find(u8, u32, u32[(table6 >>> 2) + LPM6_W_TBL24]! >>> 2, u32[(table6 >>> 2) + LPM6_W_TBL8]! >>> 2, ip + 24);
            if (hop >= 0) port = hop;
          }
          u8[ip + 7]!--;
        }
        if (port >= L3L_MAX_PORTS || ((mask >>> port) & 1) === 0) port = rxPort;
        u8.copyWithin(l2, s + L3L_MAC + port * L3L_MAC_STRIDE, s + L3L_MAC + port * L3L_MAC_STRIDE + 12);
        const k = u32[sw + L3L_W_TX_LEN + port]!;
        u32[bufs + port * L3L_TX_BUF_LEN + k] = h;
        u32[sw + L3L_W_TX_LEN + port] = k + 1;
      }
    }
    f64[(s >>> 3) + L3L_F_RX_PACKETS] += n;
    f64[(s >>> 3) + L3L_F_BAD_PACKETS] += nd - over;
    f64[(s >>> 3) + L3L_F_RX_OVERSIZE] += over;
    u32[sw + L3L_W_NB_DROPS] = nd;
    return nd;
  };
}
