// Guest memory's translation for the vhost kernels (vhost/vhost-queue.as.ts);
// the TypeScript side's is translateIn in guest-memory.ts. The table is
// declared in guest-memory.record.ts.
import { GM_COUNT, GM_REGIONS, GR_GPA, GR_OFFSET, GR_SIZE, GUEST_REGION_SIZE } from './guest-memory-layout.as';

/**
 * GuestMemory.translate: the heap offset of [gpa, gpa + len) when one region
 * of the table at `table` holds it whole, else -1. (`len` is never 0 here:
 * every caller asks for a header and more.)
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function guestTranslate(table: u32, gpa: f64, len: u32): i32 {
  const n = <u32>load<f64>(table, GM_COUNT);
  const flen = <f64>len;
  for (let i: u32 = 0, w = table + GM_REGIONS; i < n; i++, w += GUEST_REGION_SIZE) {
    const off = gpa - load<f64>(w, GR_GPA);
    const size = load<f64>(w, GR_SIZE);
    if (off >= 0 && off < size && flen <= size - off) return <i32>(load<f64>(w, GR_OFFSET) + off);
  }
  return -1;
}
