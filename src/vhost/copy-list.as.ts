// The vhost copy list's kernel (twin: copyListTs in copy-list.ts).
import { copyBytes } from '../mem/copy.as';

/**
 * vhost's byte work for a burst: `n` copies described as (dst, src, len)
 * u32 triples at `list`. The addresses were checked against guest memory
 * before they were listed; this only moves bytes.
 */
export function vhostCopyList(list: u32, n: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const e = list + i * 12;
    copyBytes(load<u32>(e), load<u32>(e, 4), load<u32>(e, 8));
  }
}
