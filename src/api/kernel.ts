/**
 * A user's own per-burst kernels: AssemblyScript compiled against dpkit's
 * mbuf layout (`import { … } from 'dpkit/as'`), loaded on an lcore over the
 * same shared memory as dpkit's kernels, called once per burst with heap
 * offsets, as dpkit calls its own.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { compileKernel, hasDataSection, pathOf } from '../eal/kernel-build.js';
import { KernelError, type KernelFn } from '../eal/kernels.js';
import { packageRoot } from '../package.js';

/** What `buildKernel` takes besides its files. */
export interface BuildKernelOptions {
  /** Where the compiler's diagnostics go (default: stderr). */
  log?: (text: string) => void;
}

/**
 * Compiles the AssemblyScript kernel `input` (a `.ts` file) into the wasm
 * module `output`, as dpkit compiles its own: optimised, the heap's shared
 * memory imported, no runtime, SIMD and atomics. `import … from 'dpkit/as'`
 * resolves to this dpkit's mbuf layout and helpers. Needs the
 * `assemblyscript` package installed in the project. The CLI form is
 * `dpkit build-kernel IN.ts -o OUT.wasm`.
 * @returns when `output` is written; nothing is written on failure.
 * @throws KernelError naming `input` when it does not compile (diagnostics
 *   went to `log`), has static data (which would land in the shared heap),
 *   or AssemblyScript is missing; ArgError when `input` is not a `.ts` file.
 */
export async function buildKernel(input: string | URL, output: string | URL, opts: BuildKernelOptions = {}): Promise<void> {
  const src = pathOf(input);
  if (!src.endsWith('.ts')) throw new ArgError(`buildKernel: ${src}: an AssemblyScript kernel is a .ts file`);
  await compileKernel(src, pathOf(output), { dpkitRoot: fileURLToPath(packageRoot()), ...(opts.log ? { log: opts.log } : {}) });
}

/** A loaded kernel's functions by name; each takes and returns u32s (heap offsets, counts). */
export type UserKernel<N extends string> = { readonly [K in N]: KernelFn };

/** Each thread compiles a file once. */
const compiled = new Map<string, WebAssembly.Module>();

/**
 * Instantiates the kernel module at `file` (from `buildKernel`) over
 * `heap`'s shared memory on the calling thread (an lcore: call it in
 * `main(ctx)` with `ctx.heap`), and returns the exports `names` asks for.
 * Setup, not per burst: it compiles the file once per thread.
 * @returns the functions `names` lists, typed by them.
 * @throws KernelError naming the file when it cannot be read, is not a
 *   kernel module (no imported shared memory, static data, imports dpkit
 *   does not give), or lacks one of `names`; ArgError when the heap has no
 *   wasm memory.
 */
export function loadKernel<const N extends string>(heap: Heap, file: string | URL, names: readonly N[]): UserKernel<N> {
  const path = pathOf(file);
  if (!heap.memory) throw new ArgError(`loadKernel ${path}: this heap has no WebAssembly memory (its memory provider gives none)`);
  let mod = compiled.get(path);
  if (!mod) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (e) {
      throw new KernelError(`loadKernel ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}); build it with \`dpkit build-kernel\``);
    }
    try {
      mod = new WebAssembly.Module(bytes);
    } catch (e) {
      throw new KernelError(`loadKernel ${path}: not a wasm module (${(e as Error).message})`);
    }
    if (hasDataSection(bytes)) throw new KernelError(`loadKernel ${path}: the module has static data, which would land in the shared heap`);
    checkImports(path, mod);
    compiled.set(path, mod);
  }
  const abort = (_msg: number, _file: number, line: number, col: number): never => {
    throw new KernelError(`${path}: kernel aborted at line ${line}:${col}`);
  };
  let exports: Readonly<Record<string, unknown>>;
  try {
    exports = new WebAssembly.Instance(mod, { env: { memory: heap.memory, abort } }).exports;
  } catch (e) {
    // A memory declared unshared or smaller than the heap's maximum.
    throw new KernelError(`loadKernel ${path}: ${(e as Error).message}`);
  }
  const out: Partial<Record<N, KernelFn>> = {};
  for (const name of names) {
    const f = exports[name];
    if (typeof f !== 'function') throw new KernelError(`loadKernel ${path}: no exported function ${name}`);
    out[name] = f as KernelFn;
  }
  return out as UserKernel<N>;
}

/** A kernel imports the shared memory as env.memory, and nothing else but env.abort. */
function checkImports(path: string, mod: WebAssembly.Module): void {
  let memory = false;
  // Module.imports is standard; the typings here (no DOM lib) lack it.
  const imports = (WebAssembly.Module as unknown as { imports(m: WebAssembly.Module): { module: string; name: string; kind: string }[] }).imports(mod);
  for (const imp of imports) {
    const name = `${imp.module}.${imp.name}`;
    if (name === 'env.memory' && imp.kind === 'memory') memory = true;
    else if (name !== 'env.abort' || imp.kind !== 'function') {
      throw new KernelError(`loadKernel ${path}: imports ${name} (${imp.kind}), which dpkit does not give a kernel: build it with \`dpkit build-kernel\``);
    }
  }
  if (!memory) throw new KernelError(`loadKernel ${path}: does not import the heap's memory (env.memory): build it with \`dpkit build-kernel\``);
}
