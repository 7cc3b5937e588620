/**
 * Compiling AssemblyScript into a kernel module for the shared heap: the
 * compiler flags and checks every kernel shares, dpkit's own module
 * (scripts/build-kernels.js) and a user's (`buildKernel`).
 *
 * A kernel imports the heap's memory (`env.memory`, shared, up to 4 GiB) and
 * brings no runtime and no static data: a data segment would be written into
 * the shared heap at its start by every instance (one per thread), over
 * whatever lives there. The compile refuses such a module.
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernelError } from './kernels.js';

/** asc's flags for a kernel: optimised, no asserts, no runtime, the heap's shared memory imported, SIMD and atomics. */
export const KERNEL_ASC_FLAGS: readonly string[] = [
  '-O3',
  '--noAssert',
  '--runtime',
  'stub',
  '--importMemory',
  '--sharedMemory',
  '--initialMemory',
  '1',
  '--maximumMemory',
  '65536',
  '--enable',
  'threads,simd',
];

/** The wasm section id of a data segment. */
const DATA_SECTION = 11;

/** Ids of the sections of a wasm binary, in order; throws KernelError on a truncated one. */
export function wasmSectionIds(bytes: Uint8Array): number[] {
  const ids: number[] = [];
  let p = 8;
  while (p < bytes.length) {
    const id = bytes[p++]!;
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      if (p >= bytes.length || shift > 28) throw new KernelError('wasm module: truncated section header');
      const b = bytes[p++]!;
      size += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
    }
    ids.push(id);
    p += size;
  }
  if (p !== bytes.length) throw new KernelError('wasm module: last section runs past the end');
  return ids;
}

/** Whether a wasm binary carries a data section (static data a kernel must not have). */
export function hasDataSection(bytes: Uint8Array): boolean {
  return wasmSectionIds(bytes).includes(DATA_SECTION);
}

/** What compileKernel needs besides its input and output. */
export interface CompileKernelOptions {
  /**
   * Serve `import … from 'dpkit/…'` from this folder (dpkit's package root)
   * whatever node_modules holds: a kernel compiles against the layout of the
   * dpkit that will run it.
   */
  dpkitRoot?: string;
  /** Where the compiler's diagnostics go (default: stderr). */
  log?: (text: string) => void;
}

/** The AssemblyScript compiler's entry, loaded on first use (a user project may not have installed it). */
type AscMain = (argv: string[], api: {
  readFile: (name: string, baseDir: string) => Promise<string | null>;
  writeFile: (name: string, contents: Uint8Array | string, baseDir: string) => Promise<void>;
  stdout: { write(s: string | Uint8Array): void };
  stderr: { write(s: string | Uint8Array): void };
}) => Promise<{ error: Error | null }>;

async function ascMain(): Promise<AscMain> {
  try {
    const asc = (await import('assemblyscript/asc')) as unknown as { main: AscMain };
    return asc.main;
  } catch {
    throw new KernelError('AssemblyScript is not installed: `npm install --save-dev assemblyscript` in your project to build kernels');
  }
}

/**
 * Compiles the AssemblyScript file `input` into the kernel module `output`
 * (folders made as needed) with KERNEL_ASC_FLAGS. Nothing is written unless
 * the module compiles and has no data section.
 * @throws KernelError naming `input`: compile errors (the compiler's
 *   diagnostics went to `log`), a data section, AssemblyScript missing.
 */
export async function compileKernel(input: string, output: string, opts: CompileKernelOptions = {}): Promise<void> {
  const main = await ascMain();
  const log = opts.log ?? ((s: string) => process.stderr.write(s));
  const root = opts.dpkitRoot;
  const marker = `${sep}node_modules${sep}dpkit${sep}`;
  let wasm: Uint8Array | undefined;
  const { error } = await main([input, '--outFile', 'kernel.wasm', ...KERNEL_ASC_FLAGS], {
    readFile: async (name, baseDir) => {
      let path = resolve(baseDir, name);
      const at = root === undefined ? -1 : path.lastIndexOf(marker);
      if (at >= 0) path = resolve(root!, path.slice(at + marker.length));
      try {
        return await readFile(path, 'utf8');
      } catch {
        return null;
      }
    },
    writeFile: async (name, contents) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') wasm = contents;
    },
    stdout: { write: (s) => log(String(s)) },
    stderr: { write: (s) => log(typeof s === 'string' ? s : Buffer.from(s).toString()) },
  });
  if (error || !wasm) throw new KernelError(`${input}: does not compile${error ? `: ${error.message}` : ''}`);
  if (hasDataSection(wasm)) {
    throw new KernelError(`${input}: the module has static data (strings, arrays, globals with initialisers in memory); a kernel must not write into the shared heap`);
  }
  await mkdir(dirname(output), { recursive: true });
  await writeFile(output, wasm);
}

/** A path from a path or a file: URL. */
export function pathOf(p: string | URL): string {
  return typeof p === 'string' ? p : fileURLToPath(p);
}
