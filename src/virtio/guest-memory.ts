/**
 * Guest memory as vhost sees it: a table of regions, each a guest-physical
 * range backed by bytes of the shared heap, exactly the model of
 * vhost-user's SET_MEM_TABLE (there the backing is an mmap'ed fd; in process
 * it is part of the heap). The host reaches guest memory only through
 * `translate`, which refuses any range not wholly inside one region: a
 * guest's descriptor cannot make the host read or write anything else.
 *
 * The table lives in the heap, so every lcore sees the one the control plane
 * set. Guest-physical addresses are 64-bit in virtio; they are held as f64,
 * exact up to 2^53, and anything above is outside every region.
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { GM_F_COUNT, GM_F_REGIONS, GR_F_GPA, GR_F_OFFSET, GR_F_SIZE, GUEST_MEMORY_BYTES, GUEST_REGION_SIZE, MAX_REGIONS } from './guest-memory-layout.js';

export { GUEST_MEMORY_BYTES, MAX_REGIONS };
/** f64 words per region. */
const REGION_WORDS = GUEST_REGION_SIZE / 8;

/**
 * The translation itself, over the table whose first f64 word is `base`: the
 * heap offset of guest range [gpa, gpa + len), or -1 when no one region holds
 * it whole. The twins of the vhost kernels call it too (the kernels' own copy
 * is guestTranslate in guest-memory.as.ts).
 */
export function translateIn(f: Float64Array, base: number, gpa: number, len: number): number {
  const n = f[base + GM_F_COUNT]!;
  for (let i = 0, w = base + GM_F_REGIONS; i < n; i++, w += REGION_WORDS) {
    const off = gpa - f[w + GR_F_GPA]!;
    // Both tests on the distance from the region's start: no sum that could round.
    if (off >= 0 && off < f[w + GR_F_SIZE]! && len <= f[w + GR_F_SIZE]! - off) return f[w + GR_F_OFFSET]! + off;
  }
  return -1;
}

export interface Region {
  /** Guest-physical address of the first byte. */
  gpa: number;
  size: number;
  /** Heap byte offset of the first byte. */
  offset: number;
}

export class GuestMemory {
  private readonly f64: Float64Array;
  private readonly base: number;

  /** Opens the table at heap byte offset `at` (made by `create`). */
  constructor(
    readonly heap: Heap,
    readonly at: number,
  ) {
    this.f64 = heap.f64;
    this.base = at >>> 3;
  }

  /** Reserves an empty table in the heap (the control plane's side). */
  static create(heap: Heap): GuestMemory {
    const at = heap.reserve(GUEST_MEMORY_BYTES, 64, 'guest memory table');
    heap.f64.fill(0, at >>> 3, (at + GUEST_MEMORY_BYTES) >>> 3);
    return new GuestMemory(heap, at);
  }

  /**
   * Replaces the table (SET_MEM_TABLE). Regions must lie inside the heap, and
   * must not overlap in guest-physical space.
   */
  setRegions(regions: Region[]): void {
    if (regions.length > MAX_REGIONS) throw new ArgError(`guest memory: ${regions.length} regions, at most ${MAX_REGIONS}`);
    const sorted = [...regions].sort((a, b) => a.gpa - b.gpa);
    sorted.forEach((r, i) => {
      if (!Number.isSafeInteger(r.gpa) || r.gpa < 0 || !Number.isSafeInteger(r.size) || r.size <= 0) throw new ArgError(`guest memory: region ${i}: bad address or size`);
      if (!Number.isSafeInteger(r.gpa + r.size)) throw new ArgError(`guest memory: region ${i} ends beyond 2^53`);
      if (r.offset < 0 || r.offset + r.size > this.heap.size) throw new ArgError(`guest memory: region ${i} is not inside the heap`);
      const prev = sorted[i - 1];
      if (prev && prev.gpa + prev.size > r.gpa) throw new ArgError(`guest memory: regions at 0x${prev.gpa.toString(16)} and 0x${r.gpa.toString(16)} overlap`);
    });
    const f = this.f64;
    const b = this.base;
    f[b + GM_F_COUNT] = 0; // readers see no region while the table changes
    sorted.forEach((r, i) => {
      const w = b + GM_F_REGIONS + i * REGION_WORDS;
      f[w + GR_F_GPA] = r.gpa;
      f[w + GR_F_SIZE] = r.size;
      f[w + GR_F_OFFSET] = r.offset;
    });
    f[b + GM_F_COUNT] = sorted.length;
  }

  get regionCount(): number {
    return this.f64[this.base + GM_F_COUNT]!;
  }

  /**
   * The heap offset of guest range [gpa, gpa + len), or -1 when the range is
   * not wholly inside one region (or len is 0 or negative).
   */
  translate(gpa: number, len: number): number {
    if (!(len > 0) || !(gpa >= 0)) return -1;
    return translateIn(this.f64, this.base, gpa, len);
  }
}
