// Byte copies between two distinct buffers (packet data into an mbuf, a
// guest buffer, a capture), shared by the kernels.

/** Up to this many bytes, copyBytes moves 16 at a time in place of calling memory.copy. */
export const SHORT_COPY_MAX: u32 = 128;

/**
 * Copies `len` bytes from `src` to `dst`; the ranges must not overlap. V8
 * compiles memory.copy to a call into C (about 4 ns here, whatever the
 * length up to 128 B); a short copy inline is half that, and keeps the loop
 * small enough for the CPU to run several packets' cache misses at once.
 * Beyond SHORT_COPY_MAX memory.copy's wide moves win.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function copyBytes(dst: u32, src: u32, len: u32): void {
  if (len > SHORT_COPY_MAX) {
    memory.copy(dst, src, len);
  } else if (len >= 16) {
    let o: u32 = 0;
    for (; o + 16 <= len; o += 16) v128.store(dst + o, v128.load(src + o));
    // The tail as one more 16-byte move ending at len (it overlaps what was copied, harmlessly).
    if (o < len) v128.store(dst + len - 16, v128.load(src + len - 16));
  } else if (len >= 8) {
    store<u64>(dst, load<u64>(src));
    store<u64>(dst + len - 8, load<u64>(src + len - 8));
  } else if (len >= 4) {
    store<u32>(dst, load<u32>(src));
    store<u32>(dst + len - 4, load<u32>(src + len - 4));
  } else {
    for (let i: u32 = 0; i < len; i++) store<u8>(dst + i, load<u8>(src + i));
  }
}
