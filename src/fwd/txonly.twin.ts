/**
 * txonly's per-burst work on single-segment packets: the wasm kernel
 * txonlyFill (txonly.as.ts) or its TypeScript twin (here, same signature),
 * chosen once when the engine is made (`txonlyOps`). Its `state` is the
 * stream's block (fwd.record.ts): the header template, the engine's block.
 */
import type { Heap } from '../eal/heap.js';
import { LCORE_W_ID } from '../eal/heap-layout.js';
import { H_DATA_LEN, H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_OL_FLAGS_HI, W_PKT_LEN, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import type { EngineKernel } from './engine.js';
import {
  FWDE_F_MULTI_FLOW,
  FWDE_F_QINQ,
  FWDE_F_VLAN,
  FWDE_W_FLAGS,
  FWDE_W_IP_DST,
  FWDE_W_IP_VAR,
  FWDE_W_OL_HI,
  FWDE_W_PKT_LEN,
  FWDE_W_VLAN,
  FWDE_W_VLAN_OUTER,
  FWDS_TMPL,
  FWDS_W_ENGINE,
  FWDS_W_SUM_NO_SRC,
} from './fwd-layout.js';
import { TX_OFFLOAD_ETH_IPV4, genAddrSet } from './tx-fields.js';

/** The kernel when the heap has kernels, else the twin. */
export function txonlyOps(heap: Heap): EngineKernel {
  const k = heap.kernels;
  return k === null ? txonlyFillTwin(heap) : k.fn('txonlyFill');
}

/** The header as 10 big-endian words and the UDP length/checksum half-word, from the template at `tmpl`. */
export function txonlyTemplateWords(view: DataView, tmpl: number, words: Uint32Array): void {
  for (let i = 0; i < 10; i++) words[i] = view.getUint32(tmpl + i * 4);
  words[10] = view.getUint16(tmpl + 40);
}

/**
 * Writes a txonly header at `p` in `view` (the packet, or a staging copy):
 * the template's `words`, and with `multiFlow` the IPv4 source
 * (ipDst | ipVar << 8) + lcore and the checksum finished from `sumNoSrc`.
 * @returns the next value of the 8-bit flow variable.
 */
export function txonlyWriteHeaders(view: DataView, p: number, words: Uint32Array, multiFlow: boolean, ipDst: number, ipVar: number, lcore: number, sumNoSrc: number): number {
  for (let i = 0; i < 10; i++) view.setUint32(p + i * 4, words[i]!);
  view.setUint16(p + 40, words[10]!);
  if (!multiFlow) return ipVar;
  const src = ((ipDst | ((ipVar & 0xff) << 8)) + lcore) >>> 0;
  genAddrSet(view, p, 26, src, sumNoSrc);
  return (ipVar + 1) & 0xff;
}

/** The twin. */
export function txonlyFillTwin(heap: Heap): EngineKernel {
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  const words = new Uint32Array(11);
  return (s, lc, burst, n) => {
    const sw = s >>> 2;
    const w = u32[sw + FWDS_W_ENGINE]! >>> 2;
    const pktLen = u32[w + FWDE_W_PKT_LEN]!;
    const olHi = u32[w + FWDE_W_OL_HI]!;
    const flags = u32[w + FWDE_W_FLAGS]!;
    const vlan = u32[w + FWDE_W_VLAN]!;
    const vlanOuter = u32[w + FWDE_W_VLAN_OUTER]!;
    const multiFlow = (flags & FWDE_F_MULTI_FLOW) !== 0;
    const ipDst = u32[w + FWDE_W_IP_DST]!;
    let ipVar = u32[w + FWDE_W_IP_VAR]!;
    const lcore = u32[(lc >>> 2) + LCORE_W_ID]!;
    const sumNoSrc = u32[sw + FWDS_W_SUM_NO_SRC]!;
    txonlyTemplateWords(dv, s + FWDS_TMPL, words);
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const r = h << MBUF_WORD_SHIFT;
      u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = pktLen;
      u32[r + W_PKT_LEN] = pktLen;
      u32[r + W_OL_FLAGS_HI] = olHi;
      u32[r + W_TX_OFFLOAD] = TX_OFFLOAD_ETH_IPV4;
      if (flags & FWDE_F_VLAN) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = vlan;
      if (flags & FWDE_F_QINQ) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = vlanOuter;
      ipVar = txonlyWriteHeaders(dv, u32[r + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!, words, multiFlow, ipDst, ipVar, lcore, sumNoSrc);
    }
    u32[w + FWDE_W_IP_VAR] = ipVar;
  };
}
