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

/** See src/kernels/as/vhost.as.ts. Offsets are heap byte offsets. (Moves beside src/vhost and src/drivers/virtio with its kernels.) */
export interface VhostKernel {
  enqueueFast(mbufs: number, n: number, desc: number, availRing: number, usedRing: number, mask: number, num: number, lastAvail: number, usedIdx: number, avail: number, table: number, perPacket: number, dsts: number): number;
  rxFast(burst: number, n: number, usedRing: number, mask: number, lastUsed: number, ready: number, sw: number, limit: number, free: number, numFree: number, cap: number, port: number, stats: number): number;
  dequeueFast(mbufs: number, n: number, desc: number, availRing: number, usedRing: number, mask: number, num: number, lastAvail: number, usedIdx: number, table: number, segRoom: number, port: number, srcs: number): number;
  txFast(burst: number, n: number, state: number, nextFree: number, sw: number, ndesc: number, desc: number, availRing: number, mask: number, idx: number, gpaHi: number, stats: number): number;
  txCleanup(usedRing: number, mask: number, ready: number, num: number, state: number, sw: number, nextFree: number, ndesc: number, stage: number, inOrder: number): number;
  fillOne(mbufs: number, count: number, free: number, numFree: number, sw: number, desc: number, availRing: number, mask: number, idx: number, offset: number, cap: number, gpaHi: number): number;
}

export type MacswapKernelFn = (objs: number, n: number, olHi: number, keepHi: number, vlan: number, vlanOuter: number, setVlan: number, setQinq: number) => void;

/** See src/kernels/as/fwd.as.ts. (Moves beside src/fwd and the drivers with its kernels.) */
export interface FwdKernel {
  /** mbufPktLenSum (mem/mbuf.as.ts) under its old name, for net_vhost's burstBytes until it counts with Mbufs.pktLenSum. */
  pktLenSum(objs: number, n: number): number;
  macswap: MacswapKernelFn;
  macswapOfl: MacswapKernelFn;
  macswapInterleave: MacswapKernelFn;
  /** 5tswap (twin: fwd/5tswap.ts); the arguments are macswap's. */
  fiveTupleSwap: MacswapKernelFn;
  /** vhost's copies for a burst: (dst, src, len) triples (twin: src/vhost/copy-list.ts). */
  copyList(list: number, count: number): void;
  macFwd(objs: number, n: number, w0: number, w1: number, w2: number, olHi: number, keepHi: number, vlan: number, vlanOuter: number): void;
  /** csum (twin: fwd/csum.ts): the MAC words as macFwd's; `stats` is the stream's counter slot as a heap byte offset. */
  csum(objs: number, n: number, w0: number, w1: number, w2: number, keepHi: number, stats: number): void;
  txonlyFill(
    objs: number,
    n: number,
    tmpl: number,
    pktLen: number,
    olHi: number,
    setVlan: number,
    vlan: number,
    setQinq: number,
    vlanOuter: number,
    multiFlow: number,
    ipDst: number,
    ipVar: number,
    lcore: number,
    sumNoSrc: number,
  ): number;
}

/** The kernels could not be loaded: not built, or built from other sources. */
export class KernelError extends DpkitError {
  constructor(message: string) {
    super('EKERNEL', message);
  }
}

/** The one kernel module, instantiated over one heap's memory. */
export class Kernels {
  /**
   * Kernels not yet beside their owners, as the groups their callers use.
   * They are all views of the same exports; an owner that takes its kernels
   * with `fn` needs none of them.
   */
  readonly fwd: FwdKernel;
  readonly vhost: VhostKernel;
  /** The `layout…` globals: each record file's layout id the module was compiled with (test/eal/layout.test.ts). */
  readonly layout: Readonly<Record<string, number>>;

  constructor(private readonly exports: Readonly<Record<string, unknown>>) {
    const layout: Record<string, number> = {};
    for (const [k, v] of Object.entries(exports)) {
      if (k.startsWith('layout')) layout[k] = (v as { value: number }).value >>> 0; // u32 globals read as i32
    }
    this.layout = layout;
    this.fwd = exports as unknown as FwdKernel;
    this.vhost = exports as unknown as VhostKernel;
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
