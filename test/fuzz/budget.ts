// The fuzz targets' budget, one place for the three files: a run count in the suite
// (DPKIT_FUZZ_RUNS, default 300), or N seconds a target in a campaign (DPKIT_FUZZ_SECONDS, set by
// `npm run fuzz`). DPKIT_FUZZ_SEED fixes fast-check's seed: a campaign passes its own, so a
// target that hangs (a synchronous loop no deadline can interrupt; scripts/fuzz.js kills it)
// replays input for input with the seed the campaign printed.
import fc from 'fast-check';

export const seconds = Number(process.env['DPKIT_FUZZ_SECONDS'] ?? 0);
export const runs = Number(process.env['DPKIT_FUZZ_RUNS'] ?? 300);
const seed = process.env['DPKIT_FUZZ_SEED'] === undefined ? undefined : Number(process.env['DPKIT_FUZZ_SEED']);
if (seed !== undefined && !Number.isInteger(seed)) throw new Error(`DPKIT_FUZZ_SEED=${process.env['DPKIT_FUZZ_SEED']}: expected an integer`);

/** fast-check's settings for one target: a run count (`count`, default `runs`), or a time budget with no count limit. */
export function budget(count = runs): fc.Parameters<unknown> {
  const p: fc.Parameters<unknown> = seconds > 0 ? { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : { numRuns: count };
  return seed === undefined ? p : { ...p, seed };
}

/** A campaign's record (docs/reliability.md): executions per target. */
export function report(name: string, n: number, detail = ''): void {
  if (seconds > 0) console.log(`fuzz ${name}: ${n} executions in ${seconds} s${detail}`);
}

const tracing = process.env['DPKIT_FUZZ_TRACE'] === '1';
/** With DPKIT_FUZZ_TRACE=1, writes `name` and input `v` to stderr before it runs (synchronously: the last line before a hang is its input). */
export function trace(name: string, v: unknown): void {
  if (tracing) process.stderr.write(`fuzz ${name}: ${fc.stringify(v)}\n`);
}
