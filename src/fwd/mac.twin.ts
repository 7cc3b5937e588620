/**
 * mac's per-burst work: the wasm kernel macFwd (mac.as.ts) or its
 * TypeScript twin (here, same signature), chosen once when the engine is
 * made (`macOps`). Its `state` is the stream's block (fwd.record.ts).
 */
import type { Heap } from '../eal/heap.js';
import { H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_OL_FLAGS, W_OL_FLAGS_HI, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import type { EngineKernel } from './engine.js';
import { FWDE_W_KEEP_HI, FWDE_W_OL_HI, FWDE_W_VLAN, FWDE_W_VLAN_OUTER, FWDS_W_ENGINE, FWDS_W_MAC } from './fwd-layout.js';
import { TX_OFFLOAD_ETH_IPV4, TX_OFFLOAD_KEEP } from './tx-fields.js';

/** The kernel when the heap has kernels, else the twin. */
export function macOps(heap: Heap): EngineKernel {
  const k = heap.kernels;
  return k === null ? macFwdTwin(heap) : k.fn('macFwd');
}

/** The twin. */
export function macFwdTwin(heap: Heap): EngineKernel {
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  return (s, _lc, burst, n) => {
    const sw = s >>> 2;
    const w = u32[sw + FWDS_W_ENGINE]! >>> 2;
    const w0 = u32[sw + FWDS_W_MAC]!;
    const w1 = u32[sw + FWDS_W_MAC + 1]!;
    const w2 = u32[sw + FWDS_W_MAC + 2]!;
    const olHi = u32[w + FWDE_W_OL_HI]!;
    const keepHi = u32[w + FWDE_W_KEEP_HI]!;
    const vlan = u32[w + FWDE_W_VLAN]!;
    const vlanOuter = u32[w + FWDE_W_VLAN_OUTER]!;
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const r = h << MBUF_WORD_SHIFT;
      const p = u32[r + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
      dv.setUint32(p, w0, true);
      dv.setUint32(p + 4, w1, true);
      dv.setUint32(p + 8, w2, true);
      u32[r + W_OL_FLAGS] = 0;
      u32[r + W_OL_FLAGS_HI] = (u32[r + W_OL_FLAGS_HI]! & keepHi) | olHi;
      u32[r + W_TX_OFFLOAD] = (u32[r + W_TX_OFFLOAD]! & TX_OFFLOAD_KEEP) | TX_OFFLOAD_ETH_IPV4;
      // macfwd sets the port's VLAN ids on every packet, whatever the offloads.
      u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = vlan;
      u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = vlanOuter;
    }
  };
}
