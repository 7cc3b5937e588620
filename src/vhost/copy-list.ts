/**
 * The copies of one burst, gathered while the rings are walked and done in
 * one wasm call (`copyList`): walking the guest's descriptors is checks and
 * branches, done in TypeScript; moving the bytes is `memory.copy`, 3x faster
 * than `copyWithin` on shared memory, and a wasm call per copy would cost
 * more than a 64-byte copy itself.
 *
 * Entries are (dst, src, len) heap byte offsets, checked by the caller.
 * `flush()` must run before the other side may see the bytes (before the
 * used index is published).
 */
import type { Heap } from '../eal/heap.js';
import type { FwdKernel } from '../eal/kernels.js';

/** Copies gathered before a flush is forced. */
export const COPY_LIST_MAX = 1024;

/** 16-byte slots for the virtio-net headers of a batch: each is copied like packet bytes. */
const HDR_SLOTS = COPY_LIST_MAX / 2;

export class CopyList {
  private readonly list: Uint32Array;
  private readonly slots: number;
  private nSlots = 0;
  private readonly u8: Uint8Array;
  private readonly kernel: FwdKernel | null;
  private n = 0;

  constructor(heap: Heap) {
    this.list = heap.scratch('vhost copy list', COPY_LIST_MAX * 3);
    this.slots = heap.scratch('vhost header slots', HDR_SLOTS * 4).byteOffset;
    this.u8 = heap.u8;
    this.kernel = heap.kernels?.fwd ?? null;
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
    if (this.kernel !== null) this.kernel.copyList(this.list.byteOffset, n);
    else this.copyListTs(n);
  }

  /** The twin of the copyList kernel. */
  private copyListTs(n: number): void {
    const l = this.list;
    const u8 = this.u8;
    for (let e = 0; e < n * 3; e += 3) u8.copyWithin(l[e]!, l[e + 1]!, l[e + 1]! + l[e + 2]!);
  }
}
