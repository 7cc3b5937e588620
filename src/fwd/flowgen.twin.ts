/**
 * flowgen's per-burst work: the wasm kernel flowgenFill (flowgen.as.ts) or
 * its TypeScript twin (here, same signature), chosen once when the engine is
 * made (`flowgenOps`). Its `state` is the stream's block (fwd.record.ts): the
 * header template, the template's sum, the engine's block.
 */
import type { Heap } from '../eal/heap.js';
import { H_DATA_LEN, H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_OL_FLAGS_HI, W_PKT_LEN, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import type { EngineKernel } from './engine.js';
import {
  FWDE_W_FLOW,
  FWDE_W_FLOWS,
  FWDE_W_IP_DST,
  FWDE_W_OL_HI,
  FWDE_W_PKT_LEN,
  FWDE_W_VLAN,
  FWDE_W_VLAN_OUTER,
  FWDS_TMPL,
  FWDS_W_ENGINE,
  FWDS_W_SUM_NO_DST,
} from './fwd-layout.js';
import { TX_OFFLOAD_ETH_IPV4, genAddrSet } from './tx-fields.js';
import { TXONLY_HDR_LEN } from './txonly.js';

/** The kernel when the heap has kernels, else the twin. */
export function flowgenOps(heap: Heap): EngineKernel {
  const k = heap.kernels;
  return k === null ? flowgenFillTwin(heap) : k.fn('flowgenFill');
}

/** flowgenFill's twin: the same fields, header, destination and checksum per packet. */
export function flowgenFillTwin(heap: Heap): EngineKernel {
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  return (s, lc, burst, n) => {
    const sw = s >>> 2;
    const w = u32[sw + FWDS_W_ENGINE]! >>> 2;
    const pktLen = u32[w + FWDE_W_PKT_LEN]!;
    const olHi = u32[w + FWDE_W_OL_HI]!;
    const vlan = u32[w + FWDE_W_VLAN]! & 0xffff;
    const vlanOuter = u32[w + FWDE_W_VLAN_OUTER]! & 0xffff;
    const ipDst = u32[w + FWDE_W_IP_DST]!;
    const flows = u32[w + FWDE_W_FLOWS]!;
    let flow = u32[w + FWDE_W_FLOW]!;
    const sumNoDst = u32[sw + FWDS_W_SUM_NO_DST]!;
    const tmpl = u8.subarray(s + FWDS_TMPL, s + FWDS_TMPL + TXONLY_HDR_LEN);
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const r = h << MBUF_WORD_SHIFT;
      const hh = h << MBUF_HALF_SHIFT;
      u16[hh + H_DATA_LEN] = pktLen;
      u32[r + W_PKT_LEN] = pktLen;
      u32[r + W_OL_FLAGS_HI] = olHi;
      u32[r + W_TX_OFFLOAD] = TX_OFFLOAD_ETH_IPV4;
      u16[hh + H_VLAN_TCI] = vlan;
      u16[hh + H_VLAN_TCI_OUTER] = vlanOuter;
      const p = u32[r + W_BUF_ADDR]! + u16[hh + H_DATA_OFF]!;
      u8.set(tmpl, p);
      genAddrSet(dv, p, 30, (ipDst + flow) >>> 0, sumNoDst);
      if (++flow >= flows) flow = 0;
    }
    u32[w + FWDE_W_FLOW] = flow;
  };
}
