/** Bytes of a burst for a queue's counters: the pktLenSum kernel for bursts in the heap, else its twin. */
import type { FwdKernel } from '../eal/kernels.js';
import { MBUF_WORD_SHIFT, W_PKT_LEN } from '../mem/mbuf-layout.js';

export function burstBytes(kernel: FwdKernel | null, u32: Uint32Array, burst: Uint32Array, n: number): number {
  if (kernel !== null && burst.buffer === u32.buffer) return kernel.pktLenSum(burst.byteOffset, n);
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += u32[(burst[i]! << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
  return bytes;
}
