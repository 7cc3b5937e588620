/**
 * A vring's state as the backend keeps it in the heap: what the control
 * plane set through vhost-user messages, published for whichever lcore polls
 * the queue, and the indices that lcore moves. One block of Float64 slots per
 * vring (two cache lines); the control plane bumps S_GEN after every change,
 * and the data path re-reads the block when it sees a new generation.
 */
import type { Heap } from '../eal/heap.js';

export const S_GEN = 0;
/** 1 when the ring may be used: addresses translated, memory table set, ring enabled. */
export const S_READY = 1;
export const S_NUM = 2;
/** Guest-physical addresses of the three parts. */
export const S_DESC = 3;
export const S_AVAIL = 4;
export const S_USED = 5;
/** Notifier heap offsets (NO_NOTIFIER = -1): call the guest, the guest's kick. */
export const S_CALL = 6;
export const S_KICK = 7;
/** The next avail entry to take and the next used entry to fill (u16 ring indices). */
export const S_LAST_AVAIL = 8;
export const S_LAST_USED = 9;
/** F_* bits from the negotiated features. */
export const S_FLAGS = 10;
/** Counters (one writer: the polling lcore). */
export const S_BAD_CHAINS = 11;
export const S_DROPS = 12;
export const S_CALLS = 13;
export const S_AVAIL_READS = 14;
export const S_NOMBUF = 15;
export const STATE_SLOTS = 16;

export const F_MRG_RXBUF = 1;
export const F_EVENT_IDX = 2;
export const F_INDIRECT = 4;
/** The vhost enqueue study's other arm: read the avail index before every packet instead of once per burst. */
export const F_AVAIL_PER_PACKET = 8;

/** Reserves `n` zeroed state blocks; @returns the f64 slot index of the first. */
export function reserveVringStates(heap: Heap, n: number): number {
  const at = heap.reserve(n * STATE_SLOTS * 8, 64, 'vhost vring state');
  return at >>> 3;
}
