/**
 * rte_pktmbuf_copy over a burst: the wasm kernel mbufCopyBulk (mbuf.as.ts)
 * or its TypeScript twin (here, same signature), chosen once (`mbufCopyOps`).
 * Arguments are heap byte offsets of two bursts and their count.
 */
import type { Heap } from '../eal/heap.js';
import {
  H_BUF_LEN,
  H_DATA_LEN,
  H_DATA_OFF,
  H_NB_SEGS,
  H_PORT,
  H_VLAN_TCI,
  MBUF_HALF_SHIFT,
  MBUF_WORD_SHIFT,
  OlFlagsHi,
  W_BUF_ADDR,
  W_HASH,
  W_NEXT,
  W_OL_FLAGS,
  W_OL_FLAGS_HI,
  W_PKT_LEN,
  W_PKT_TYPE,
  W_TIMESTAMP_HI,
  W_TIMESTAMP_LO,
  W_TSO_VLAN_OUTER,
  W_TX_OFFLOAD,
} from './mbuf-layout.js';

/**
 * Copies packet `src[i]` into the fresh mbuf `dst[i]` for i < n.
 * @returns n, or the index of the first packet longer than its destination's room.
 */
export type MbufCopyKernel = (src: number, dst: number, n: number) => number;

/** The kernel when the heap has kernels, else the twin. */
export function mbufCopyOps(heap: Heap): MbufCopyKernel {
  const k = heap.kernels;
  return k === null ? mbufCopyTwin(heap) : k.fn('mbufCopyBulk');
}

/** The twin: each packet's segments, one after the other, into one segment; then the header fields. */
export function mbufCopyTwin(heap: Heap): MbufCopyKernel {
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const mtod = (h: number) => u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
  return (src, dst, n) => {
    for (let i = 0; i < n; i++) {
      const s = u32[(src >>> 2) + i]!;
      const d = u32[(dst >>> 2) + i]!;
      const sw = s << MBUF_WORD_SHIFT;
      const dw = d << MBUF_WORD_SHIFT;
      const sh = s << MBUF_HALF_SHIFT;
      const dh = d << MBUF_HALF_SHIFT;
      const len = u32[sw + W_PKT_LEN]!;
      if (len > u16[dh + H_BUF_LEN]! - u16[dh + H_DATA_OFF]!) return i;
      const to = mtod(d);
      let off = 0;
      let seg = s;
      for (let k = u16[sh + H_NB_SEGS]!; k > 0 && off < len; k--) {
        const l = Math.min(u16[(seg << MBUF_HALF_SHIFT) + H_DATA_LEN]!, len - off);
        const from = mtod(seg);
        u8.copyWithin(to + off, from, from + l);
        off += l;
        seg = u32[(seg << MBUF_WORD_SHIFT) + W_NEXT]!;
        if (seg === 0) break;
      }
      u16[dh + H_PORT] = u16[sh + H_PORT]!;
      u32[dw + W_PKT_LEN] = off;
      u16[dh + H_DATA_LEN] = off;
      u16[dh + H_VLAN_TCI] = u16[sh + H_VLAN_TCI]!;
      u32[dw + W_OL_FLAGS] = u32[sw + W_OL_FLAGS]!;
      u32[dw + W_OL_FLAGS_HI] = u32[sw + W_OL_FLAGS_HI]! & ~(OlFlagsHi.INDIRECT | OlFlagsHi.EXTERNAL);
      u32[dw + W_PKT_TYPE] = u32[sw + W_PKT_TYPE]!;
      u32[dw + W_TX_OFFLOAD] = u32[sw + W_TX_OFFLOAD]!;
      u32[dw + W_TSO_VLAN_OUTER] = u32[sw + W_TSO_VLAN_OUTER]!;
      u32[dw + W_HASH] = u32[sw + W_HASH]!;
      u32[dw + W_TIMESTAMP_LO] = u32[sw + W_TIMESTAMP_LO]!;
      u32[dw + W_TIMESTAMP_HI] = u32[sw + W_TIMESTAMP_HI]!;
    }
    return n;
  };
}
