/**
 * The split virtqueue (virtio 1.x, 2.6) as the host walks it: descriptor
 * table, avail ring and used ring at three guest addresses, each translated
 * once when the ring is set up (vhost-user's SET_VRING_ADDR), and descriptor
 * chains walked with every guest-supplied value checked. A chain may not
 * visit more descriptors than its table holds (a loop ends), a `next` must
 * stay in the table, an indirect table must be whole 16-byte descriptors
 * inside guest memory and may not nest, and every buffer must lie inside one
 * guest memory region. A bad chain is reported as a negative code for the
 * caller to drop and count: never an exception, never an access outside
 * guest memory (DPDK's vhost CVE-2020-10722..10726 were these checks).
 */
import type { GuestMemory } from './guest-memory.js';

import { DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE } from './vring-layout.js';

/** The descriptor's size and flags (declared in vring.record.ts). */
export { DESC_SIZE, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE };
/** Largest queue (virtio: 32768 for split rings). */
export const VRING_MAX_SIZE = 32768;

/** Why a chain was refused. */
export const ChainError = {
  HEAD: -1, // head index outside the table
  NEXT: -2, // a next index outside the table
  LOOP: -3, // more descriptors than the table holds
  ADDR: -4, // a buffer not inside one guest memory region
  INDIRECT: -5, // an indirect table of bad length, nested, or with NEXT set beside INDIRECT
  TOO_LONG: -6, // more buffers than the caller can take
} as const;

/** A legal split-ring size: a power of two in [1, VRING_MAX_SIZE] (2.6). */
export function isVringSize(num: number): boolean {
  return Number.isInteger(num) && num >= 1 && num <= VRING_MAX_SIZE && (num & (num - 1)) === 0;
}

/** Byte sizes of the three parts for `num` entries (2.6: desc 16-aligned, avail 2, used 4). */
export function vringSizes(num: number): { desc: number; avail: number; used: number } {
  return { desc: DESC_SIZE * num, avail: 6 + 2 * num, used: 6 + 8 * num };
}

/** A chain's buffers, as heap byte offsets and lengths, in order; preallocated, reused per chain. */
export class Chain {
  readonly offset: Uint32Array;
  readonly length: Uint32Array;
  /** 1 for device-writable buffers (VRING_DESC_F_WRITE). */
  readonly writable: Uint8Array;
  count = 0;

  constructor(readonly max: number) {
    this.offset = new Uint32Array(max);
    this.length = new Uint32Array(max);
    this.writable = new Uint8Array(max);
  }
}

export class Vring {
  /** Heap offsets of the three parts. */
  readonly desc: number;
  readonly avail: number;
  readonly used: number;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;

  readonly num: number;

  private constructor(
    readonly mem: GuestMemory,
    num: number,
    desc: number,
    avail: number,
    used: number,
  ) {
    // Offsets come from the f64 memory table: stored as integers so V8 keeps
    // the fields untagged (see VhostQueue.sync).
    this.num = num | 0;
    this.desc = desc >>> 0;
    this.avail = avail >>> 0;
    this.used = used >>> 0;
    this.u16 = mem.heap.u16;
    this.u32 = mem.heap.u32;
  }

  /**
   * Translates a ring's three guest addresses (SET_VRING_NUM and
   * SET_VRING_ADDR). @returns the ring, or a string saying what is wrong.
   */
  static open(mem: GuestMemory, num: number, descGpa: number, availGpa: number, usedGpa: number): Vring | string {
    if (!isVringSize(num)) return `queue size ${num} is not a power of two in [1, ${VRING_MAX_SIZE}]`;
    const s = vringSizes(num);
    const desc = mem.translate(descGpa, s.desc);
    const avail = mem.translate(availGpa, s.avail);
    const used = mem.translate(usedGpa, s.used);
    if (desc < 0 || avail < 0 || used < 0) return `ring of ${num} at desc 0x${descGpa.toString(16)}, avail 0x${availGpa.toString(16)}, used 0x${usedGpa.toString(16)} is not inside guest memory`;
    if (desc % 16 !== 0 || avail % 2 !== 0 || used % 4 !== 0) return 'ring parts are misaligned (desc 16, avail 2, used 4 bytes)';
    return new Vring(mem, num, desc, avail, used);
  }

  /**
   * Walks the chain at `head` into `out`, checking everything the guest
   * wrote. @returns the number of buffers, or a ChainError code (negative).
   */
  walk(head: number, out: Chain): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const mem = this.mem;
    out.count = 0;
    if (head >= this.num) return ChainError.HEAD;
    let table = this.desc;
    let size = this.num;
    let idx = head;
    let visited = 0;
    let indirect = false;
    let n = 0;
    for (;;) {
      if (++visited > size) return ChainError.LOOP;
      const d = table + idx * DESC_SIZE;
      const addr = u32[(d >>> 2) + 1]! * 4294967296 + u32[d >>> 2]!;
      const len = u32[(d >>> 2) + 2]!;
      const flags = u16[(d >>> 1) + 6]!;
      if ((flags & VRING_DESC_F_INDIRECT) !== 0) {
        // 2.6.5.3: one indirect table per chain, not nested, not chained on, whole descriptors.
        if (indirect || (flags & VRING_DESC_F_NEXT) !== 0 || len === 0 || len % DESC_SIZE !== 0 || len / DESC_SIZE > VRING_MAX_SIZE) return ChainError.INDIRECT;
        const at = mem.translate(addr, len);
        if (at < 0 || at % 4 !== 0) return ChainError.ADDR;
        table = at;
        size = len / DESC_SIZE;
        idx = 0;
        visited = 0;
        indirect = true;
        continue;
      }
      if (len > 0) {
        const at = mem.translate(addr, len);
        if (at < 0) return ChainError.ADDR;
        if (n === out.max) return ChainError.TOO_LONG;
        out.offset[n] = at;
        out.length[n] = len;
        out.writable[n] = (flags & VRING_DESC_F_WRITE) !== 0 ? 1 : 0;
        n++;
      }
      if ((flags & VRING_DESC_F_NEXT) === 0) break;
      idx = u16[(d >>> 1) + 7]!;
      if (idx >= size) return ChainError.NEXT;
    }
    out.count = n;
    return n;
  }
}
