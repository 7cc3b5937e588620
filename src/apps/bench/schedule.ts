/**
 * The order of runs. Pair-major: pair 1 of every cell, then pair 2, … so a
 * drift of the machine's speed over the run spreads over every cell; inside
 * a pair every arm of the cell runs once, in an order shuffled per pair, so
 * neither A nor B is always the one that runs first (ABAB… with the phase
 * randomized). Seeded: the same config replays the same schedule.
 */
import { seededRandom } from './stats.js';

export interface Run {
  /** Index into the cells. */
  cell: number;
  /** Index into the cell's arms. */
  arm: number;
  /** Which pair (round) of the cell this run belongs to, from 0. */
  pair: number;
}

export function schedule(cells: number, arms: number, pairs: number, seed = 1): Run[] {
  const rand = seededRandom(seed);
  const runs: Run[] = [];
  const order = Array.from({ length: arms }, (_, i) => i);
  for (let pair = 0; pair < pairs; pair++) {
    for (let cell = 0; cell < cells; cell++) {
      // Fisher-Yates shuffle of the arms for this pair.
      for (let i = arms - 1; i > 0; i--) {
        const j = rand(i + 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      for (const arm of order) runs.push({ cell, arm, pair });
    }
  }
  return runs;
}
