// A user's kernel: decrement the IPv4 TTL of every packet of a burst and fix
// the header checksum incrementally (RFC 1624, eqn. 3), as a router does, in
// one call per burst. Built by the example's build step (`dpkit build-kernel`
// or buildKernel()), loaded with loadKernel() on the lcore.
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4, IPV4_HDR_LEN, dataLen, loadBe16, mbufAt, mtod, storeBe16 } from 'dpkit/as';

const TTL: u32 = 8;
const CKSUM: u32 = 10;

/**
 * For each of the `n` packets of the burst at heap offset `burst`: when it
 * holds an untagged Ethernet + IPv4 header with a TTL above 0, TTL - 1 and the
 * checksum updated. Returns how many packets it changed; others are untouched.
 */
export function ttlDec(burst: u32, n: u32): u32 {
  let changed: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = mbufAt(burst, i);
    if (dataLen(r) < ETHER_HDR_LEN + IPV4_HDR_LEN) continue;
    const p = mtod(r);
    const ip = p + ETHER_HDR_LEN;
    if (loadBe16(p + 12) != ETHER_TYPE_IPV4 || load<u8>(ip) >> 4 != 4) continue;
    const word = loadBe16(ip + TTL); // TTL and protocol
    if (word < 0x100) continue; // TTL 0
    const next = word - 0x100;
    // HC' = ~(~HC + ~m + m'), in one's complement.
    let sum = (~loadBe16(ip + CKSUM) & 0xffff) + (~word & 0xffff) + next;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    storeBe16(ip + TTL, next);
    storeBe16(ip + CKSUM, ~sum);
    changed++;
  }
  return changed;
}
