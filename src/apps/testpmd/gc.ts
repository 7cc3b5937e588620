/**
 * Garbage collections on the forwarding lcores, while they forward. A V8
 * pause stops the lcore's loop as a descheduled DPDK lcore stops: its rx
 * rings fill and, past their size, drop. The lcores are meant to allocate
 * nothing per packet, so they should collect almost never; this is how a
 * long run (`dpkit soak`) checks it.
 *
 * A polling worker never turns its event loop, so the `gc` performance
 * entries a PerformanceObserver would get there never arrive. Each lcore
 * keeps a v8 GCProfiler running instead (V8 fills it from its own GC
 * callbacks) and hands over what it collected through its lcoreGc block when
 * the main thread asks (gc.record.ts): at its next look at the stop flag,
 * which costs the loop one atomic load per look and an allocation per
 * answer, not per packet.
 */
import type { GCProfiler } from 'node:v8';
import type { Heap } from '../../eal/heap.js';
import { LCORE_GC_PAUSES_MAX, LCORE_GC_SIZE, LGCF_MAX_NS, LGCF_PAUSES, LGCF_TOTAL_NS, LGC_ANSWERED, LGC_ASK, LGC_COUNT } from './gc-layout.js';

/** Reserves a zeroed lcoreGc block; @returns its byte offset. */
export function newLcoreGc(heap: Heap): number {
  return heap.reserve(LCORE_GC_SIZE, 64, 'lcore gc');
}

/** Zeroes the block at `block` (a new start: nothing asked, nothing answered). */
export function clearLcoreGc(heap: Heap, block: number): void {
  heap.u8.fill(0, block, block + LCORE_GC_SIZE);
}

/** Garbage collections over a span of time on one thread or several. */
export interface GcSpan {
  /** Collections. */
  count: number;
  /** Their pauses summed, ms. */
  totalMs: number;
  /** The longest, ms (0 with none). */
  maxMs: number;
  /** Each pause, ms; may hold fewer than `count` when an lcore collected more than it lists per answer. */
  pausesMs: number[];
}

export function emptyGcSpan(): GcSpan {
  return { count: 0, totalMs: 0, maxMs: 0, pausesMs: [] };
}

/** Adds `b` into `a`. */
export function addGcSpan(a: GcSpan, b: GcSpan): void {
  a.count += b.count;
  a.totalMs += b.totalMs;
  a.maxMs = Math.max(a.maxMs, b.maxMs);
  for (const p of b.pausesMs) a.pausesMs.push(p);
}

/**
 * The lcore's side: answers an ask from the profiler it runs. `check()` is
 * what the loop calls at its stop-flag cadence: one atomic load, and an
 * answer only when asked.
 */
export class LcoreGcAnswer {
  private readonly u32: Uint32Array;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly w: number;
  private readonly s: number;
  private answered = 0;
  /** Collections since the lcore began forwarding, over every answer. */
  total = 0;

  constructor(
    heap: Heap,
    block: number,
    private readonly profiler: GCProfiler,
  ) {
    this.u32 = heap.u32;
    this.i32 = heap.i32;
    this.f64 = heap.f64;
    this.w = block >>> 2;
    this.s = block >>> 3;
  }

  /** Answers when the main thread has asked since the last answer. Cheap when it has not. */
  check(): void {
    if (Atomics.load(this.i32, this.w + LGC_ASK) !== this.answered) this.answer();
  }

  /** Stops the profiler (ending its span), restarts it, and publishes what the span held. */
  private answer(): void {
    const stats = this.profiler.stop()?.statistics ?? [];
    this.profiler.start();
    const f64 = this.f64;
    let total = 0;
    let max = 0;
    for (let i = 0; i < stats.length; i++) {
      const ns = stats[i]!.cost * 1000; // cost is µs
      total += ns;
      if (ns > max) max = ns;
      if (i < LCORE_GC_PAUSES_MAX) f64[this.s + LGCF_PAUSES + i] = ns;
    }
    this.u32[this.w + LGC_COUNT] = stats.length;
    f64[this.s + LGCF_TOTAL_NS] = total;
    f64[this.s + LGCF_MAX_NS] = max;
    this.total += stats.length;
    this.answered = Atomics.load(this.i32, this.w + LGC_ASK);
    // Published last: the main thread reads the fields only once it sees this.
    Atomics.store(this.i32, this.w + LGC_ANSWERED, this.answered);
  }

  /** At the end of the loop: the profiler's last span, counted into `total`. @returns `total`. */
  finish(): number {
    this.total += this.profiler.stop()?.statistics.length ?? 0;
    return this.total;
  }
}

/**
 * The main thread's side, one per lcore block and start: `ask()`, then
 * `take()` once `answered()`; each answer is taken once. An ask left
 * unanswered (the lcore was descheduled past the caller's patience) stays
 * open: `ask()` does not ask again, and the answer, when it comes, covers
 * the whole time since the previous one. Nothing is lost, and the lcore
 * never writes a block the main thread is reading.
 */
export class LcoreGcAsk {
  private readonly i32: Int32Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;
  private readonly w: number;
  private readonly s: number;

  constructor(heap: Heap, block: number) {
    this.i32 = heap.i32;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
    this.w = block >>> 2;
    this.s = block >>> 3;
  }

  /** An ask not yet taken (answered or not). */
  private open = false;

  /** Whether the lcore has answered the last ask. */
  answered(): boolean {
    return Atomics.load(this.i32, this.w + LGC_ANSWERED) === Atomics.load(this.i32, this.w + LGC_ASK);
  }

  /** Asks for the collections since the last answer, unless an ask is still open. */
  ask(): void {
    if (this.open) return;
    this.open = true;
    Atomics.add(this.i32, this.w + LGC_ASK, 1);
  }

  /** The answer to the last ask, once; undefined while unanswered or already taken. */
  take(): GcSpan | undefined {
    if (!this.open || !this.answered()) return undefined;
    this.open = false;
    const count = this.u32[this.w + LGC_COUNT]!;
    const pausesMs: number[] = [];
    for (let i = 0; i < Math.min(count, LCORE_GC_PAUSES_MAX); i++) pausesMs.push(this.f64[this.s + LGCF_PAUSES + i]! / 1e6);
    return { count, totalMs: this.f64[this.s + LGCF_TOTAL_NS]! / 1e6, maxMs: this.f64[this.s + LGCF_MAX_NS]! / 1e6, pausesMs };
  }
}
