/**
 * Returning transmitted mbufs from a descriptor-ring driver's software ring
 * to their pools: the one place the virtio guest driver and the NIC model
 * reclaim completed tx descriptors.
 *
 * The i40e bulk-free study (DPDK's scalar i40e tx, 2021) is the reason it
 * exists: after the hardware
 * writes DD back, the driver frees a batch of `txRsThresh` mbufs, and doing
 * that with `putBulk` through a fixed 64-entry array beat one `put` per mbuf
 * by 3-10 %, and beat one array sized for the whole batch at high thresholds.
 * All three are kept, selectable, so the study can be repeated here.
 *
 * With fast free (RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE) the application promises
 * one pool and refcnt 1, so handles go straight back with putBulk, no
 * per-mbuf refcount arithmetic (dpkit's pools hold mbufs at refcnt 0, where
 * DPDK's hold them at 1, so each arm clears it: the same store in all three);
 * without it every segment goes through
 * rte_pktmbuf_prefree_seg and runs of one pool are put together.
 */
import { ArgError } from '../errors.js';
import type { Burst, Heap } from '../eal/heap.js';
import { FREE_PENDING_SZ, Mbufs } from '../mem/mbuf.js';
import type { Mempool } from '../mem/mempool.js';


/**
 * How completed tx mbufs go back: the three arms of the i40e bulk-free study
 * (one put each, 64 at a time, all at once), selected by the devarg
 * `tx_free_mode` (the study's entry in the registry: src/fwd/variants.ts).
 */
export type TxFreeMode = 'single' | 'bulk64' | 'bulkall';
export const TX_FREE_MODES: readonly TxFreeMode[] = ['single', 'bulk64', 'bulkall'];
/** The study's winner, the merged i40e code. */
export const TX_FREE_MODE_DEFAULT: TxFreeMode = 'bulk64';

/** Parses a `txFreeMode` value, naming the device on error. */
export function parseTxFreeMode(dev: string, v: string | undefined, dflt: TxFreeMode = TX_FREE_MODE_DEFAULT): TxFreeMode {
  if (v === undefined) return dflt;
  if ((TX_FREE_MODES as readonly string[]).includes(v)) return v as TxFreeMode;
  throw new ArgError(`${dev}: tx_free_mode=${v}: expected one of ${TX_FREE_MODES.join(', ')}`);
}

export class TxReclaim {
  private readonly mb: Mbufs;

  constructor(
    heap: Heap,
    readonly mode: TxFreeMode,
    /** Set when the MBUF_FAST_FREE offload is on: one pool, refcnt 1, direct mbufs. */
    readonly fastFree: boolean,
  ) {
    this.mb = new Mbufs(heap);
  }

  /**
   * Frees the segments in `sw[from..from+n)`, one per tx descriptor, and
   * zeroes their slots. The range does not wrap: a driver reclaims up to the
   * ring's end, then from its start.
   */
  segments(sw: Burst, from: number, n: number): void {
    if (n <= 0) return;
    const mb = this.mb;
    if (this.mode === 'single') {
      // One rte_mempool_put (fast free) or rte_pktmbuf_free_seg per mbuf: the base of the study.
      if (this.fastFree) {
        const mp = mb.poolOf(sw[from]!);
        for (let i = from; i < from + n; i++) {
          mb.clearRefcnt(sw[i]!);
          mp.put(sw[i]!);
        }
      } else {
        for (let i = from; i < from + n; i++) mb.freeSeg(sw[i]!);
      }
    } else if (!this.fastFree) {
      // Refcounts decide what goes back: runs of up to 64 of one pool.
      mb.freeSegBulk(sw, n, from);
    } else if (this.mode === 'bulk64') {
      // The merged i40e code: one putBulk per 64 (RTE_I40E_TX_MAX_FREE_BUF_SZ).
      for (let done = 0; done < n; done += FREE_PENDING_SZ) this.putFast(sw, from + done, Math.min(FREE_PENDING_SZ, n - done));
    } else {
      // bulkall: one putBulk for the whole batch.
      this.putFast(sw, from, n);
    }
    sw.fill(0, from, from + n);
  }

  /**
   * Frees the packets (heads of chains) in `sw[from..from+n)` and zeroes
   * their slots: for drivers that keep one slot per packet (virtio's
   * indirect descriptors).
   */
  packets(sw: Burst, from: number, n: number): void {
    if (n <= 0) return;
    if (this.mode === 'single') {
      for (let i = from; i < from + n; i++) this.mb.free(sw[i]!);
    } else if (this.mode === 'bulkall' && this.fastFree) {
      this.putFast(sw, from, n);
    } else {
      // rte_pktmbuf_free_bulk: runs of 64 per pool, chains followed.
      this.mb.freeBulk(sw, n, from);
    }
    sw.fill(0, from, from + n);
  }

  private putFast(sw: Burst, from: number, n: number): void {
    const mb = this.mb;
    const mp: Mempool = mb.poolOf(sw[from]!);
    for (let i = from; i < from + n; i++) mb.clearRefcnt(sw[i]!);
    mp.putBulk(sw, n, from);
  }
}
