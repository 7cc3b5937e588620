/**
 * The WebAssembly kernels: per-burst work that runs on the heap's shared
 * memory in place. Every `*.as.ts` of the tree is built into one module
 * (scripts/build-kernels.js says why one); each thread instantiates it once
 * over its heap (Heap.kernels), as every DPDK lcore runs the same code over
 * the same hugepages.
 *
 * An owner takes its kernels by export name when a queue, pool or engine is
 * set up, typed by its own interface (an ops object whose other implementation
 * is the TypeScript twin beside the kernel), so which one runs is decided
 * once, never per call:
 *
 *     const ops: NullOps = k ? { rx: k.fn('nullRx'), tx: k.fn('nullTx') } : nullTwin(...);
 *
 * `datapath: 'ts'` gives a heap without kernels: everything runs the twins.
 */
import { readFileSync } from 'node:fs';
import { DpkitError } from '../errors.js';
import { packageRoot } from '../package.js';

/** Which implementation a thread's data path uses. */
export type Datapath = 'wasm' | 'ts';

/** A kernel as JavaScript sees it: u32 arguments (heap byte offsets, counts), a u32 result. */
export type KernelFn = (...args: number[]) => number;

/** The kernels could not be loaded: not built, or built from other sources. */
export class KernelError extends DpkitError {
  constructor(message: string) {
    super('EKERNEL', message);
  }
}

/** The one kernel module, instantiated over one heap's memory. */
export class Kernels {
  /** The `layout…` globals: each record file's layout id the module was compiled with (test/eal/layout.test.ts). */
  readonly layout: Readonly<Record<string, number>>;

  constructor(private readonly exports: Readonly<Record<string, unknown>>) {
    const layout: Record<string, number> = {};
    for (const [k, v] of Object.entries(exports)) {
      if (k.startsWith('layout')) layout[k] = (v as { value: number }).value >>> 0; // u32 globals read as i32
    }
    this.layout = layout;
  }

  /**
   * The kernel exported as `name`, for an owner's ops object (typed there).
   * Throws KernelError when the module has no such export (a stale build).
   */
  fn(name: string): KernelFn {
    const f = this.exports[name];
    if (typeof f !== 'function') throw new KernelError(`kernel ${name}: not in ${WASM}; run \`npm run build\``);
    return f as KernelFn;
  }
}

const WASM = 'build/kernels/dpkit.wasm';
/** One compile per thread; every heap of the thread instantiates it. */
let compiled: WebAssembly.Module | undefined;

/** Instantiates the kernel module over `memory` (synchronous: the module is small). */
export function loadKernels(memory: WebAssembly.Memory): Kernels {
  if (!compiled) {
    const file = new URL(WASM, packageRoot());
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      throw new KernelError(`kernels: ${file.pathname} not found: run \`npm run build\` (or use datapath ts)`);
    }
    compiled = new WebAssembly.Module(bytes);
  }
  return new Kernels(new WebAssembly.Instance(compiled, { env: { memory } }).exports);
}
