/**
 * The mbuf fields testpmd's mac and macswap engines set on every packet
 * (macswap_common.h): offload flags from the tx port's VLAN/QinQ insert
 * offloads, the VLAN tags to insert, and l2/l3 lengths for the NIC
 * (in kernels: tx-fields.as.ts).
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
