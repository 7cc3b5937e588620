/** `dpkit build-kernel IN.ts -o OUT.wasm`: buildKernel() from the command line. */
import { parseArgs } from 'node:util';
import { buildKernel } from '../api/kernel.js';
import { ArgError } from '../errors.js';

/**
 * Compiles one user kernel.
 * @returns the exit code: 0 when OUT was written. Throws ArgError for a bad
 *   command line, KernelError when the kernel does not build.
 */
export async function buildKernelMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, strict: true, allowPositionals: true, options: { out: { type: 'string', short: 'o' } } });
  if (positionals.length !== 1 || values.out === undefined) throw new ArgError('build-kernel: usage: dpkit build-kernel IN.ts -o OUT.wasm');
  await buildKernel(positionals[0]!, values.out);
  process.stdout.write(`build-kernel: ${values.out}\n`);
  return 0;
}
