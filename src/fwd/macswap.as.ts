// macswap's kernels, in the variants of the SIMD macswap study (twin:
// macswapTwin in macswap.twin.ts; the study's registry: variants.ts). Every
// variant leaves the same bytes and metadata (test/kernels compares them
// with the twin); they differ only in the order of the work, which is what
// DPDK's SSE macswap patches measured:
//   simd            load, shuffle, store per packet; offload fields after
//   simd-ofl        offload fields first (their second step: the mbuf's line
//                   while the packet's line loads)
//   simd-interleave 4 packets at a time: 4 loads, 4 field sets, then 4
//                   shuffles and stores (their third step)
// A packet with fewer than 16 bytes of buffer after its data start takes a
// 12-byte scalar swap, so a vector store never leaves the buffer. The VLAN
// ids, rarely asked for, take a pass of their own after the loop, and the
// 64-bit ol_flags one load and store a packet: V8 hoists nothing out of a
// loop, so a test or a constant left in it is paid per packet (read in V8's
// code on 2026-12-07: the interleaved loop went from about 48 instructions a
// packet to 28).
// `e` is the engine's block (fwd.record.ts), `lc` the lcore block (unused),
// `burst` a burst's heap offset.
import { MBUF_SHIFT, M_BUF_ADDR, M_BUF_LEN, M_DATA_OFF } from '../mem/mbuf-layout.as';
import { etherAddrSwap } from '../net/headers.as';
import { FWDE_KEEP_HI, FWDE_OL_HI } from './fwd-layout.as';
import { olFlagsHi, txFieldsSet, vlanSet } from './tx-fields.as';

// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swapVector(p: u32): void {
  const v = v128.load(p);
  v128.store(p, i8x16.shuffle(v, v, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
}

/** Swaps one packet's addresses: vector when there are 16 bytes of buffer from the data start, else scalar. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function swap(r: u32): void {
  const off = <u32>load<u16>(r, M_DATA_OFF);
  const p = load<u32>(r, M_BUF_ADDR) + off;
  if (<u32>load<u16>(r, M_BUF_LEN) - off >= 16) swapVector(p);
  else etherAddrSwap(p);
}

/** macswap, variant simd: DPDK's SSE macswap as it was before the study's patches. */
export function macswap(e: u32, lc: u32, burst: u32, n: u32): void {
  const ol = olFlagsHi(load<u32>(e, FWDE_OL_HI));
  const keep = olFlagsHi(load<u32>(e, FWDE_KEEP_HI));
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    swap(r);
    txFieldsSet(r, ol, keep);
  }
  vlanSet(e, burst, n);
}

/** macswap, variant simd-ofl: offload fields before the header work (the study's second step). */
export function macswapOfl(e: u32, lc: u32, burst: u32, n: u32): void {
  const ol = olFlagsHi(load<u32>(e, FWDE_OL_HI));
  const keep = olFlagsHi(load<u32>(e, FWDE_KEEP_HI));
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    txFieldsSet(r, ol, keep);
    swap(r);
  }
  vlanSet(e, burst, n);
}

/**
 * macswap, variant simd-interleave: four packets at a time, loads, field sets,
 * shuffles and stores interleaved (the study's third step). The four room
 * checks are one test (a short room makes its difference negative).
 */
export function macswapInterleave(e: u32, lc: u32, burst: u32, n: u32): void {
  const ol = olFlagsHi(load<u32>(e, FWDE_OL_HI));
  const keep = olFlagsHi(load<u32>(e, FWDE_KEEP_HI));
  const end4 = burst + ((n & ~3) << 2);
  const end = burst + (n << 2);
  let b = burst;
  for (; b < end4; b += 16) {
    const r0 = load<u32>(b) << MBUF_SHIFT;
    const r1 = load<u32>(b, 4) << MBUF_SHIFT;
    const r2 = load<u32>(b, 8) << MBUF_SHIFT;
    const r3 = load<u32>(b, 12) << MBUF_SHIFT;
    const o0 = <u32>load<u16>(r0, M_DATA_OFF);
    const o1 = <u32>load<u16>(r1, M_DATA_OFF);
    const o2 = <u32>load<u16>(r2, M_DATA_OFF);
    const o3 = <u32>load<u16>(r3, M_DATA_OFF);
    const short =
      (<u32>load<u16>(r0, M_BUF_LEN) - o0 - 16) |
      (<u32>load<u16>(r1, M_BUF_LEN) - o1 - 16) |
      (<u32>load<u16>(r2, M_BUF_LEN) - o2 - 16) |
      (<u32>load<u16>(r3, M_BUF_LEN) - o3 - 16);
    if (<i32>short < 0) {
      // A short buffer tail among the four: do them one by one.
      swap(r0);
      txFieldsSet(r0, ol, keep);
      swap(r1);
      txFieldsSet(r1, ol, keep);
      swap(r2);
      txFieldsSet(r2, ol, keep);
      swap(r3);
      txFieldsSet(r3, ol, keep);
      continue;
    }
    const p0 = load<u32>(r0, M_BUF_ADDR) + o0;
    const p1 = load<u32>(r1, M_BUF_ADDR) + o1;
    const p2 = load<u32>(r2, M_BUF_ADDR) + o2;
    const p3 = load<u32>(r3, M_BUF_ADDR) + o3;
    const a0 = v128.load(p0);
    const a1 = v128.load(p1);
    const a2 = v128.load(p2);
    const a3 = v128.load(p3);
    txFieldsSet(r0, ol, keep);
    txFieldsSet(r1, ol, keep);
    txFieldsSet(r2, ol, keep);
    txFieldsSet(r3, ol, keep);
    v128.store(p0, i8x16.shuffle(a0, a0, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
    v128.store(p1, i8x16.shuffle(a1, a1, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
    v128.store(p2, i8x16.shuffle(a2, a2, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
    v128.store(p3, i8x16.shuffle(a3, a3, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15));
  }
  for (; b < end; b += 4) {
    const r = load<u32>(b) << MBUF_SHIFT;
    swap(r);
    txFieldsSet(r, ol, keep);
  }
  vlanSet(e, burst, n);
}
