/**
 * The packed virtqueue (virtio 1.1, 2.8) as the host walks it: one ring of
 * descriptors that the driver makes available and the device overwrites with
 * used elements, both sides going round it with a wrap counter, plus two
 * 4-byte event suppression areas (the driver's and the device's). vhost-user
 * passes the three addresses where a split ring's desc, avail and used go.
 *
 * Every guest-supplied value is checked as the split ring's walk checks it
 * (vring.ts): a chain may not be longer than the ring, an indirect table must
 * be whole descriptors inside guest memory and may not nest, every buffer
 * must lie inside one guest region. A bad chain is a negative ChainError for
 * the caller to return to the guest with length 0 and count.
 */
import type { GuestMemory } from './guest-memory.js';
import { PACKED_EVENT_FLAGS, PACKED_EVENT_SIZE, PDESC_SIZE, RING_EVENT_FLAGS_DESC, RING_EVENT_FLAGS_DISABLE, RING_EVENT_FLAGS_ENABLE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from './packed-layout.js';
import { ChainError, VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT, VRING_DESC_F_WRITE, VRING_MAX_SIZE, isVringSize, type Chain } from './vring.js';

export { PACKED_EVENT_FLAGS, PDESC_SIZE, RING_EVENT_FLAGS_DESC, RING_EVENT_FLAGS_DISABLE, RING_EVENT_FLAGS_ENABLE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED };

/** Whether the descriptor flags `flags` say available to a device whose avail wrap counter is `wrap` (0 or 1). */
export function descIsAvail(flags: number, wrap: number): boolean {
  return ((flags & VRING_PACKED_DESC_F_AVAIL) !== 0 ? 1 : 0) === wrap && ((flags & VRING_PACKED_DESC_F_USED) !== 0 ? 1 : 0) !== wrap;
}

/** The flags of a used element written with used wrap counter `wrap` (`write`: an rx buffer, as DPDK marks them). */
export function usedFlags(wrap: number, write: boolean): number {
  return (wrap !== 0 ? VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED : 0) | (write ? VRING_DESC_F_WRITE : 0);
}

/** A position and its wrap counter as SET_VRING_BASE / GET_VRING_BASE carry them for a packed ring: bit 15 the counter. */
export const encodeBase = (pos: number, wrap: number): number => (pos & 0x7fff) | (wrap << 15);

export class PackedRing {
  /** Heap offsets of the descriptor ring and the two event areas. */
  readonly desc: number;
  readonly driverEvent: number;
  readonly deviceEvent: number;
  /** Descriptors of the chain the last walk took from the ring (what the used element skips). */
  descs = 0;
  /** The buffer id of the chain the last walk took. */
  id = 0;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;

  readonly num: number;

  private constructor(
    readonly mem: GuestMemory,
    num: number,
    desc: number,
    driverEvent: number,
    deviceEvent: number,
  ) {
    // Integers, as Vring's: offsets from the f64 memory table would make double fields.
    this.num = num | 0;
    this.desc = desc >>> 0;
    this.driverEvent = driverEvent >>> 0;
    this.deviceEvent = deviceEvent >>> 0;
    this.u16 = mem.heap.u16;
    this.u32 = mem.heap.u32;
  }

  /**
   * Translates the ring's three guest addresses (desc, driver area, device
   * area: SET_VRING_ADDR's desc, avail and used). dpkit keeps the split
   * ring's power-of-two sizes (DPDK and QEMU use them too).
   * @returns the ring, or a string saying what is wrong.
   */
  static open(mem: GuestMemory, num: number, descGpa: number, driverGpa: number, deviceGpa: number): PackedRing | string {
    if (!isVringSize(num)) return `queue size ${num} is not a power of two in [1, ${VRING_MAX_SIZE}]`;
    const desc = mem.translate(descGpa, PDESC_SIZE * num);
    const drv = mem.translate(driverGpa, PACKED_EVENT_SIZE);
    const dev = mem.translate(deviceGpa, PACKED_EVENT_SIZE);
    if (desc < 0 || drv < 0 || dev < 0) return `packed ring of ${num} at desc 0x${descGpa.toString(16)}, driver area 0x${driverGpa.toString(16)}, device area 0x${deviceGpa.toString(16)} is not inside guest memory`;
    if (desc % 16 !== 0 || drv % 4 !== 0 || dev % 4 !== 0) return 'packed ring parts are misaligned (desc 16, event areas 4 bytes)';
    return new PackedRing(mem, num, desc, drv, dev);
  }

  /** The flags of the descriptor at position `pos`, read with acquire (the driver writes them last). */
  flagsAt(pos: number): number {
    return Atomics.load(this.u16, (this.desc + pos * PDESC_SIZE + 14) >>> 1);
  }

  /**
   * Walks the available chain starting at position `pos` (whose flags the
   * caller found available) into `out`; `descs` and `id` tell how many ring
   * descriptors it spans and its buffer id. @returns the number of buffers,
   * or a ChainError code (negative; `descs` is then the whole chain as its
   * NEXT bits say, at least 1, for the caller to return with length 0).
   */
  walk(pos: number, wrap: number, out: Chain): number {
    const r = this.walkChain(pos, wrap, out);
    if (r < 0) {
      out.count = 0;
      this.descs = this.chainLength(pos, wrap);
    }
    return r;
  }

  /** Descriptors of the chain at `pos` as its NEXT bits say (a refused chain is skipped whole), at most the ring. */
  private chainLength(pos: number, wrap: number): number {
    let n = 1;
    let p = pos;
    let w = wrap;
    while (n < this.num && (this.flagsAt(p) & VRING_DESC_F_NEXT) !== 0) {
      if (++p === this.num) {
        p = 0;
        w ^= 1;
      }
      if (!descIsAvail(this.flagsAt(p), w)) break;
      n++;
    }
    return n;
  }

  private walkChain(pos: number, wrap: number, out: Chain): number {
    const u16 = this.u16;
    const u32 = this.u32;
    const num = this.num;
    out.count = 0;
    this.descs = 0;
    let n = 0;
    let p = pos;
    let w = wrap;
    for (;;) {
      if (this.descs === num) return ChainError.LOOP; // a chain longer than the ring
      if (this.descs > 0 && !descIsAvail(this.flagsAt(p), w)) return ChainError.NEXT; // NEXT into a descriptor not made available
      const d = this.desc + p * PDESC_SIZE;
      this.descs++;
      const addr = u32[(d >>> 2) + 1]! * 4294967296 + u32[d >>> 2]!;
      const len = u32[(d >>> 2) + 2]!;
      const flags = u16[(d >>> 1) + 7]!;
      this.id = u16[(d >>> 1) + 6]!;
      if ((flags & VRING_DESC_F_INDIRECT) !== 0) {
        // 2.8.19: an indirect descriptor is alone in its chain, a table of whole descriptors, not nested.
        if ((flags & VRING_DESC_F_NEXT) !== 0 || this.descs > 1 || len === 0 || len % PDESC_SIZE !== 0 || len / PDESC_SIZE > VRING_MAX_SIZE) return ChainError.INDIRECT;
        const at = this.mem.translate(addr, len);
        if (at < 0 || at % 4 !== 0) return ChainError.ADDR;
        for (let i = 0; i < len / PDESC_SIZE; i++) {
          const e = at + i * PDESC_SIZE;
          const eflags = u16[(e >>> 1) + 7]!;
          if ((eflags & VRING_DESC_F_INDIRECT) !== 0) return ChainError.INDIRECT;
          const r = this.buffer(out, n, u32[(e >>> 2) + 1]! * 4294967296 + u32[e >>> 2]!, u32[(e >>> 2) + 2]!, eflags);
          if (r < 0) return r;
          n = r;
        }
        break;
      }
      const r = this.buffer(out, n, addr, len, flags);
      if (r < 0) return r;
      n = r;
      if ((flags & VRING_DESC_F_NEXT) === 0) break;
      if (++p === num) {
        p = 0;
        w ^= 1;
      }
    }
    out.count = n;
    return n;
  }

  /** Adds one buffer to `out` at `n`. @returns the new count or a ChainError. */
  private buffer(out: Chain, n: number, addr: number, len: number, flags: number): number {
    if (len === 0) return n;
    const at = this.mem.translate(addr, len);
    if (at < 0) return ChainError.ADDR;
    if (n === out.max) return ChainError.TOO_LONG;
    out.offset[n] = at;
    out.length[n] = len;
    out.writable[n] = (flags & VRING_DESC_F_WRITE) !== 0 ? 1 : 0;
    return n + 1;
  }

  /**
   * Writes a used element at position `pos`: id and length now, the flags
   * (which hand it to the driver) only when `flags` >= 0. A caller whose
   * bytes are not yet copied passes -1 and writes the flags later (setFlags).
   */
  used(pos: number, id: number, len: number, flags: number): void {
    const d = this.desc + pos * PDESC_SIZE;
    this.u32[(d >>> 2) + 2] = len;
    this.u16[(d >>> 1) + 6] = id;
    if (flags >= 0) Atomics.store(this.u16, (d >>> 1) + 7, flags);
  }

  /** Hands the used element at `pos` to the driver (release: its id, length and bytes are written). */
  setFlags(pos: number, flags: number): void {
    Atomics.store(this.u16, (this.desc + pos * PDESC_SIZE + 14) >>> 1, flags);
  }
}
