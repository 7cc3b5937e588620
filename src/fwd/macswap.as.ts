// macswap's kernels, in the variants of the SIMD macswap study (twin:
// macswapTwin in macswap.twin.ts; the study's registry: variants.ts). Every
// variant leaves the same bytes and metadata (test/kernels compares them
// with the twin); they differ only in the order of the work, which is what
// DPDK's SSE macswap patches measured:
//   simd            load, shuffle, store per packet; offload fields after
//   simd-ofl        offload fields first (their second step: the mbuf's line
//                   while the packet's line loads)
//   simd-interleave 4 packets at a time: 4 loads interleaved with 4 field
//                   sets, then 4 shuffles, then 4 stores (their third step)
// A packet with fewer than 16 bytes of buffer after its data start takes a
// 12-byte scalar swap, so a vector store never leaves the buffer.
// `e` is the engine's block (fwd.record.ts), `lc` the lcore block (unused),
// `burst` a burst's heap offset.
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_BUF_LEN, M_DATA_OFF, M_VLAN_TCI, M_VLAN_TCI_OUTER } from '../mem/mbuf-layout.as';
import { etherAddrSwap } from '../net/headers.as';
import { FWDE_FLAGS, FWDE_F_QINQ, FWDE_F_VLAN, FWDE_KEEP_HI, FWDE_OL_HI, FWDE_VLAN, FWDE_VLAN_OUTER } from './fwd-layout.as';
import { txFieldsSet } from './tx-fields.as';

/** The mbuf_field_set of do_macswap: rx flags cleared, tx flags, l2/l3 lengths 14/20 (l4 kept), VLAN ids when asked. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function fieldSet(r: u32, olHi: u32, keepHi: u32, vlan: u32, vlanOuter: u32, setVlan: u32, setQinq: u32): void {
  txFieldsSet(r, olHi, keepHi);
  if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
  if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
}

/** At least 16 bytes of buffer from the data start: a 16-byte vector store stays inside. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function roomy(r: u32): bool {
  return <u32>load<u16>(r, M_BUF_LEN) - <u32>load<u16>(r, M_DATA_OFF) >= 16;
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
  const p = mtod(r);
  if (roomy(r)) swapVector(p);
  else etherAddrSwap(p);
}

/** macswap, variant simd: DPDK's SSE macswap as it was before the study's patches. */
export function macswap(e: u32, lc: u32, burst: u32, n: u32): void {
  const olHi = load<u32>(e, FWDE_OL_HI);
  const keepHi = load<u32>(e, FWDE_KEEP_HI);
  const vlan = load<u32>(e, FWDE_VLAN);
  const vlanOuter = load<u32>(e, FWDE_VLAN_OUTER);
  const setVlan = load<u32>(e, FWDE_FLAGS) & FWDE_F_VLAN;
  const setQinq = load<u32>(e, FWDE_FLAGS) & FWDE_F_QINQ;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    swap(r);
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
  }
}

/** macswap, variant simd-ofl: offload fields before the header work (the study's second step). */
export function macswapOfl(e: u32, lc: u32, burst: u32, n: u32): void {
  const olHi = load<u32>(e, FWDE_OL_HI);
  const keepHi = load<u32>(e, FWDE_KEEP_HI);
  const vlan = load<u32>(e, FWDE_VLAN);
  const vlanOuter = load<u32>(e, FWDE_VLAN_OUTER);
  const setVlan = load<u32>(e, FWDE_FLAGS) & FWDE_F_VLAN;
  const setQinq = load<u32>(e, FWDE_FLAGS) & FWDE_F_QINQ;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    fieldSet(r, olHi, keepHi, vlan, vlanOuter, setVlan, setQinq);
    swap(r);
  }
}

/** macswap, variant simd-interleave: four packets at a time, loads, shuffles and stores interleaved (the study's third step). */
export function macswapInterleave(e: u32, lc: u32, burst: u32, n: u32): void {
  const olHi = load<u32>(e, FWDE_OL_HI);
  const keepHi = load<u32>(e, FWDE_KEEP_HI);
  const vlan = load<u32>(e, FWDE_VLAN);
  const vlanOuter = load<u32>(e, FWDE_VLAN_OUTER);
  const setVlan = load<u32>(e, FWDE_FLAGS) & FWDE_F_VLAN;
  const setQinq = load<u32>(e, FWDE_FLAGS) & FWDE_F_QINQ;
  const objs = burst;
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
    const p0 = mtod(r0);
    const p1 = mtod(r1);
    const p2 = mtod(r2);
    const p3 = mtod(r3);
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
