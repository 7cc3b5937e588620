/**
 * macswap: swap each packet's Ethernet source and destination (testpmd's
 * macswap), then set the tx fields as do_macswap does. The work runs in the
 * wasm variant `config.macswapKernel` names (see src/kernels/as/fwd.as.ts);
 * `scalar`, the TypeScript datapath, or a burst outside the heap take the
 * TypeScript twin below. Like DPDK's SSE macswap, the vector variants load
 * 16 bytes per packet: two mbufs of one burst sharing data (clones) are not
 * supported by the interleaved variant, which loads before it stores.
 */
import { ETHER_HDR_LEN } from '../net/ether.js';
import { H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, OlFlagsHi, W_BUF_ADDR, W_OL_FLAGS, W_OL_FLAGS_HI, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { KEEP_HI, txOlFlagsHi } from './tx-fields.js';

/** tx_offload word: l2_len = 14 (byte 0), l3_len = 20 (bytes 2..3), as mbuf_field_set; l4_len (byte 1) is kept. */
export const TX_OFFLOAD_ETH_IPV4 = ETHER_HDR_LEN | (20 << 16);
export const TX_OFFLOAD_KEEP = 0xff00;

export function macswap(ctx: FwdContext): FwdEngine {
  const u16 = ctx.heap.u16;
  const u32 = ctx.heap.u32;
  const dv = ctx.heap.view;
  const burst = ctx.burst;
  const olHi = txOlFlagsHi(ctx.config);
  const k = ctx.heap.kernels?.fwd ?? null;
  const variant = ctx.config.macswapKernel;
  const kernel = k === null || variant === 'scalar' ? null : variant === 'simd-ofl' ? k.macswapOfl : variant === 'simd-interleave' ? k.macswapInterleave : k.macswap;
  const inHeap = burst.buffer === ctx.heap.buffer;
  const setVlan = olHi & OlFlagsHi.TX_VLAN ? 1 : 0;
  const setQinq = olHi & OlFlagsHi.TX_QINQ ? 1 : 0;
  return {
    name: 'macswap',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      const vlan = ctx.config.vlanTci;
      const vlanOuter = ctx.config.vlanTciOuter;
      if (kernel !== null && inHeap) {
        kernel(burst.byteOffset, n, olHi, KEEP_HI, vlan, vlanOuter, setVlan, setQinq);
        transmit(ctx, fs, n);
        return;
      }
      // The TypeScript twin of the macswap kernel.
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const r = h << MBUF_WORD_SHIFT;
        const p = u32[r + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
        const d0 = dv.getUint32(p, true);
        const d1 = dv.getUint16(p + 4, true);
        dv.setUint32(p, dv.getUint32(p + 6, true), true);
        dv.setUint16(p + 4, dv.getUint16(p + 10, true), true);
        dv.setUint32(p + 6, d0, true);
        dv.setUint16(p + 10, d1, true);
        u32[r + W_OL_FLAGS] = 0;
        u32[r + W_OL_FLAGS_HI] = (u32[r + W_OL_FLAGS_HI]! & KEEP_HI) | olHi;
        u32[r + W_TX_OFFLOAD] = (u32[r + W_TX_OFFLOAD]! & TX_OFFLOAD_KEEP) | TX_OFFLOAD_ETH_IPV4;
        if (olHi & OlFlagsHi.TX_VLAN) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = vlan;
        if (olHi & OlFlagsHi.TX_QINQ) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = vlanOuter;
      }
      transmit(ctx, fs, n);
    },
  };
}
