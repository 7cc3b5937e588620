/**
 * Timestamps as seconds + nanoseconds, and conversions to what files and
 * mbufs hold, exactly and without BigInt (no allocation per packet): a u64 of
 * nanoseconds (the mbuf's rx timestamp, like DPDK's dynamic field) and a u64
 * count of pcapng time units.
 */

/** A reusable result: the caller owns one and passes it in. */
export interface Timestamp {
  sec: number;
  nsec: number;
}

/** Stores sec * 1e9 + nsec as a little-endian u64 at u32[word], u32[word + 1]. */
export function storeNs(u32: Uint32Array, word: number, sec: number, nsec: number): void {
  storeUnits(u32, word, sec, nsec, 1e9);
}

/** Stores sec * unitsPerSec + frac (frac < unitsPerSec <= 2^30) as a u64 in two u32 words, low first. */
export function storeUnits(u32: Uint32Array, word: number, sec: number, frac: number, unitsPerSec: number): void {
  // sec < 2^32: split it in 16-bit halves so every product is exact.
  const p0 = (sec & 0xffff) * unitsPerSec + frac;
  const p1 = Math.floor(sec / 65536) * unitsPerSec;
  const low = p0 + (p1 % 65536) * 65536;
  u32[word] = low % 4294967296;
  u32[word + 1] = Math.floor(p1 / 65536) + Math.floor(low / 4294967296);
}

/** The inverse of storeNs. */
export function loadNs(u32: Uint32Array, word: number, out: Timestamp): Timestamp {
  return unitsToTs(u32[word + 1]!, u32[word]!, 1e9, out);
}

/**
 * (hi * 2^32 + lo) units of 1 / unitsPerSec seconds as sec + nsec: long
 * division in 16-bit digits, exact while unitsPerSec <= 2^37.
 */
export function unitsToTs(hi: number, lo: number, unitsPerSec: number, out: Timestamp): Timestamp {
  // Unrolled over the four digits: no array per packet.
  let cur = hi >>> 16;
  let q = Math.floor(cur / unitsPerSec);
  let rem = cur - q * unitsPerSec;
  cur = rem * 65536 + (hi & 0xffff);
  let d = Math.floor(cur / unitsPerSec);
  rem = cur - d * unitsPerSec;
  q = q * 65536 + d;
  cur = rem * 65536 + (lo >>> 16);
  d = Math.floor(cur / unitsPerSec);
  rem = cur - d * unitsPerSec;
  q = q * 65536 + d;
  cur = rem * 65536 + (lo & 0xffff);
  d = Math.floor(cur / unitsPerSec);
  rem = cur - d * unitsPerSec;
  out.sec = q * 65536 + d;
  out.nsec = unitsPerSec === 1e9 ? rem : Math.min(999_999_999, Math.round(rem * (1e9 / unitsPerSec)));
  return out;
}
