/**
 * testpmd's --record-core-cycles and --record-burst-stats: the queue hooks
 * an lcore installs only when asked (so the plain data path stays as it is),
 * and the lines fwd_stats_display prints from what they recorded.
 *
 * JavaScript has no TSC: time is performance.now() in nanoseconds, printed
 * as DPDK prints cycles at a 1000 MHz clock, so one cycle reads as one ns.
 */
import type { Burst, Heap } from '../../eal/heap.js';
import type { RxQueue, TxQueue } from '../../ethdev/driver.js';
import { MAX_PKT_BURST } from '../../fwd/engine.js';
import { BURST_SPREAD_SIZE, BS_COUNT, LCC_BUSY_NS, LCC_BUSY_POLLS, LCC_IDLE_POLLS, LCC_TOTAL_NS, LCORE_CYCLES_SIZE } from './cycles-layout.js';

export { LCC_BUSY_NS, LCC_BUSY_POLLS, LCC_IDLE_POLLS, LCC_TOTAL_NS };

/** The clock dpkit reports cycles at: 1000 MHz, so cycles are nanoseconds. */
export const NS_CLOCK_MHZ = 1000;

/** Reserves a zeroed lcoreCycles block; @returns its first Float64 slot. */
export function newLcoreCycles(heap: Heap): number {
  return heap.reserve(LCORE_CYCLES_SIZE, 64, 'lcore cycles') >>> 3;
}

/** Reserves a zeroed burstSpread block; @returns its first Float64 slot. */
export function newBurstSpread(heap: Heap): number {
  return heap.reserve(BURST_SPREAD_SIZE, 64, 'burst spread') >>> 3;
}

/** Zeroes a block of `bytes` from Float64 slot `slot` (at forwarding start, as testpmd clears its counts). */
export function clearSlots(heap: Heap, slot: number, bytes: number): void {
  heap.f64.fill(0, slot, slot + bytes / 8);
}

export { BURST_SPREAD_SIZE, LCORE_CYCLES_SIZE };

/** An rx queue that counts each burst's size into the spread at `slot` (testpmd's inc_rx_burst_stats). */
export function spreadRxQueue(q: RxQueue, heap: Heap, slot: number): RxQueue {
  const f64 = heap.f64;
  return {
    rxBurst(burst: Burst, n: number): number {
      const got = q.rxBurst(burst, n);
      f64[slot + BS_COUNT + got]!++;
      return got;
    },
    release: q.release?.bind(q),
    descriptor: () => q.descriptor(),
  };
}

/** A tx queue that counts each burst's accepted size into the spread at `slot` (inc_tx_burst_stats). */
export function spreadTxQueue(q: TxQueue, heap: Heap, slot: number): TxQueue {
  const f64 = heap.f64;
  return {
    txBurst(burst: Burst, n: number): number {
      const sent = q.txBurst(burst, n);
      f64[slot + BS_COUNT + sent]!++;
      return sent;
    },
    flush: q.flush?.bind(q),
    descriptor: () => q.descriptor(),
  };
}

/**
 * pkt_burst_stats_display: `  RX-bursts : 7 [86% of 32 pkts + 14% of 0 pkts]`,
 * the empty bursts and the two most frequent sizes; '' when there was no burst.
 */
export function burstStatsLine(rxTx: 'RX' | 'TX', spread: ArrayLike<number>): string {
  const stats = [spread[0] ?? 0, 0, 0];
  const sizes = [0, 0, 0];
  let total = stats[0]!;
  for (let n = 1; n <= MAX_PKT_BURST; n++) {
    const b = spread[n] ?? 0;
    if (b === 0) continue;
    total += b;
    if (b > stats[1]!) {
      [stats[2], sizes[2], stats[1], sizes[1]] = [stats[1]!, sizes[1]!, b, n];
    } else if (b > stats[2]!) {
      [stats[2], sizes[2]] = [b, n];
    }
  }
  if (total === 0) return '';
  let line = `  ${rxTx}-bursts : ${total} [`;
  let sum = 0;
  let sumPct = 0;
  for (let i = 0; i < 4; i++) {
    if (i === 3) return line + `${100 - sumPct}% of other]`;
    sum += stats[i]!;
    if (sum === total) return line + `${100 - sumPct}% of ${sizes[i]} pkts]`;
    const pct = Math.trunc((stats[i]! / total) * 100);
    line += `${pct}% of ${sizes[i]} pkts + `;
    sumPct += pct;
  }
  return line;
}

/**
 * fwd_stats_display's cycles line (after the accumulated block), for `packets`
 * (tx for txonly and flowgen, rx otherwise), then what the figures mean here.
 * @returns '' when no packet moved, as DPDK prints nothing then.
 */
export function cyclesLines(mode: string, busyNs: number, packets: number): string {
  if (packets === 0) return '';
  return [
    '',
    `  CPU cycles/packet=${(busyNs / packets).toFixed(2)} (total cycles=${Math.round(busyNs)} / total ${mode} packets=${packets}) at ${NS_CLOCK_MHZ} MHz Clock`,
    '  (dpkit: JavaScript has no TSC; a cycle here is one nanosecond of performance.now())',
  ].join('\n');
}
