/**
 * l3fwd's per-burst forward, the wasm kernel l3fwdRoute (l3fwd.as.ts) or its
 * TypeScript twin (here, same signature), chosen once when an lcore starts
 * (`l3fwdOps`). `s` is the lcore's block (l3fwd.record.ts), `burst` a burst's
 * heap offset; the result is how many packets went to the drop list.
 */
import type { Heap } from '../../eal/heap.js';
import { Hash } from '../../hash/hash.js';
import { HASH_W_INIT_VAL } from '../../hash/hash-layout.js';
import { hashFinder, hashKey } from '../../hash/hash.twin.js';
import { Lpm } from '../../lpm/lpm.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { ipv4CksumVerify } from '../../net/checksum.js';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4 } from '../../net/ether.js';
import { IPV4_HDR_LEN } from '../../net/headers.js';
import {
  L3L_F_BAD_PACKETS,
  L3L_FLAG_EM,
  L3L_F_RX_PACKETS,
  L3L_KEY,
  L3L_MAC,
  L3L_MAC_STRIDE,
  L3L_MAX_PORTS,
  L3L_TX_BUF_LEN,
  L3L_W_DROPS,
  L3L_W_FLAGS,
  L3L_W_NB_DROPS,
  L3L_W_PORT_MASK,
  L3L_W_RX_PORT,
  L3L_W_TABLE,
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

/** The twin: the kernel's steps, a byte at a time. */
export function l3fwdTwin(heap: Heap, mb: Mbufs): L3fwdRoute {
  const { u8, u32, f64 } = heap;
  const find = hashFinder(heap);
  // The block's table, opened once (the block names it by offset).
  let lpm: Lpm | undefined;
  let hash: Hash | undefined;
  return (s, burst, n) => {
    const sw = s >>> 2;
    const table = u32[sw + L3L_W_TABLE]!;
    const em = (u32[sw + L3L_W_FLAGS]! & L3L_FLAG_EM) !== 0;
    const mask = u32[sw + L3L_W_PORT_MASK]!;
    const rxPort = u32[sw + L3L_W_RX_PORT]!;
    const drops = u32[sw + L3L_W_DROPS]! >>> 2;
    const bufs = u32[sw + L3L_W_TX_BUFS]! >>> 2;
    if (em && hash?.offset !== table) hash = Hash.attach(heap, table);
    if (!em && lpm?.offset !== table) lpm = Lpm.attach(heap, table);
    const key = s + L3L_KEY;
    let nd = 0;
    for (let i = 0; i < n; i++) {
      const h = u32[(burst >>> 2) + i]!;
      const l2 = mb.mtod(h);
      const len = mb.dataLen(h);
      const ip = l2 + ETHER_HDR_LEN;
      if (len < ETHER_HDR_LEN || ((u8[l2 + 12]! << 8) | u8[l2 + 13]!) !== ETHER_TYPE_IPV4 || !validIpv4(u8, ip, len)) {
        u32[drops + nd++] = h;
        continue;
      }
      let port = rxPort;
      if (em) {
        for (let k = 0; k < 16; k++) u8[key + k] = k === 0 || k === 2 || k === 3 ? 0 : u8[ip + 8 + k]!;
        const pos = find(table, key, hashKey(u8, key, 16, u32[(table >>> 2) + HASH_W_INIT_VAL]!));
        if (pos >= 0) port = hash!.data(pos);
      } else {
        const hop = lpm!.lookup(((u8[ip + 16]! << 24) | (u8[ip + 17]! << 16) | (u8[ip + 18]! << 8) | u8[ip + 19]!) >>> 0);
        if (hop >= 0) port = hop;
      }
      if (port >= L3L_MAX_PORTS || ((mask >>> port) & 1) === 0) port = rxPort;
      u8[ip + 8]!--;
      // DPDK's ++hdr_checksum: +1 on the little-endian u16 over the big-endian field.
      const c = ((u8[ip + 10]! | (u8[ip + 11]! << 8)) + 1) & 0xffff;
      u8[ip + 10] = c & 0xff;
      u8[ip + 11] = c >>> 8;
      u8.copyWithin(l2, s + L3L_MAC + port * L3L_MAC_STRIDE, s + L3L_MAC + port * L3L_MAC_STRIDE + 12);
      const k = u32[sw + L3L_W_TX_LEN + port]!;
      u32[bufs + port * L3L_TX_BUF_LEN + k] = h;
      u32[sw + L3L_W_TX_LEN + port] = k + 1;
    }
    f64[(s >>> 3) + L3L_F_RX_PACKETS] += n;
    f64[(s >>> 3) + L3L_F_BAD_PACKETS] += nd;
    u32[sw + L3L_W_NB_DROPS] = nd;
    return nd;
  };
}
