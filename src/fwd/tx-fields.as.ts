// The mbuf fields the mac, macswap and 5tswap kernels set (twin: tx-fields.ts).
import { M_OL_FLAGS, M_TX_OFFLOAD } from '../mem/mbuf-layout.as';

/** tx_offload word of mbuf_field_set: l2_len 14 (byte 0), l3_len 20 (bytes 2..3); l4_len (byte 1) kept. */
export const TX_OFFLOAD_ETH_IPV4: u32 = 14 | (20 << 16);
export const TX_OFFLOAD_KEEP: u32 = 0xff00;

/**
 * The 64-bit ol_flags word for its high half `hi` (the tx flags, or the kept
 * bits): the low half, the rx flags, is cleared. Kernels compute it once a
 * burst, so each packet's flags take one load, and, or and store.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function olFlagsHi(hi: u32): u64 {
  return <u64>hi << 32;
}

/** mbuf_field_set's flags and lengths for the record at `r`: rx flags cleared, tx flags `ol` over the kept `keep` bits (olFlagsHi of each), l2/l3 lengths 14/20. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function txFieldsSet(r: u32, ol: u64, keep: u64): void {
  store<u64>(r, (load<u64>(r, M_OL_FLAGS) & keep) | ol, M_OL_FLAGS);
  store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & TX_OFFLOAD_KEEP) | TX_OFFLOAD_ETH_IPV4, M_TX_OFFLOAD);
}
