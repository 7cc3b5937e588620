/**
 * 5tswap's per-burst work: the wasm kernel fiveTupleSwap (5tswap.as.ts) or
 * its TypeScript twin (here, same signature), chosen once when the engine is
 * made (`fiveTupleSwapOps`). Its `state` is the engine's block
 * (fwd.record.ts).
 */
import type { Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import { ETHER_TYPE_IPV4 } from '../net/ether.js';
import {
  IPPROTO_TCP,
  IPPROTO_UDP,
  PARSED_L2,
  etherAddrSwap,
  ipv4AddrSwap,
  ipv6AddrSwap,
  l4PortSwap,
  newHdrInfo,
  parseHeaders,
} from '../net/headers.js';
import type { EngineKernel } from './engine.js';
import { FWDE_F_QINQ, FWDE_F_VLAN, FWDE_W_FLAGS, FWDE_W_KEEP_HI, FWDE_W_OL_HI, FWDE_W_VLAN, FWDE_W_VLAN_OUTER } from './fwd-layout.js';

/** The kernel when the heap has kernels, else the twin. */
export function fiveTupleSwapOps(heap: Heap, mb: Mbufs): EngineKernel {
  const k = heap.kernels;
  return k === null ? fiveTupleSwapTwin(heap, mb) : k.fn('fiveTupleSwap');
}

/** The twin: parseHeaders, then the swaps of each layer it found. */
export function fiveTupleSwapTwin(heap: Heap, mb: Mbufs): EngineKernel {
  const u8 = heap.u8;
  const u32 = heap.u32;
  const info = newHdrInfo();
  return (e, _lc, burst, n) => {
    const w = e >>> 2;
    const txFlags = u32[w + FWDE_W_OL_HI]!;
    const keepHi = u32[w + FWDE_W_KEEP_HI]!;
    const vlan = u32[w + FWDE_W_VLAN]!;
    const vlanOuter = u32[w + FWDE_W_VLAN_OUTER]!;
    const flags = u32[w + FWDE_W_FLAGS]!;
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const off = mb.mtod(h);
      let l3Len = 0;
      let l4Len = 0;
      if (parseHeaders(u8, off, mb.dataLen(h), info) >= PARSED_L2) {
        etherAddrSwap(u8, off);
        if (info.l4Proto >= 0) {
          // An IP header is present (ARP leaves l4Proto at -1).
          if (info.ethertype === ETHER_TYPE_IPV4) ipv4AddrSwap(u8, info.l3Off);
          else ipv6AddrSwap(u8, info.l3Off);
          l3Len = info.l3Len;
          if (info.l4Off !== 0 && (info.l4Proto === IPPROTO_UDP || info.l4Proto === IPPROTO_TCP)) {
            l4PortSwap(u8, info.l4Off);
            l4Len = info.l4Len;
          }
        }
      }
      mb.setTxOffload(h, info.l2Len, l3Len, l4Len);
      mb.setOlFlags(h, 0);
      mb.setOlFlagsHi(h, (mb.olFlagsHi(h) & keepHi) | txFlags);
      if ((flags & FWDE_F_VLAN) !== 0) mb.setVlanTci(h, vlan);
      if ((flags & FWDE_F_QINQ) !== 0) mb.setVlanTciOuter(h, vlanOuter);
    }
  };
}
