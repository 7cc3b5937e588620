// dpkit for a user's own AssemblyScript kernel: `import { … } from 'dpkit/as'`
// in a file `dpkit build-kernel` (or buildKernel()) compiles. What a kernel
// needs to walk a burst in the shared heap: the mbuf record's layout (M_*
// byte offsets from a record, MBUF_SHIFT, OL_* flags), rte_pktmbuf_mtod, the
// packet-header constants and big-endian loads dpkit's engine kernels use,
// and the short inline copy. Arguments and results are u32 heap offsets and
// counts, as dpkit's own kernels take (a burst is `burst.byteOffset` in
// TypeScript). A kernel must keep no static data and allocate nothing: its
// memory is the heap every thread shares.

import { MBUF_SHIFT, M_DATA_LEN, M_PKT_LEN } from '../src/mem/mbuf-layout.as';

export * from '../src/mem/mbuf-layout.as';
export { mtod } from '../src/mem/mbuf.as';
export { copyBytes } from '../src/mem/copy.as';
export { ETHER_HDR_LEN, ETHER_TYPE_IPV4, ETHER_TYPE_IPV6, IPV4_HDR_LEN, IPV6_HDR_LEN, IPPROTO_TCP, IPPROTO_UDP, etherSkipTags, loadBe16 } from '../src/net/headers.as';

/** The mbuf record (heap byte offset) of packet `i` of the burst at heap offset `burst`: what M_* offsets and mtod take. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function mbufAt(burst: u32, i: u32): u32 {
  return load<u32>(burst + (i << 2)) << MBUF_SHIFT;
}

/** rte_pktmbuf_data_len of the record at `r`: the bytes in its first segment. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function dataLen(r: u32): u32 {
  return <u32>load<u16>(r, M_DATA_LEN);
}

/** rte_pktmbuf_pkt_len of the record at `r`: the packet's bytes over all segments. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function pktLen(r: u32): u32 {
  return load<u32>(r, M_PKT_LEN);
}

/** Stores the low 16 bits of `v` big-endian (network order) at heap offset `p`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function storeBe16(p: u32, v: u32): void {
  store<u16>(p, bswap<u16>(<u16>v));
}
