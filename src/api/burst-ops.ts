/**
 * Burst-level operations for user code: the built-in engines' per-burst
 * work, one call over a whole burst in place (a WebAssembly kernel on the
 * `wasm` datapath, its TypeScript twin on `ts`), chosen once when the ops
 * are made, never per call.
 */
import type { Burst, Heap } from '../eal/heap.js';
import { badBurst } from '../ethdev/ethdev.js';
import { Mbufs } from '../mem/mbuf.js';

/** The 12 address bytes `macRewrite` writes (destination, then source) as the kernel takes them. Make once per port pair. */
export type MacAddrs = Uint32Array & { readonly length: 3 };

/** testpmd's l2_len / l3_len for an untagged IPv4 packet, which macfwd sets for the NIC. */
const L2_LEN = 14;
const L3_LEN = 20;

/**
 * Per-burst operations over one heap, for one thread (make them on the lcore
 * that uses them: they keep this thread's kernel instance).
 */
export class BurstOps {
  private readonly mb: Mbufs;
  private readonly u8: Uint8Array;
  private readonly addr = new Uint8Array(12);
  private readonly addrView = new DataView(this.addr.buffer);
  private readonly macFwd: ((objs: number, n: number, w0: number, w1: number, w2: number, olHi: number, keepHi: number, vlan: number, vlanOuter: number) => void) | null;

  constructor(private readonly heap: Heap) {
    this.mb = new Mbufs(heap);
    this.u8 = heap.u8;
    this.macFwd = heap.kernels?.fwd.macFwd ?? null;
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
   * One kernel call per burst; allocates nothing.
   * @throws ArgError when `burst` is not in the heap or shorter than `n`.
   */
  macRewrite(burst: Burst, n: number, addrs: MacAddrs): void {
    if (burst.buffer !== this.heap.buffer || n > burst.length) throw badBurst('macRewrite', burst, n, this.heap.buffer);
    if (this.macFwd !== null) return this.macFwd(burst.byteOffset, n, addrs[0]!, addrs[1]!, addrs[2]!, 0, 0xffffffff, 0, 0);
    // The twin, through the mbuf accessors.
    const mb = this.mb;
    const a = this.addrView;
    a.setUint32(0, addrs[0]!, true);
    a.setUint32(4, addrs[1]!, true);
    a.setUint32(8, addrs[2]!, true);
    for (let i = 0; i < n; i++) {
      const h = burst[i]!;
      this.u8.set(this.addr, mb.mtod(h));
      mb.setOlFlags(h, 0);
      mb.setTxOffload(h, L2_LEN, L3_LEN, mb.l4Len(h));
      mb.setVlanTci(h, 0);
      mb.setVlanTciOuter(h, 0);
    }
  }
}
