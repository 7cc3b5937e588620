// What the engine kernels set on the way out: mbuf fields, and the
// generators' varying header fields (twin: tx-fields.ts).
import { MBUF_SHIFT, M_DATA_LEN, M_OL_FLAGS, M_OL_FLAGS_HI, M_PKT_LEN, M_TX_OFFLOAD, M_VLAN_TCI, M_VLAN_TCI_OUTER } from '../mem/mbuf-layout.as';
import { FWDE_FLAGS, FWDE_F_QINQ, FWDE_F_VLAN, FWDE_VLAN, FWDE_VLAN_OUTER } from './fwd-layout.as';

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

/**
 * The VLAN ids of mbuf_field_set, when the engine's offloads ask for them: a
 * pass of its own, so the common burst's loop carries no test for them.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function vlanSet(e: u32, burst: u32, n: u32): void {
  const flags = load<u32>(e, FWDE_FLAGS);
  if ((flags & (FWDE_F_VLAN | FWDE_F_QINQ)) == 0) return;
  const vlan = <u16>load<u32>(e, FWDE_VLAN);
  const vlanOuter = <u16>load<u32>(e, FWDE_VLAN_OUTER);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    if (flags & FWDE_F_VLAN) store<u16>(r, vlan, M_VLAN_TCI);
    if (flags & FWDE_F_QINQ) store<u16>(r, vlanOuter, M_VLAN_TCI_OUTER);
  }
}

/** A generated one-segment IPv4/UDP packet's lengths (`len` bytes) and tx fields (flags `olHi`, l2/l3 lengths 14/20): txonly and flowgen. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function genFieldsSet(r: u32, len: u32, olHi: u32): void {
  store<u16>(r, <u16>len, M_DATA_LEN);
  store<u32>(r, len, M_PKT_LEN);
  store<u32>(r, olHi, M_OL_FLAGS_HI);
  store<u32>(r, TX_OFFLOAD_ETH_IPV4, M_TX_OFFLOAD);
}

/**
 * A generated packet's varying IPv4 address `addr` at `p + at` (the source,
 * 26, or the destination, 30) and its header checksum at `p + 24`, finished
 * from `sumWithout`: the template header's sum without that address and the
 * checksum (txonly's multi-flow source, flowgen's destination).
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function genAddrSet(p: u32, at: u32, addr: u32, sumWithout: u32): void {
  store<u32>(p + at, bswap<u32>(addr));
  let sum = sumWithout + (addr >>> 16) + (addr & 0xffff);
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  store<u16>(p, bswap<u16>(<u16>(~sum & 0xffff)), 24);
}
