/**
 * A vring's state as the backend keeps it in the heap (declared in
 * vring-state.record.ts: the S_* slots and F_* bits): what the control plane
 * set through vhost-user messages, published for whichever lcore polls the
 * queue, and the indices that lcore moves. The control plane bumps S_GEN
 * after every change, and the data path re-reads the block when it sees a
 * new generation.
 */
import type { Heap } from '../eal/heap.js';
import { VRING_STATE_SIZE } from './vring-state-layout.js';

export * from './vring-state-layout.js';

/** f64 slots per vring's block. */
export const STATE_SLOTS = VRING_STATE_SIZE / 8;

/** Reserves `n` zeroed state blocks; @returns the f64 slot index of the first. */
export function reserveVringStates(heap: Heap, n: number): number {
  const at = heap.reserve(n * VRING_STATE_SIZE, 64, 'vhost vring state');
  return at >>> 3;
}
