/**
 * macswap's per-burst work: one of the wasm kernels of the SIMD macswap
 * study (macswap.as.ts) or the TypeScript twin (here, same signature: the
 * `scalar` arm), chosen once when the engine is made (`macswapOps`).
 */
import type { Heap } from '../eal/heap.js';
import { H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_OL_FLAGS, W_OL_FLAGS_HI, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import type { EngineKernel } from './engine.js';
import { FWDE_F_QINQ, FWDE_F_VLAN, FWDE_W_FLAGS, FWDE_W_KEEP_HI, FWDE_W_OL_HI, FWDE_W_VLAN, FWDE_W_VLAN_OUTER } from './fwd-layout.js';
import { TX_OFFLOAD_ETH_IPV4, TX_OFFLOAD_KEEP } from './tx-fields.js';
import type { MacswapVariant } from './variants.js';

/** The kernel of each wasm arm, by export name. */
const KERNELS = { simd: 'macswap', 'simd-ofl': 'macswapOfl', 'simd-interleave': 'macswapInterleave' } as const;

/**
 * The kernel of arm `variant` when the heap has kernels; the twin for
 * `scalar` and on the TypeScript datapath. Its `state` is the engine's block.
 */
export function macswapOps(heap: Heap, variant: MacswapVariant): EngineKernel {
  const k = heap.kernels;
  return k === null || variant === 'scalar' ? macswapTwin(heap) : k.fn(KERNELS[variant]);
}

/** The twin: what every arm does, one packet after the other. */
export function macswapTwin(heap: Heap): EngineKernel {
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  return (e, _lc, burst, n) => {
    const w = e >>> 2;
    const olHi = u32[w + FWDE_W_OL_HI]!;
    const keepHi = u32[w + FWDE_W_KEEP_HI]!;
    const vlan = u32[w + FWDE_W_VLAN]!;
    const vlanOuter = u32[w + FWDE_W_VLAN_OUTER]!;
    const flags = u32[w + FWDE_W_FLAGS]!;
    const b = burst >>> 2;
    for (let i = 0; i < n; i++) {
      const h = u32[b + i]!;
      const r = h << MBUF_WORD_SHIFT;
      const p = u32[r + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
      const d0 = dv.getUint32(p, true);
      const d1 = dv.getUint16(p + 4, true);
      dv.setUint32(p, dv.getUint32(p + 6, true), true);
      dv.setUint16(p + 4, dv.getUint16(p + 10, true), true);
      dv.setUint32(p + 6, d0, true);
      dv.setUint16(p + 10, d1, true);
      u32[r + W_OL_FLAGS] = 0;
      u32[r + W_OL_FLAGS_HI] = (u32[r + W_OL_FLAGS_HI]! & keepHi) | olHi;
      u32[r + W_TX_OFFLOAD] = (u32[r + W_TX_OFFLOAD]! & TX_OFFLOAD_KEEP) | TX_OFFLOAD_ETH_IPV4;
      if (flags & FWDE_F_VLAN) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = vlan;
      if (flags & FWDE_F_QINQ) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = vlanOuter;
    }
  };
}
