/**
 * The WebAssembly kernels: per-burst work that runs on the heap's shared
 * memory in place, one call per burst (a call per packet costs more than the
 * work it saves). Each thread instantiates them once over its
 * heap; each kernel keeps a TypeScript twin in the module that calls it, and
 * `datapath: 'ts'` runs the twins alone (to measure what wasm buys).
 */
import { readFileSync } from 'node:fs';
import { DpkitError } from '../errors.js';
import { packageRoot } from '../package.js';

/** Which implementation a thread's data path uses. */
export type Datapath = 'wasm' | 'ts';

export interface MbufKernel {
  /** See src/kernels/as/mbuf.ts. Offsets are heap byte offsets. */
  getBulk(pool: number, lcore: number, objs: number, n: number): number;
  putBulk(pool: number, lcore: number, objs: number, n: number): number;
  allocBulk(pool: number, lcore: number, objs: number, n: number): number;
  /** Packets freed, or a negative number (FREE_REFUSED | index as i32) when a pool's ring refused a put. */
  freeBulk(objs: number, n: number, lcore: number, pending: number): number;
  nullRx(pool: number, lcore: number, objs: number, n: number, len: number, port: number, stats: number): number;
  nullTx(objs: number, n: number, lcore: number, stats: number, pending: number): number;
}

/** See src/kernels/as/vhost.ts. Offsets are heap byte offsets. */
export interface VhostKernel {
  enqueueFast(mbufs: number, n: number, desc: number, availRing: number, usedRing: number, mask: number, num: number, lastAvail: number, usedIdx: number, avail: number, table: number, perPacket: number, dsts: number): number;
  rxFast(burst: number, n: number, usedRing: number, mask: number, lastUsed: number, ready: number, sw: number, limit: number, free: number, numFree: number, cap: number, port: number, stats: number): number;
  dequeueFast(mbufs: number, n: number, desc: number, availRing: number, usedRing: number, mask: number, num: number, lastAvail: number, usedIdx: number, table: number, segRoom: number, port: number, srcs: number): number;
  txFast(burst: number, n: number, state: number, nextFree: number, sw: number, ndesc: number, desc: number, availRing: number, mask: number, idx: number, gpaHi: number, stats: number): number;
  txCleanup(usedRing: number, mask: number, ready: number, num: number, state: number, sw: number, nextFree: number, ndesc: number, stage: number, inOrder: number): number;
  fillOne(mbufs: number, count: number, free: number, numFree: number, sw: number, desc: number, availRing: number, mask: number, idx: number, offset: number, cap: number, gpaHi: number): number;
}

export type MacswapKernelFn = (objs: number, n: number, olHi: number, keepHi: number, vlan: number, vlanOuter: number, setVlan: number, setQinq: number) => void;

export interface FwdKernel {
  /** See src/kernels/as/fwd.ts. */
  rxFill(objs: number, n: number, len: number, port: number): void;
  pktLenSum(objs: number, n: number): number;
  macswap: MacswapKernelFn;
  macswapOfl: MacswapKernelFn;
  macswapInterleave: MacswapKernelFn;
  /** 5tswap (twin: fwd/5tswap.ts); the arguments are macswap's. */
  fiveTupleSwap: MacswapKernelFn;
  copyIn(objs: number, n: number, src: number, len: number): void;
  copyOut(objs: number, n: number, dst: number, len: number): void;
  /** net_pcap infinite_rx (twin: PcapRxQueue's replay loop). */
  pcapReplay(objs: number, n: number, table: number, count: number, cursor: number, port: number, room: number, stats: number): number;
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

/** net_nicsim's hardware (src/kernels/as/nicsim.ts; twin: nicsimXmitTs in drivers/nicsim/hw.ts). */
export interface NicsimKernel {
  /** Offsets are heap byte offsets of queue blocks; `rxq` 0 means the cable's other end is down. */
  nicsimXmit(txq: number, rxq: number, budget: number): number;
}

export interface Kernels {
  readonly mbuf: MbufKernel;
  readonly fwd: FwdKernel;
  readonly vhost: VhostKernel;
  readonly nicsim: NicsimKernel;
  /** Layout values the kernels were compiled with, checked by tests against the TypeScript side. */
  readonly layout: Readonly<Record<string, number>>;
}

/** The kernels could not be loaded: not built, or built for another layout. */
export class KernelError extends DpkitError {
  constructor(message: string) {
    super('EKERNEL', message);
  }
}

const modules = new Map<string, WebAssembly.Module>();

function compile(name: string): WebAssembly.Module {
  let mod = modules.get(name);
  if (!mod) {
    const file = new URL(`build/kernels/${name}.wasm`, packageRoot());
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      throw new KernelError(`kernel ${name}: ${file.pathname} not found: run \`npm run build\` (or use datapath ts)`);
    }
    mod = new WebAssembly.Module(bytes);
    modules.set(name, mod);
  }
  return mod;
}

/** Instantiates every kernel over `memory` (synchronous: the modules are tiny). */
export function loadKernels(memory: WebAssembly.Memory): Kernels {
  const layout: Record<string, number> = {};
  const instance = (name: string) => {
    const exports = new WebAssembly.Instance(compile(name), { env: { memory } }).exports;
    for (const [k, v] of Object.entries(exports)) {
      if (k.startsWith('layout')) layout[k] = (v as { value: number }).value;
    }
    return exports;
  };
  return {
    mbuf: instance('mbuf') as unknown as MbufKernel,
    fwd: instance('fwd') as unknown as FwdKernel,
    vhost: instance('vhost') as unknown as VhostKernel,
    nicsim: instance('nicsim') as unknown as NicsimKernel,
    layout,
  };
}
