/**
 * The shared heap: one block of shared memory that holds everything a data
 * path touches (mbuf records, packet bytes, rings, per-lcore caches, bursts),
 * addressed by byte offsets. It is DPDK's hugepage memory plus memzones.
 *
 * Every thread that works on packets opens the same heap and builds its own
 * typed views once. Offsets, never JS references, go into shared structures,
 * so a WebAssembly kernel can work on the same bytes in place.
 *
 * The header (the first HEADER_SIZE bytes, so offset 0 and mbuf handle 0
 * are never valid and serve as NULL) is declared in heap.record.ts.
 */
import { ArgError, NoMemError } from '../errors.js';
import { HEAP_HEADER_SIZE, HEAP_POOL_TABLE_COUNT, HEAP_W_BRK, HEAP_W_MAGIC, HEAP_W_NB_POOLS, HEAP_W_POOL_TABLE, HEAP_W_SIZE, LCORE_SIZE, LCORE_W_ID } from './heap-layout.js';
import { loadKernels, type Datapath, type Kernels } from './kernels.js';

declare const inHeap: unique symbol;
/**
 * A burst array that lives in the heap (Heap.burst, Heap.burstAt): kernels
 * read and write it in place at `heapOffset` (its byteOffset). The type says
 * what the run-time `burst.heapBuffer === heap.buffer` check at the API says:
 * a plain Uint32Array is not one.
 */
export type Burst = Uint32Array & {
  /** Type-only brand: never present at run time. */
  readonly [inHeap]: true;
  /**
   * Its byteOffset, kept as a plain field for the data path: Node 20's V8
   * calls the byteOffset getter out of line (about 14 ns a call here, against
   * under one for a field), and every burst call hands a kernel its offset.
   */
  readonly heapOffset: number;
  /**
   * The heap's buffer it lies in, as a plain field for the per-burst check
   * that a burst is in the heap: the `buffer` getter costs about 27 ns a call
   * on Node 20.
   */
  readonly heapBuffer: SharedArrayBuffer;
};

/**
 * Where the heap's bytes come from. The default is a shared WebAssembly.Memory;
 * an fd-backed provider (memfd, for vhost-user and memif peers) will implement
 * the same interface.
 */
export interface MemoryProvider {
  /** The bytes, shared with every worker. */
  readonly buffer: SharedArrayBuffer;
  /** The same bytes as wasm memory, for kernels; absent when the provider cannot give one. */
  readonly memory?: WebAssembly.Memory;
}

/** What a worker needs to open the heap: structured-clonable, shares (not copies) the memory. */
export interface HeapDescriptor {
  /** The heap as wasm memory, when it is one. */
  readonly memory?: WebAssembly.Memory;
  /** The heap's bytes. */
  readonly buffer: SharedArrayBuffer;
}

const MAGIC = 0x54_4b_50_44; // "DPKT"
/** First word of the pool table. */
export const POOL_TABLE = HEAP_W_POOL_TABLE;
/** Pool ids fit in the mbuf record's u16 `pool` field; 240 keeps the table inside the header. */
export const MAX_POOLS = HEAP_POOL_TABLE_COUNT;
/** Bytes before the first memzone; also makes offset 0 (NULL) never a valid object. */
export const HEADER_SIZE = HEAP_HEADER_SIZE;
export const CACHE_LINE = 64;

/** `n` rounded up to a multiple of `a` (exact for any heap offset, unlike a 32-bit mask). */
export function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}
const WASM_PAGE = 65536;
/** wasm32 addresses 4 GiB; shared memory must declare its maximum. */
/** The largest heap: a wasm32 memory of 65535 pages. */
export const MAX_HEAP = 4 * 1024 * 1024 * 1024 - WASM_PAGE;

/** A shared WebAssembly.Memory that never grows, so views made once stay valid. */
export function wasmMemoryProvider(size: number): MemoryProvider {
  const pages = Math.ceil(size / WASM_PAGE);
  let memory: WebAssembly.Memory;
  try {
    memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  } catch (e) {
    // V8 reserves the memory plus its guard region (about 10 GiB of address space) up front.
    if (e instanceof RangeError) throw new NoMemError(`heap of ${(size / (1 << 20)).toFixed(0)} MiB: the WebAssembly memory could not be reserved (${e.message}); a limit on address space (ulimit -v) or on memory refuses it`);
    throw e;
  }
  return { memory, buffer: memory.buffer as unknown as SharedArrayBuffer };
}

/** How Heap.create makes a heap. */
export interface HeapOptions {
  /** Bytes; rounded up to whole 64 KiB pages. Untouched pages cost no RAM. */
  size: number;
  /** The lcore this thread runs as: selects its per-lcore mempool caches. Default 0 (main). */
  lcoreId?: number;
  /** Where the bytes come from; default a new shared WebAssembly.Memory. */
  provider?: MemoryProvider;
  /** 'wasm' (default): per-burst work runs in WebAssembly kernels; 'ts': their TypeScript twins. */
  datapath?: Datapath;
}

/**
 * The shared memory of a dpkit process (DPDK's hugepage memory and memzones):
 * one SharedArrayBuffer (a WebAssembly.Memory when the provider gives one),
 * its typed views made once, a bump allocator for blocks (`reserve`), bursts,
 * the pool table and each thread's kernels. Workers open the same bytes from
 * its descriptor.
 */
export class Heap {
  /** The heap's bytes, shared with every lcore. */
  readonly buffer: SharedArrayBuffer;
  /** The same bytes as wasm memory, where the kernels run; undefined without one. */
  readonly memory: WebAssembly.Memory | undefined;
  /** Byte view of the whole heap: index = heap offset. */
  readonly u8: Uint8Array;
  /** 2-byte view: index = offset / 2. */
  readonly u16: Uint16Array;
  /** 4-byte view: index = offset / 4 (a handle's record starts at `h << MBUF_WORD_SHIFT`). */
  readonly u32: Uint32Array;
  /** The 4-byte view for Atomics (ring indices, counters other threads read). */
  readonly i32: Int32Array;
  /** 8-byte slots: one store zeroes two u32 words. */
  readonly f64: Float64Array;
  /** Byte-order-explicit access at any offset (fastest JS access for packet headers). */
  readonly view: DataView;
  /** Bytes in the heap. */
  readonly size: number;
  /** @internal The kernels over this heap, or null on the TypeScript datapath (user code: BurstOps, loadKernel). */
  readonly kernels: Kernels | null;

  private constructor(
    provider: HeapDescriptor,
    /** The lcore this thread runs as (0 on the main thread). */
    readonly lcoreId: number,
    datapath: Datapath,
  ) {
    this.buffer = provider.buffer;
    this.memory = provider.memory;
    this.u8 = new Uint8Array(this.buffer);
    this.u16 = new Uint16Array(this.buffer);
    this.u32 = new Uint32Array(this.buffer);
    this.i32 = new Int32Array(this.buffer);
    this.f64 = new Float64Array(this.buffer);
    this.view = new DataView(this.buffer);
    this.size = this.buffer.byteLength;
    this.kernels = datapath === 'wasm' && this.memory ? loadKernels(this.memory) : null;
  }

  /** 'wasm' when this thread's per-burst work runs in the kernels, 'ts' when in their TypeScript twins. */
  get datapath(): Datapath {
    return this.kernels ? 'wasm' : 'ts';
  }

  /** Creates a fresh heap (control plane, once). */
  static create(opts: HeapOptions): Heap {
    if (!(opts.size > HEADER_SIZE) || opts.size > MAX_HEAP) {
      throw new ArgError(`heap size ${opts.size}: must be between ${HEADER_SIZE} and ${MAX_HEAP} bytes`);
    }
    const provider = opts.provider ?? wasmMemoryProvider(opts.size);
    const heap = new Heap(provider, checkLcore(opts.lcoreId ?? 0), opts.datapath ?? 'wasm');
    heap.u32[HEAP_W_MAGIC] = MAGIC;
    heap.u32[HEAP_W_SIZE] = heap.size >>> 0;
    Atomics.store(heap.i32, HEAP_W_BRK, HEADER_SIZE);
    Atomics.store(heap.i32, HEAP_W_NB_POOLS, 0);
    return heap;
  }

  /** Opens a heap made elsewhere (a worker), as lcore `lcoreId`. */
  static attach(desc: HeapDescriptor, lcoreId: number, datapath: Datapath = 'wasm'): Heap {
    const heap = new Heap(desc, checkLcore(lcoreId), datapath);
    if (heap.u32[HEAP_W_MAGIC] !== MAGIC) throw new ArgError('heap attach: not a dpkit heap (bad magic)');
    return heap;
  }

  /** Hand this to a worker (postMessage / workerData); it shares the memory. */
  descriptor(): HeapDescriptor {
    return this.memory ? { memory: this.memory, buffer: this.buffer } : { buffer: this.buffer };
  }

  /**
   * Reserves `bytes` aligned to `align` (a power of two) and returns its offset,
   * zero-filled. Lock-free and safe from any thread; memzones are never freed
   * (as with rte_memzone, the heap lives as long as the application).
   */
  reserve(bytes: number, align = CACHE_LINE, what = 'memzone'): number {
    if ((align & (align - 1)) !== 0 || align <= 0) throw new ArgError(`${what}: alignment ${align} is not a power of two`);
    for (;;) {
      const brk = Atomics.load(this.i32, HEAP_W_BRK) >>> 0;
      const start = (brk + align - 1) & ~(align - 1);
      const end = (start >>> 0) + bytes;
      if (end > this.size) {
        throw new NoMemError(`${what}: cannot reserve ${bytes} bytes: heap has ${this.size - brk} of ${this.size} free`);
      }
      if (Atomics.compareExchange(this.i32, HEAP_W_BRK, brk | 0, end | 0) === (brk | 0)) return start >>> 0;
    }
  }

  /**
   * A burst array in the heap (`n` handles), so kernels can read and write it
   * in place. Made once at setup, never per burst.
   */
  burst(n: number): Burst {
    return this.burstAt(this.reserve(n * 4, CACHE_LINE, 'burst'), n);
  }

  /** A Burst over `n` handles the heap already holds at byte `offset` (a descriptor ring's software ring). */
  burstAt(offset: number, n: number): Burst {
    const b = new Uint32Array(this.buffer, offset, n);
    // Defined the same way on every burst, so every burst shares one hidden class.
    Object.defineProperty(b, 'heapOffset', { value: offset, enumerable: false, writable: false, configurable: false });
    Object.defineProperty(b, 'heapBuffer', { value: this.buffer, enumerable: false, writable: false, configurable: false });
    return b as Burst;
  }

  private lcoreBlock = 0;

  /**
   * Heap offset of this thread's lcore block (heap.record.ts: the lcore id,
   * free_bulk's pending array), made on first use: what kernels take as `lc`
   * where DPDK reads thread-local storage.
   */
  get lcore(): number {
    if (this.lcoreBlock === 0) {
      this.lcoreBlock = this.reserve(LCORE_SIZE, CACHE_LINE, 'lcore block');
      this.u32[(this.lcoreBlock >>> 2) + LCORE_W_ID] = this.lcoreId;
    }
    return this.lcoreBlock;
  }

  private readonly scratches = new Map<string, Burst>();

  /**
   * This thread's scratch burst named `key` (e.g. free_bulk's pending
   * segments), made on first use and shared by everything on this heap view:
   * one per thread, however many queues and engines it opens.
   */
  scratch(key: string, n: number): Burst {
    let s = this.scratches.get(key);
    if (!s || s.length < n) this.scratches.set(key, (s = this.burst(n)));
    return s;
  }

  /** Bytes still free for memzones. */
  free(): number {
    return this.size - (Atomics.load(this.i32, HEAP_W_BRK) >>> 0);
  }

  /** Registers a pool header and returns its id (control plane). */
  registerPool(headerOffset: number): number {
    const id = Atomics.add(this.i32, HEAP_W_NB_POOLS, 1);
    if (id >= MAX_POOLS) {
      Atomics.sub(this.i32, HEAP_W_NB_POOLS, 1);
      throw new NoMemError(`mempool: too many pools (max ${MAX_POOLS})`);
    }
    Atomics.store(this.i32, POOL_TABLE + id, headerOffset);
    return id;
  }

  /** Byte offset of pool `id`'s header, or 0 when there is no such pool. */
  poolOffset(id: number): number {
    if (id < 0 || id >= Atomics.load(this.i32, HEAP_W_NB_POOLS)) return 0;
    return Atomics.load(this.i32, POOL_TABLE + id) >>> 0;
  }

  /** Pools created in this heap so far (ids 0..nbPools-1). */
  get nbPools(): number {
    return Atomics.load(this.i32, HEAP_W_NB_POOLS);
  }
}

/** DPDK's RTE_MAX_LCORE default. */
export const MAX_LCORES = 128;

function checkLcore(id: number): number {
  if (!Number.isInteger(id) || id < 0 || id >= MAX_LCORES) {
    throw new ArgError(`lcore id ${id}: must be an integer in [0, ${MAX_LCORES - 1}]`);
  }
  return id;
}
