// Recording into a latency histogram (hist.record.ts) from a kernel; the
// twin is histRecordTwin in hist.ts. `h` is the histogram's heap offset, `v`
// a latency in nanoseconds.
import { LH_BITS, LH_COUNT, LH_COUNTS, LH_MAX, LH_MIN, LH_NB_COUNTS, LH_OVERFLOW, LH_SUM } from './hist-layout.as';

/** The bucket of `v`: v itself below 2^bits, else (e - bits + 1) * 2^(bits-1) + (v >> (e - bits + 1)) for e = floor(log2 v). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function histIndex(bits: u32, v: u64): u32 {
  if (v < (<u64>1) << bits) return <u32>v;
  const b = 64 - bits - <u32>clz<u64>(v);
  return (b << (bits - 1)) + <u32>(v >> b);
}

/** Adds one sample `v` to the histogram at `h`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function histRecord(h: u32, v: u64): void {
  const nb = load<u32>(h, LH_NB_COUNTS);
  let i = histIndex(load<u32>(h, LH_BITS), v);
  if (i >= nb) {
    i = nb - 1;
    store<f64>(h, load<f64>(h, LH_OVERFLOW) + 1, LH_OVERFLOW);
  }
  const c = h + LH_COUNTS + (i << 3);
  store<f64>(c, load<f64>(c) + 1);
  const x = <f64>v;
  const count = load<f64>(h, LH_COUNT);
  if (count == 0 || x < load<f64>(h, LH_MIN)) store<f64>(h, x, LH_MIN);
  if (x > load<f64>(h, LH_MAX)) store<f64>(h, x, LH_MAX);
  store<f64>(h, count + 1, LH_COUNT);
  store<f64>(h, load<f64>(h, LH_SUM) + x, LH_SUM);
}
