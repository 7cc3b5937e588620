import type { GenClock } from '../../src/gen/generate.js';

/**
 * A clock that moves only when read or slept on: each read costs `step` ns,
 * a sleep jumps ahead. Runs are then exact and instant on a loaded machine.
 */
export function fakeClock(step = 200): GenClock & { t: number } {
  const c = {
    t: 0,
    now: () => (c.t += step),
    sleep: async (ns: number) => {
      c.t += Math.max(0, ns);
      await new Promise((r) => setImmediate(r));
    },
  };
  return c;
}

