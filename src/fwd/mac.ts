/**
 * mac: rewrite each packet's Ethernet destination to the tx port's peer and
 * its source to the tx port's address (testpmd's macfwd), and set the tx fields.
 */
import { H_DATA_OFF, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_OL_FLAGS, W_OL_FLAGS_HI, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';
import { TX_OFFLOAD_ETH_IPV4, TX_OFFLOAD_KEEP } from './macswap.js';
import { KEEP_HI, streamAddressWords, txOlFlagsHi } from './tx-fields.js';

export function mac(ctx: FwdContext): FwdEngine {
  const u16 = ctx.heap.u16;
  const u32 = ctx.heap.u32;
  const dv = ctx.heap.view;
  const burst = ctx.burst;
  const olHi = txOlFlagsHi(ctx.config);
  const kernel = ctx.heap.kernels?.fwd ?? null;
  const inHeap = burst.buffer === ctx.heap.buffer;
  const words = streamAddressWords();
  return {
    name: 'mac',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n === 0) return;
      const w = words(fs);
      const w0 = w[0]!;
      const w1 = w[1]!;
      const w2 = w[2]!;
      const vlan = ctx.config.vlanTci;
      const vlanOuter = ctx.config.vlanTciOuter;
      if (kernel !== null && inHeap) {
        kernel.macFwd(burst.byteOffset, n, w0, w1, w2, olHi, KEEP_HI, vlan, vlanOuter);
        transmit(ctx, fs, n);
        return;
      }
      // The TypeScript twin of the macFwd kernel.
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const r = h << MBUF_WORD_SHIFT;
        const p = u32[r + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
        dv.setUint32(p, w0, true);
        dv.setUint32(p + 4, w1, true);
        dv.setUint32(p + 8, w2, true);
        u32[r + W_OL_FLAGS] = 0;
        u32[r + W_OL_FLAGS_HI] = (u32[r + W_OL_FLAGS_HI]! & KEEP_HI) | olHi;
        u32[r + W_TX_OFFLOAD] = (u32[r + W_TX_OFFLOAD]! & TX_OFFLOAD_KEEP) | TX_OFFLOAD_ETH_IPV4;
        // macfwd sets the port's VLAN ids on every packet, whatever the offloads.
        u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = vlan;
        u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = vlanOuter;
      }
      transmit(ctx, fs, n);
    },
  };
}
