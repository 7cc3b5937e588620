/**
 * Burst-level operations for user code: the built-in engines' per-burst
 * work, one call over a whole burst in place (a WebAssembly kernel on the
 * `wasm` datapath, its TypeScript twin on `ts`), chosen once when the ops
 * are made, never per call.
 */
import type { Burst, Heap } from '../eal/heap.js';
import { badBurst } from '../ethdev/ethdev.js';
import type { EngineKernel } from '../fwd/engine.js';
import { FWD_ENGINE_SIZE, FWD_STREAM_SIZE, FWDE_W_KEEP_HI, FWDS_W_ENGINE, FWDS_W_MAC } from '../fwd/fwd-layout.js';
import { macOps } from '../fwd/mac.twin.js';

/** The 12 address bytes `macRewrite` writes (destination, then source) as the kernel takes them. Make once per port pair. */
export type MacAddrs = Uint32Array & { readonly length: 3 };

/**
 * Per-burst operations over one heap, for one thread (make them on the lcore
 * that uses them: they keep this thread's kernel instance).
 */
export class BurstOps {
  private readonly u32: Uint32Array;
  /** The mac engine's kernel (or twin) and the engine and stream blocks it reads. */
  private readonly macFwd: EngineKernel;
  private readonly macStream: number;

  constructor(private readonly heap: Heap) {
    this.u32 = heap.u32;
    this.macFwd = macOps(heap);
    // An engine block with no tx flags, every flag bit kept and VLAN ids 0; one stream pointing at it.
    const e = heap.reserve(FWD_ENGINE_SIZE, 64, 'burst ops engine');
    this.u32.fill(0, e >>> 2, (e + FWD_ENGINE_SIZE) >>> 2);
    this.u32[(e >>> 2) + FWDE_W_KEEP_HI] = 0xffffffff;
    this.macStream = heap.reserve(FWD_STREAM_SIZE, 64, 'burst ops stream');
    this.u32.fill(0, this.macStream >>> 2, (this.macStream + FWD_STREAM_SIZE) >>> 2);
    this.u32[(this.macStream >>> 2) + FWDS_W_ENGINE] = e;
  }

  /** The address words for `macRewrite`: `dst` then `src`, 6 bytes each. Setup, not per burst (allocates). */
  macAddrs(dst: Uint8Array, src: Uint8Array): MacAddrs {
    const b = new Uint8Array(12);
    b.set(dst.subarray(0, 6), 0);
    b.set(src.subarray(0, 6), 6);
    const v = new DataView(b.buffer);
    return Uint32Array.of(v.getUint32(0, true), v.getUint32(4, true), v.getUint32(8, true)) as MacAddrs;
  }

  /**
   * testpmd's macfwd over `burst[0..n)`: writes each packet's Ethernet
   * destination and source from `addrs`, clears its rx offload flags, and
   * sets l2_len 14, l3_len 20 and the VLAN tags to 0 (the tx fields a NIC reads).
   * One call of the mac engine's kernel (or its twin on `ts`) per burst; allocates nothing.
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  macRewrite(burst: Burst, n: number, addrs: MacAddrs): void {
    if (burst.buffer !== this.heap.buffer || n > burst.length) throw badBurst('macRewrite', burst, n, this.heap.buffer);
    const w = (this.macStream >>> 2) + FWDS_W_MAC;
    this.u32[w] = addrs[0]!;
    this.u32[w + 1] = addrs[1]!;
    this.u32[w + 2] = addrs[2]!;
    this.macFwd(this.macStream, this.heap.lcore, burst.byteOffset, n);
  }
}
