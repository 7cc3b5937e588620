/**
 * The mbuf fields testpmd's mac and macswap engines set on every packet
 * (macswap_common.h): offload flags from the tx port's VLAN/QinQ insert
 * offloads, the VLAN tags to insert, and l2/l3 lengths for the NIC; and
 * the varying IPv4 address of txonly's and flowgen's headers with its
 * checksum (in kernels: tx-fields.as.ts).
 */
import { TxOffload } from '../ethdev/driver.js';
import { ETHER_HDR_LEN } from '../net/ether.js';
import { OlFlagsHi } from '../mem/mbuf-layout.js';
import type { FwdConfig } from './engine.js';

/** ol_flags_init: the tx flags (bits 32..63 of ol_flags) for the port's offloads. */
export function txOlFlagsHi(config: FwdConfig): number {
  let f = 0;
  if (config.txOffloads & TxOffload.VLAN_INSERT) f |= OlFlagsHi.TX_VLAN;
  if (config.txOffloads & TxOffload.QINQ_INSERT) f |= OlFlagsHi.TX_QINQ;
  return f;
}

/** Keeps only the buffer-kind bits of ol_flags (mbuf_field_set keeps INDIRECT and EXTERNAL). */
export const KEEP_HI = OlFlagsHi.INDIRECT | OlFlagsHi.EXTERNAL;

/** tx_offload word: l2_len = 14 (byte 0), l3_len = 20 (bytes 2..3), as mbuf_field_set; l4_len (byte 1) is kept. */
export const TX_OFFLOAD_ETH_IPV4 = ETHER_HDR_LEN | (20 << 16);
export const TX_OFFLOAD_KEEP = 0xff00;

/**
 * genAddrSet's twin (tx-fields.as.ts): the varying IPv4 address `addr` at
 * `p + at` in `view` and the header checksum at `p + 24`, finished from
 * `sumWithout`, the template header's sum without that address and the
 * checksum (txonly's multi-flow source, flowgen's destination).
 */
export function genAddrSet(view: DataView, p: number, at: number, addr: number, sumWithout: number): void {
  view.setUint32(p + at, addr);
  let sum = sumWithout + (addr >>> 16) + (addr & 0xffff);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  view.setUint16(p + 24, ~sum & 0xffff);
}
