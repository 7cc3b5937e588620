/**
 * The copies of one burst, gathered while the rings are walked and done in
 * one wasm call (`vhostCopyList`, copy-list.as.ts): walking the guest's descriptors is checks and
 * branches, done in TypeScript; moving the bytes is `memory.copy`, 3x faster
 * than `copyWithin` on shared memory, and a wasm call per copy would cost
 * more than a 64-byte copy itself.
 *
 * Entries are (dst, src, len) heap byte offsets, checked by the caller.
 * `flush()` must run before the other side may see the bytes (before the
 * used index is published).
 */
import type { Burst, Heap } from '../eal/heap.js';

/** Copies gathered before a flush is forced. */
export const COPY_LIST_MAX = 1024;

/** 16-byte slots for the virtio-net headers of a batch: each is copied like packet bytes. */
const HDR_SLOTS = COPY_LIST_MAX / 2;

export class CopyList {
  private readonly list: Burst;
  private readonly slots: number;
  private nSlots = 0;
  /** The kernel, or its twin: chosen once. */
  private readonly copy: (list: number, n: number) => void;
  private n = 0;

  constructor(heap: Heap) {
    this.list = heap.scratch('vhost copy list', COPY_LIST_MAX * 3);
    this.slots = heap.scratch('vhost header slots', HDR_SLOTS * 4).heapOffset;
    const k = heap.kernels;
    this.copy = k !== null ? k.fn('vhostCopyList') : copyListTs(heap.u8, heap.u32);
  }

  add(dst: number, src: number, len: number): void {
    if (this.n === COPY_LIST_MAX) this.flush();
    const e = this.n++ * 3;
    this.list[e] = dst;
    this.list[e + 1] = src;
    this.list[e + 2] = len;
  }

  /** A 16-byte scratch slot whose bytes stay put until the next flush (a header to copy). */
  slot(): number {
    if (this.nSlots === HDR_SLOTS) this.flush();
    return this.slots + 16 * this.nSlots++;
  }

  flush(): void {
    const n = this.n;
    this.nSlots = 0;
    if (n === 0) return;
    this.n = 0;
    this.copy(this.list.heapOffset, n);
  }
}

/** The twin of the vhostCopyList kernel, same signature: `n` (dst, src, len) triples at heap byte `list`. */
export function copyListTs(u8: Uint8Array, u32: Uint32Array): (list: number, n: number) => void {
  return (list, n) => {
    const l = list >>> 2;
    for (let e = l; e < l + n * 3; e += 3) u8.copyWithin(u32[e]!, u32[e + 1]!, u32[e + 1]! + u32[e + 2]!);
  };
}
