/**
 * A stream split over several lcores, as TRex divides a stream's rate among
 * its cores: the stream's schedule is cut into bursts of `burst` packets and
 * burst b goes to part b mod parts. Each part keeps the stream's deadlines
 * for the packets it sends, its field variables skip the values the other
 * parts send, and its probes carry the stream's own sequence numbers, so the
 * parts together send exactly the packets one lcore would have, at the same
 * deadlines, each queue seeing its share in order. Random variables cannot
 * skip (xorshift32): each part draws from its own seed instead.
 */
import type { Heap } from '../eal/heap.js';
import type { Pacer } from './pacer.js';
import { GEN_DEC, GEN_INC, GEN_LIST, GEN_VAR_SIZE, GENS_VARS, GENS_W_NB_VARS, GENS_W_RNG, GENV_KIND, GENV_W_CUR, GENV_W_LIST_LEN, GENV_W_MAX, GENV_W_MIN, GENV_W_STEP } from './gen-layout.js';

/** Which share of a stream a sender sends. */
export interface StreamPart {
  /** This part, 0 .. parts-1. */
  index: number;
  /** How many parts the stream is cut into (the lcores sending it). */
  parts: number;
  /** Packets a burst: the unit the schedule is dealt in. */
  burst: number;
}

/** The stream's packet number of the part's packet `j`. */
export function partToStream(p: StreamPart, j: number): number {
  const b = Math.floor(j / p.burst);
  return (b * p.parts + p.index) * p.burst + (j - b * p.burst);
}

/** The part's deadlines: those of the stream's packets it sends. */
export function partPacer(pacer: Pacer, p: StreamPart): Pacer {
  if (p.parts === 1) return pacer;
  return { deadline: (j) => pacer.deadline(partToStream(p, j)) };
}

/** Packets of a stream of `planned` packets that part `p` sends. */
export function partPlanned(planned: number, p: StreamPart): number {
  if (p.parts === 1 || planned === Infinity) return planned;
  const full = Math.floor(planned / p.burst);
  const rest = planned - full * p.burst;
  const mine = full > p.index ? Math.floor((full - p.index - 1) / p.parts) + 1 : 0;
  return mine * p.burst + (rest > 0 && full % p.parts === p.index ? rest : 0);
}

/**
 * Advances the stream block at `s` (heap offset) by `m` packets without
 * sending them: inc, dec and list variables step on as genFill would have.
 * Per burst, not per packet: a part calls it after each of its bursts.
 */
export function skipVars(heap: Heap, s: number, m: number): void {
  const u32 = heap.u32;
  const nb = u32[(s >>> 2) + GENS_W_NB_VARS]!;
  for (let k = 0; k < nb; k++) {
    const v = s + GENS_VARS + k * GEN_VAR_SIZE;
    const w = v >>> 2;
    const kind = heap.u8[v + GENV_KIND]!;
    const cur = u32[w + GENV_W_CUR]!;
    if (kind === GEN_LIST) {
      u32[w + GENV_W_CUR] = (cur + m) % u32[w + GENV_W_LIST_LEN]!;
    } else if (kind === GEN_INC || kind === GEN_DEC) {
      // The values are min, min + step, … (inc; dec from max down): a cycle of `len` values.
      const min = u32[w + GENV_W_MIN]!;
      const max = u32[w + GENV_W_MAX]!;
      const step = u32[w + GENV_W_STEP]!;
      const len = Math.floor((max - min) / step) + 1;
      if (kind === GEN_INC) u32[w + GENV_W_CUR] = min + ((Math.floor((cur - min) / step) + m) % len) * step;
      else u32[w + GENV_W_CUR] = max - ((Math.floor((max - cur) / step) + m) % len) * step;
    }
  }
}

/** Gives part `index` its own random sequence (part 0 keeps the stream's seed, as one lcore sends it). */
export function seedPart(heap: Heap, s: number, index: number): void {
  if (index === 0) return;
  const w = (s >>> 2) + GENS_W_RNG;
  // A multiplicative hash of the part mixed into the seed; xorshift32 must not start at 0.
  const x = (heap.u32[w]! ^ Math.imul(index, 0x9e3779b9)) >>> 0;
  heap.u32[w] = x === 0 ? 0x6d2b79f5 : x;
}
