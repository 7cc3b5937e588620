/**
 * Shared statistics counters: per-queue and per-stream counts that the lcore
 * owning the queue updates and the control plane reads while it runs.
 *
 * Why this is safe without locks: every counter has exactly one writer (the
 * lcore polling that queue), which adds with a plain store; readers only
 * load. Counters are Float64 slots in the shared heap, 8-byte aligned, so
 * counts stay exact up to 2^53. The JS memory model allows a racy read of a
 * Float64 to tear in principle, but V8 compiles aligned Float64Array
 * accesses to single 8-byte moves, which x86-64 and arm64 execute atomically:
 * a reader sees an old or a new value, never half of each. A reader may see
 * a queue's packets updated before its bytes; totals are exact once the
 * lcore is quiet.
 */
import type { Heap } from '../eal/heap.js';
import { RXQ_STATS_SIZE } from './stats-layout.js';

/** Rx and tx queue counters (RXQ_PACKETS, …): Float64 slot indexes from the block's first slot; declared in stats.record.ts. */
export { RXQ_BYTES, RXQ_ERRORS, RXQ_MISSED, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from './stats-layout.js';
/** Slots per queue block (one cache line: no false sharing between queues). */
export const QSTATS_SLOTS = RXQ_STATS_SIZE / 8;

/** Reserves a zeroed counter block for one queue; returns its first Float64 slot index. */
export function newQueueStats(heap: Heap): number {
  return heap.reserve(QSTATS_SLOTS * 8, 64, 'queue stats') >>> 3;
}

/** rte_eth_stats. */
export interface EthStats {
  /** Packets received. */
  ipackets: number;
  /** Packets sent. */
  opackets: number;
  /** Bytes received. */
  ibytes: number;
  /** Bytes sent. */
  obytes: number;
  /** Packets the port dropped because no rx descriptor was free (the queue was not polled in time). */
  imissed: number;
  /** Packets received with errors, and dropped. */
  ierrors: number;
  /** Packets the port failed to send. */
  oerrors: number;
  /** Rx mbuf allocation failures (the pool was empty). */
  rxNombuf: number;
  /** Packets received, per rx queue. */
  qIpackets: number[];
  /** Packets sent, per tx queue. */
  qOpackets: number[];
  /** Bytes received, per rx queue. */
  qIbytes: number[];
  /** Bytes sent, per tx queue. */
  qObytes: number[];
  /** Packets dropped with an error, per rx queue (DPDK's q_errors). */
  qErrors: number[];
}
