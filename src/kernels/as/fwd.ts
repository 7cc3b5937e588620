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

// ---- macswap, in the variants of seeds 000/001 --------------------------
// Every variant leaves the same bytes and metadata (test/kernels compares
// them with the TypeScript twin in fwd/macswap.ts); they differ only in the
// order of the work, which is what the seeds measured:
//   simd            load, shuffle, store per packet; offload fields after
//   simd-ofl        offload fields first (patch 2/3: the mbuf's line while
//                   the packet's line loads)
//   simd-interleave 4 packets at a time: 4 loads interleaved with 4 field
//                   sets, then 4 shuffles, then 4 stores (patch 3/3)
// A packet with fewer than 16 bytes of buffer after its data start takes a
// 12-byte scalar swap, so a vector store never leaves the buffer.

/** The mbuf_field_set of do_macswap: rx flags cleared, tx flags, l2/l3 lengths 14/20 (l4 kept), VLAN ids when asked. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function fieldSet(r: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  store<u32>(r, 0, M_OL_FLAGS);
  store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
  store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & 0xff00) | 14 | (20 << 16), M_TX_OFFLOAD);
  if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
  if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
}

/** Heap offset of the packet data of record `r`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function dataAddr(r: u32): u32 {
  return load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
}

/** At least 16 bytes of buffer from the data start: a 16-byte vector store stays inside. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function roomy(r: u32): bool {
  return <u32>load<u16>(r, M_BUF_LEN) - <u32>load<u16>(r, M_DATA_OFF) >= 16;
}

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swapScalar(p: u32): void {
  const d0 = load<u32>(p);
  const d1 = load<u16>(p, 4);
  store<u32>(p, load<u32>(p, 6));
  store<u16>(p, load<u16>(p, 10), 4);
  store<u32>(p, d0, 6);
  store<u16>(p, d1, 10);
}

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swapVector(p: u32): void {
  const v = v128.load(p);
  v128.store(p, i8x16.shuffle(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
}

/** Swaps one packet's addresses: vector when there is room, else scalar. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swap(r: u32): void {
  const p = dataAddr(r);
  if (roomy(r)) swapVector(p);
  else swapScalar(p);
}

/** macswap, variant simd: the default shape before the seeds' patches. */
export function macswap(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    swap(r);
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
  }
}

/** macswap, variant simd-ofl: offload fields before the header work (patch 2/3). */
export function macswapOfl(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    swap(r);
  }
}

/** macswap, variant simd-interleave: four packets at a time, loads, shuffles and stores interleaved (patch 3/3). */
export function macswapInterleave(objs: u32, n: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  let i: u32 = 0;
  for (; i + 4 <= n; i += 4) {
    const r0 = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const r1 = load<u32>(objs + ((i + 1) << 2)) << MBUF_SHIFT;
    const r2 = load<u32>(objs + ((i + 2) << 2)) << MBUF_SHIFT;
    const r3 = load<u32>(objs + ((i + 3) << 2)) << MBUF_SHIFT;
    if (!(roomy(r0) && roomy(r1) && roomy(r2) && roomy(r3))) {
      // A short buffer tail among the four: do them one by one.
      for (let k: u32 = 0; k < 4; k++) {
        const r = load<u32>(objs + ((i + k) << 2)) << MBUF_SHIFT;
        swap(r);
        fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
      }
      continue;
    }
    const p0 = dataAddr(r0);
    const p1 = dataAddr(r1);
    const p2 = dataAddr(r2);
    const p3 = dataAddr(r3);
    const a0 = v128.load(p0);
    fieldSet(r0, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const a1 = v128.load(p1);
    fieldSet(r1, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s0 = i8x16.shuffle(a0, a0, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const a2 = v128.load(p2);
    fieldSet(r2, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s1 = i8x16.shuffle(a1, a1, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const a3 = v128.load(p3);
    fieldSet(r3, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    const s2 = i8x16.shuffle(a2, a2, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    const s3 = i8x16.shuffle(a3, a3, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
    v128.store(p0, s0);
    v128.store(p1, s1);
    v128.store(p2, s2);
    v128.store(p3, s3);
  }
  for (; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    swap(r);
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
  }
}

/**
 * mac (twin: fwd/mac.ts): write the 12 address bytes (peer, then tx port)
 * given as three little-endian words, then the tx fields as macfwd does
 * (VLAN ids set on every packet).
 */
export function macFwd(objs: u32, n: u32, w0: u32, w1: u32, w2: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const p = load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
    store<u32>(p, w0);
    store<u32>(p, w1, 4);
    store<u32>(p, w2, 8);
    store<u32>(r, 0, M_OL_FLAGS);
    store<u32>(r, (load<u32>(r, M_OL_FLAGS_HI) & keepHi) | olHi, M_OL_FLAGS_HI);
    store<u32>(r, (load<u32>(r, M_TX_OFFLOAD) & 0xff00) | 14 | (20 << 16), M_TX_OFFLOAD);
    store<u16>(r, <u16>vlan, M_VLAN_TCI);
    store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
  }
}

/**
 * txonly, single-segment packets (twin: fwd/txonly.ts): for each freshly
 * allocated mbuf, set its lengths and tx fields and copy the 42-byte
 * Ethernet/IPv4/UDP header from the template at `tmpl` (48 readable bytes).
 * With `multiFlow`, the IPv4 source becomes (dst | var << 8) + lcore and the
 * header checksum is finished from `sumNoSrc` (the header's sum without the
 * source and checksum fields).
 * Returns the next value of the 8-bit flow variable.
 */
export function txonlyFill(
  objs: u32,
  n: u32,
  tmpl: u32,
  pktLen: u32,
  olHi: u32,
  setVlan: u32,
  vlan: u32,
  setQinq: u32,
  vlanOuter: u32,
  multiFlow: u32,
  ipDst: u32,
  ipVar: u32,
  lcore: u32,
  sumNoSrc: u32,
): u32 {
  const t0 = v128.load(tmpl);
  const t1 = v128.load(tmpl, 16);
  const t2 = load<u64>(tmpl, 32);
  const t3 = load<u16>(tmpl, 40);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    store<u16>(r, <u16>pktLen, M_DATA_LEN);
    store<u32>(r, pktLen, M_PKT_LEN);
    store<u32>(r, olHi, M_OL_FLAGS_HI);
    store<u32>(r, 14 | (20 << 16), M_TX_OFFLOAD);
    if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
    if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
    const p = load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
    v128.store(p, t0);
    v128.store(p, t1, 16);
    store<u64>(p, t2, 32);
    store<u16>(p, t3, 40);
    if (multiFlow) {
      const src = (ipDst | ((ipVar & 0xff) << 8)) + lcore;
      ipVar = (ipVar + 1) & 0xff;
      store<u32>(p, bswap<u32>(src), 26);
      let sum = sumNoSrc + (src >>> 16) + (src & 0xffff);
      sum = (sum & 0xffff) + (sum >>> 16);
      sum = (sum & 0xffff) + (sum >>> 16);
      store<u16>(p, bswap<u16>(<u16>(~sum & 0xffff)), 24);
    }
  }
  return ipVar;
}

/**
 * net_null copy=1 rx (twin: NullRxQueue.rxBurst): copies `len` bytes from
 * `src` into each packet's data, with wasm's memory.copy (3× faster here
 * than copyWithin on shared memory).
 */
export function copyIn(objs: u32, n: u32, src: u32, len: u32): void {
  for (let i: u32 = 0; i < n; i++) memory.copy(dataAddr(load<u32>(objs + (i << 2)) << MBUF_SHIFT), src, len);
}

/**
 * net_null copy=1 tx (twin: NullTxQueue.txBurst): copies the first
 * min(dataLen, len) bytes of each packet to `dst`.
 */
export function copyOut(objs: u32, n: u32, dst: u32, len: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    const dl = <u32>load<u16>(r, M_DATA_LEN);
    memory.copy(dst, dataAddr(r), dl < len ? dl : len);
  }
}
