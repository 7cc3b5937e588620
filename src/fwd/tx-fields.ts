/**
 * The mbuf fields testpmd's mac and macswap engines set on every packet
 * (macswap_common.h): offload flags from the tx port's VLAN/QinQ insert
 * offloads, the VLAN tags to insert, and l2/l3 lengths for the NIC.
 */
import { TxOffload } from '../ethdev/driver.js';
import { OlFlagsHi } from '../mem/mbuf-layout.js';
import type { FwdConfig, FwdStream } from './engine.js';

/** ol_flags_init: the tx flags (bits 32..63 of ol_flags) for the port's offloads. */
export function txOlFlagsHi(config: FwdConfig): number {
  let f = 0;
  if (config.txOffloads & TxOffload.VLAN_INSERT) f |= OlFlagsHi.TX_VLAN;
  if (config.txOffloads & TxOffload.QINQ_INSERT) f |= OlFlagsHi.TX_QINQ;
  return f;
}

/** Keeps only the buffer-kind bits of ol_flags (mbuf_field_set keeps INDIRECT and EXTERNAL). */
export const KEEP_HI = OlFlagsHi.INDIRECT | OlFlagsHi.EXTERNAL;

/**
 * The 12 Ethernet address bytes a stream writes (its peer, then its tx
 * port) as three little-endian words, for the kernels that take them.
 * @returns a lookup that computes them once per stream (a stream's ports never change while it runs).
 */
export function streamAddressWords(): (fs: FwdStream) => Uint32Array {
  const cache = new WeakMap<FwdStream, Uint32Array>();
  return (fs) => {
    let w = cache.get(fs);
    if (!w) {
      const b = new Uint8Array(12);
      b.set(fs.peerMac.subarray(0, 6), 0);
      b.set(fs.txMac.subarray(0, 6), 6);
      const v = new DataView(b.buffer);
      w = Uint32Array.of(v.getUint32(0, true), v.getUint32(4, true), v.getUint32(8, true));
      cache.set(fs, w);
    }
    return w;
  };
}
