// Per-burst work of drivers and forwarding engines on packet metadata and
// headers: one call per burst, in place in the shared heap. Each has a
// TypeScript twin in the module that calls it (see the comments).
import {
  MBUF_SHIFT,
  M_BUF_ADDR,
  M_BUF_LEN,
  M_DATA_LEN,
  M_DATA_OFF,
  M_OL_FLAGS,
  M_OL_FLAGS_HI,
  M_PKT_LEN,
  M_PORT,
  M_TX_OFFLOAD,
  M_VLAN_TCI,
  M_VLAN_TCI_OUTER,
} from './layout';

export const layoutMPktLen: u32 = M_PKT_LEN;
export const layoutMDataLen: u32 = M_DATA_LEN;
export const layoutMPort: u32 = M_PORT;
export const layoutMOlFlags: u32 = M_OL_FLAGS;
export const layoutMTxOffload: u32 = M_TX_OFFLOAD;
export const layoutMVlanTci: u32 = M_VLAN_TCI;
export const layoutMVlanTciOuter: u32 = M_VLAN_TCI_OUTER;
export const layoutMBufAddr: u32 = M_BUF_ADDR;
export const layoutMBufLen: u32 = M_BUF_LEN;

/** Rx metadata fill (net_null rx; twin: NullRxQueue.rxBurst): every packet `len` bytes from `port`. */
export function rxFill(objs: u32, n: u32, len: u32, port: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u16>(r, <u16>port, M_PORT);
  }
}

/** Total pktLen of a burst (tx byte counters; twin: NullTxQueue.txBurst). */
export function pktLenSum(objs: u32, n: u32): u32 {
  let sum: u32 = 0;
  for (let i: u32 = 0; i < n; i++) sum += load<u32>(load<u32>(objs + (i << 2)) << MBUF_SHIFT, M_PKT_LEN);
  return sum;
}

/**
 * macswap (twin: fwd/macswap.ts): swap Ethernet source and destination with
 * one 16-byte load, shuffle and store per packet (the SSE macswap of seed
 * 000), then set the tx fields as do_macswap's mbuf_field_set: rx flags
 * cleared, tx flags = `olHi` on top of the kept buffer-kind bits, l2/l3
 * lengths 14/20 (l4 kept), VLAN ids when the flags ask for them.
 * A packet with fewer than 16 bytes of buffer after its data start takes the
 * 12-byte scalar path, so the vector store never leaves the buffer.
 */
export function macswap(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const off = <u32>load<u16>(r, M_DATA_OFF);
    const p = load<u32>(r, M_BUF_ADDR) + off;
    if (<u32>load<u16>(r, M_BUF_LEN) - off >= 16) {
      const v = v128.load(p);
      v128.store(p, i8x16.shuffle(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
    } else {
      const d0 = load<u32>(p);
      const d1 = load<u16>(p, 4);
      store<u32>(p, load<u32>(p, 6));
      store<u16>(p, load<u16>(p, 10), 4);
      store<u32>(p, d0, 6);
      store<u16>(p, d1, 10);
    }
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
    store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & 0xff00) | 14 | (20 << 16), M_TX_OFFLOAD);
    if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
    if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
  }
}
