/**
 * Mempool: rte_pktmbuf_pool in shared memory. A fixed set of mbufs, each a
 * 64-byte record plus a buffer of `dataRoomSize` bytes, whose free handles
 * live in a shared MPMC ring, with a per-lcore cache in front so the common
 * get/put touches only memory the lcore owns.
 *
 * The cache follows rte_mempool's algorithm: a LIFO stack (hot buffers come
 * back first) with a flush threshold of 1.5 × size; a put that would cross it
 * flushes the whole cache to the ring first, a get that finds the cache short
 * refills it with `size` + the shortfall in one ring dequeue. Everything moves
 * in bulk: one ring operation per flush or refill, never one per mbuf.
 *
 * Free mbufs sit in the pool with refcnt 0, next 0 and nbSegs 1, so a second
 * free of the same mbuf shows as refcnt 0 on the free path at no extra cost.
 *
 * The pool header and the per-lcore cache are declared in mempool.record.ts;
 * the per-burst work is mempoolOps' (mempool.twin.ts): the kernels of
 * mempool.as.ts, or their TypeScript twins, chosen when the pool is opened.
 */
import { ArgError, LeakError, MbufError, fmtHandle } from '../errors.js';
import { CACHE_LINE, Heap, MAX_LCORES, type Burst } from '../eal/heap.js';
import { MBUF_DEFAULT_DATAROOM, MBUF_SHIFT, MBUF_SIZE, MBUF_WORD_SHIFT, PKTMBUF_HEADROOM, PORT_INVALID, W_BUF_ADDR, W_BUF_LEN_POOL, W_DATA_OFF_REFCNT, W_NB_SEGS_PORT, W_NEXT } from './mbuf-layout.js';
import {
  CACHE_STRIDE,
  CACHE_W_OBJS,
  MEMPOOL_CACHE_MAX_SIZE,
  POOL_F_DEBUG,
  POOL_NAME,
  POOL_NAME_COUNT,
  POOL_SIZE,
  P_ARENA,
  P_BUF_LEN,
  P_CACHE_BASE,
  P_CACHE_SIZE,
  P_CACHE_STRIDE,
  P_FIRST,
  P_FLAGS,
  P_FLUSH,
  P_HEADROOM,
  P_ID,
  P_MAGIC,
  P_META_BASE,
  P_N,
  P_NAME_LEN,
  P_RING,
  P_STATE,
  P_STRIDE,
} from './mempool-layout.js';
import { mempoolOps, type MempoolOps } from './mempool.twin.js';
import { Ring } from '../ring/ring.js';

const MAGIC = 0x4c4f_504d; // "MPOL"

export { MEMPOOL_CACHE_MAX_SIZE };
/** DPDK's RTE_MBUF_DEFAULT_BUF_SIZE: data room plus headroom. */
export const MBUF_DEFAULT_BUF_SIZE = MBUF_DEFAULT_DATAROOM + PKTMBUF_HEADROOM;

/** rte_pktmbuf_pool_create's arguments. */
export interface MempoolOptions {
  /** Unique in the heap: workers and `show` commands find the pool by it. */
  name: string;
  /** Number of mbufs. */
  n: number;
  /** Per-lcore cache size, 0..512 and at most n / 1.5 (DPDK's rule). Default 0: no cache. */
  cacheSize?: number;
  /** Buffer bytes including headroom (DPDK's data_room_size). Default 2176. */
  dataRoomSize?: number;
  /**
   * Bytes reserved before the data of a fresh mbuf (RTE_PKTMBUF_HEADROOM, a
   * build constant in DPDK). Default 128, or the whole buffer when smaller.
   */
  headroom?: number;
  /** Catch double free, foreign handles and leaks with names (RTE_LIBRTE_MBUF_DEBUG). */
  debug?: boolean;
}

/** What a worker needs to open the pool in the heap it shares. */
export interface MempoolDescriptor {
  /** The pool's header in the heap. */
  readonly offset: number;
}

const attached = new WeakMap<Heap, Mempool[]>();

/**
 * rte_mempool of mbufs (rte_pktmbuf_pool): `n` buffers at a fixed stride in
 * the heap, handed out as integer handles, a ring of free handles shared by
 * every thread and a per-lcore cache in front of it. get/put and their bulk
 * forms work on bursts; `inUse()` tells leaks.
 */
export class Mempool {
  /** The heap the pool's mbufs live in. */
  readonly heap: Heap;
  /** Heap offset of the pool's header (its descriptor for workers). */
  readonly offset: number;
  /** Index in the heap's pool table: what an mbuf's `pool` field holds. */
  readonly id: number;
  /** The name it was created with. */
  readonly name: string;
  /** Number of mbufs in the pool. */
  readonly size: number;
  /** Per-lcore cache size (0: none). */
  readonly cacheSize: number;
  /** Bytes before the data of a fresh mbuf. */
  readonly headroom: number;
  /** Buffer length of each mbuf (headroom + data room). */
  readonly bufLen: number;
  /** Handle of the pool's first mbuf; the pool owns [firstHandle, firstHandle + size). */
  readonly firstHandle: number;
  /** Double frees, foreign handles and leaks are checked and named. */
  readonly debug: boolean;
  protected readonly u32: Uint32Array;
  private readonly ring: Ring;
  private readonly stride: number;
  private readonly arenaBase: number;
  private readonly flushThresh: number;
  /** Word index of this lcore's cache length, and of its first slot. */
  private readonly cacheLen: number;
  private readonly cacheObjs: number;
  private readonly cacheBase: number;
  /** One handle's burst, for get/put/alloc: this thread's, in the heap like every burst. */
  private readonly one: Burst;
  /** This thread's lcore block (the kernels' `lc`). */
  private readonly lc: number;
  /** The per-burst work: kernels or twins, chosen here once (mempoolOps). */
  private readonly ops: MempoolOps;

  protected constructor(heap: Heap, offset: number) {
    const u32 = heap.u32;
    const w = offset >>> 2;
    if (u32[w + P_MAGIC] !== MAGIC) throw new ArgError(`mempool: no pool at heap offset ${offset}`);
    this.heap = heap;
    this.u32 = u32;
    this.offset = offset;
    this.id = u32[w + P_ID]!;
    this.size = u32[w + P_N]!;
    this.stride = u32[w + P_STRIDE]!;
    this.headroom = u32[w + P_HEADROOM]!;
    this.bufLen = u32[w + P_BUF_LEN]!;
    this.firstHandle = u32[w + P_FIRST]!;
    this.arenaBase = u32[w + P_ARENA]!;
    this.cacheSize = u32[w + P_CACHE_SIZE]!;
    this.flushThresh = u32[w + P_FLUSH]!;
    this.debug = (u32[w + P_FLAGS]! & POOL_F_DEBUG) !== 0;
    this.name = Buffer.from(heap.u8.slice(offset + POOL_NAME, offset + POOL_NAME + u32[w + P_NAME_LEN]!)).toString();
    this.ring = Ring.attach(heap, { offset: u32[w + P_RING]!, name: `${this.name}.ring` });
    this.cacheBase = u32[w + P_CACHE_BASE]!;
    const cache = this.cacheBase + heap.lcoreId * CACHE_STRIDE;
    this.cacheLen = cache >>> 2;
    this.cacheObjs = (cache >>> 2) + CACHE_W_OBJS;
    this.one = heap.scratch('mempool single handle', 1);
    this.lc = heap.lcore;
    this.ops = mempoolOps(heap, this.ring, this.debug);
  }

  /**
   * Heap bytes `create` reserves for a pool with these options (records,
   * buffers, ring, lcore caches, alignment), so a heap can be sized for it
   * before it exists. An upper bound, never less.
   */
  static memSize(opts: Pick<MempoolOptions, 'n' | 'dataRoomSize' | 'cacheSize'>): number {
    const stride = Math.ceil((opts.dataRoomSize ?? MBUF_DEFAULT_BUF_SIZE) / CACHE_LINE) * CACHE_LINE;
    const caches = (opts.cacheSize ?? 0) > 0 ? MAX_LCORES * CACHE_STRIDE : 0;
    return POOL_SIZE + opts.n * (MBUF_SIZE + stride + 8) + Ring.memSize(2 * opts.n) + caches + 8 * CACHE_LINE;
  }

  /**
   * Creates a pool of `n` mbufs in `heap` (rte_pktmbuf_pool_create): every
   * mbuf is initialised and in the pool. Throws ArgError on bad sizes and
   * NoMemError when the heap is too small.
   */
  static create(heap: Heap, opts: MempoolOptions): Mempool {
    const name = opts.name;
    const n = opts.n;
    const cacheSize = opts.cacheSize ?? 0;
    const bufLen = opts.dataRoomSize ?? MBUF_DEFAULT_BUF_SIZE;
    if (!Number.isInteger(n) || n < 1 || n > 0x3fffffff) throw new ArgError(`mempool ${name}: n=${n} must be a positive integer`);
    if (!Number.isInteger(cacheSize) || cacheSize < 0 || cacheSize > MEMPOOL_CACHE_MAX_SIZE) {
      throw new ArgError(`mempool ${name}: cache size ${cacheSize} must be in [0, ${MEMPOOL_CACHE_MAX_SIZE}]`);
    }
    if (Math.floor(cacheSize * 1.5) > n) {
      throw new ArgError(`mempool ${name}: cache size ${cacheSize} too large for ${n} mbufs (1.5 × cache must not exceed n)`);
    }
    if (!Number.isInteger(bufLen) || bufLen < 0 || bufLen > 0xffff) {
      throw new ArgError(`mempool ${name}: data room size ${bufLen} must be in [0, 65535]`);
    }
    const nameBytes = Buffer.from(name);
    if (nameBytes.length > POOL_NAME_COUNT) throw new ArgError(`mempool ${name}: name longer than ${POOL_NAME_COUNT} bytes`);
    const debug = opts.debug ?? false;
    const stride = Math.ceil(bufLen / CACHE_LINE) * CACHE_LINE;

    const offset = heap.reserve(POOL_SIZE, CACHE_LINE, `mempool ${name}`);
    const metaBase = heap.reserve(n * MBUF_SIZE, MBUF_SIZE, `mempool ${name}: ${n} mbuf records`);
    const arenaBase = heap.reserve(n * stride, CACHE_LINE, `mempool ${name}: ${n} buffers of ${stride} bytes`);
    const ring = Ring.create(heap, { name: `${name}.ring`, count: n, exactSize: true });
    const cacheBase = cacheSize > 0 ? heap.reserve(MAX_LCORES * CACHE_STRIDE, CACHE_LINE, `mempool ${name}: lcore caches`) : 0;
    const stateBase = debug ? heap.reserve(n, CACHE_LINE, `mempool ${name}: debug state`) : 0;
    const id = heap.registerPool(offset);

    const u32 = heap.u32;
    const w = offset >>> 2;
    const headroom = opts.headroom ?? Math.min(PKTMBUF_HEADROOM, bufLen);
    if (!Number.isInteger(headroom) || headroom < 0 || headroom > bufLen) {
      throw new ArgError(`mempool ${name}: headroom ${headroom} must be in [0, data room size ${bufLen}]`);
    }
    u32[w + P_ID] = id;
    u32[w + P_N] = n;
    u32[w + P_STRIDE] = stride;
    u32[w + P_HEADROOM] = headroom;
    u32[w + P_BUF_LEN] = bufLen;
    u32[w + P_META_BASE] = metaBase;
    u32[w + P_FIRST] = metaBase >>> MBUF_SHIFT;
    u32[w + P_ARENA] = arenaBase;
    u32[w + P_RING] = ring.offset;
    u32[w + P_CACHE_SIZE] = cacheSize;
    u32[w + P_FLUSH] = Math.floor(cacheSize * 1.5);
    u32[w + P_CACHE_BASE] = cacheBase;
    u32[w + P_CACHE_STRIDE] = CACHE_STRIDE;
    u32[w + P_FLAGS] = debug ? POOL_F_DEBUG : 0;
    u32[w + P_STATE] = stateBase;
    u32[w + P_NAME_LEN] = nameBytes.length;
    heap.u8.set(nameBytes, offset + POOL_NAME);

    // Initialise every record as rte_pktmbuf_init does, then fill the ring.
    const first = metaBase >>> MBUF_SHIFT;
    const all = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const h = first + i;
      const r = h << MBUF_WORD_SHIFT;
      u32[r + W_BUF_ADDR] = arenaBase + i * stride;
      u32[r + W_DATA_OFF_REFCNT] = headroom; // refcnt 0: in the pool
      u32[r + W_NB_SEGS_PORT] = 1 | (PORT_INVALID << 16);
      u32[r + W_BUF_LEN_POOL] = bufLen | (id << 16);
      all[i] = h;
    }
    if (debug) heap.u8.fill(1, stateBase, stateBase + n);
    ring.enqueueBulk(all, n);
    Atomics.store(heap.i32, w + P_MAGIC, MAGIC);
    return Mempool.open(heap, offset);
  }

  /** Opens a pool made by another thread, with this thread's lcore cache (rte_mempool_lookup). */
  static attach(heap: Heap, desc: MempoolDescriptor): Mempool {
    return Mempool.open(heap, desc.offset);
  }

  /**
   * The pool with id `id` as seen from this thread, opening it on first use.
   * @returns undefined when the heap has no such pool.
   */
  static byId(heap: Heap, id: number): Mempool | undefined {
    const list = attached.get(heap);
    const mp = list?.[id];
    if (mp) return mp;
    const offset = heap.poolOffset(id);
    return offset === 0 ? undefined : Mempool.open(heap, offset);
  }

  private static open(heap: Heap, offset: number): Mempool {
    let list = attached.get(heap);
    if (!list) attached.set(heap, (list = []));
    const id = heap.u32[(offset >>> 2) + P_ID]!;
    const known = list[id];
    if (known) return known;
    const debug = (heap.u32[(offset >>> 2) + P_FLAGS]! & POOL_F_DEBUG) !== 0;
    const mp = debug ? new DebugMempool(heap, offset) : new Mempool(heap, offset);
    list[id] = mp;
    return mp;
  }

  /** What a worker passes to Mempool.open to use this pool in the heap it shares. */
  descriptor(): MempoolDescriptor {
    return { offset: this.offset };
  }

  /**
   * Takes exactly `n` handles into `objs[off..off+n)` or none (rte_mempool_get_bulk).
   * Hot handles first: the cache is a stack. Not thread-safe per lcore: one
   * thread per lcore id, as in DPDK.
   * @returns n, or 0 when the pool (cache and ring together) has fewer than n.
   */
  getBulk(objs: Burst, n: number, off = 0): number {
    return this.ops.getBulk(this.offset, this.lc, objs.heapOffset + off * 4, n);
  }

  /**
   * Returns `n` handles from `objs[off..)` (rte_mempool_put_bulk). Never fails
   * for handles of this pool; returning more than the pool holds throws.
   */
  putBulk(objs: Burst, n: number, off = 0): void {
    if (this.ops.putBulk(this.offset, this.lc, objs.heapOffset + off * 4, n) !== n) throw this.overflow(objs[off]!);
  }

  /** One handle, or 0 when the pool is empty (rte_mempool_get). */
  get(): number {
    return this.getBulk(this.one, 1) === 1 ? this.one[0]! : 0;
  }

  /** Returns one handle (rte_mempool_put). */
  put(h: number): void {
    this.one[0] = h;
    this.putBulk(this.one, 1);
  }

  /**
   * Allocates `n` mbufs reset as rte_pktmbuf_alloc_bulk leaves them (refcnt 1,
   * one segment, empty, headroom reserved) into `objs[off..)`, all or none:
   * one wasm call per burst, the cache refill through the ring included.
   * @returns n, or 0 when the pool has fewer than n.
   */
  allocBulk(objs: Burst, n: number, off = 0): number {
    return this.ops.allocBulk(this.offset, this.lc, objs.heapOffset + off * 4, n);
  }

  /** How many of `n` handles this lcore's cache takes before it must flush (0 without a cache). */
  cacheRoom(n: number): number {
    if (this.cacheSize === 0) return 0;
    const len = this.u32[this.cacheLen]!;
    const room = len < this.flushThresh ? this.flushThresh - len : 0;
    return n < room ? n : room;
  }

  /** Pushes `n` handles onto this lcore's cache; the caller made room (cacheRoom(), or a flush). */
  cachePush(objs: Uint32Array, n: number, off: number): void {
    const u32 = this.u32;
    const len = u32[this.cacheLen]!;
    const dst = this.cacheObjs + len;
    for (let i = 0; i < n; i++) u32[dst + i] = objs[off + i]!;
    u32[this.cacheLen] = len + n;
  }

  /** One reset mbuf, or 0 when the pool is empty (rte_pktmbuf_alloc). */
  alloc(): number {
    return this.allocBulk(this.one, 1) === 1 ? this.one[0]! : 0;
  }

  /** True when `h` is one of this pool's mbufs. */
  owns(h: number): boolean {
    return h >= this.firstHandle && h < this.firstHandle + this.size;
  }

  /** Heap offset of mbuf `h`'s own buffer (where an indirect mbuf returns on detach). */
  bufAddrOf(h: number): number {
    return this.arenaBase + (h - this.firstHandle) * this.stride;
  }

  /** Mbufs in the pool: ring plus every lcore cache (rte_mempool_avail_count). */
  avail(): number {
    let n = this.ring.count();
    if (this.cacheSize > 0) {
      const base = this.cacheBase >>> 2;
      const step = CACHE_STRIDE >>> 2;
      for (let l = 0; l < MAX_LCORES; l++) n += Atomics.load(this.u32, base + l * step);
    }
    return n;
  }

  /** Mbufs taken and not returned (rte_mempool_in_use_count). */
  inUse(): number {
    return this.size - this.avail();
  }

  /** True when every mbuf is back (rte_mempool_full). */
  full(): boolean {
    return this.avail() === this.size;
  }

  /** Moves this lcore's cached handles to the shared ring, e.g. before its thread exits. */
  flushCache(): void {
    if (this.cacheSize === 0) return;
    const len = this.u32[this.cacheLen]!;
    if (len > 0 && this.ring.enqueueBulk(this.u32, len, this.cacheObjs) !== len) throw this.overflow(this.u32[this.cacheObjs]!);
    this.u32[this.cacheLen] = 0;
  }

  /**
   * Takes back every mbuf that no live owner holds, after a thread that used
   * the pool died without returning what it had (a killed or exited lcore
   * worker): the mbufs in its bursts, in its lcore cache, and in a ring
   * operation it left half done. Ownership is settled by a walk: an mbuf is
   * free when it sits in the pool's ring or in the cache of a lcore not in
   * `dead`; it is held when it is in `held` (what ports, rings and live
   * lcores still own; empty once ports are closed and lcores stopped); every
   * other mbuf is the dead threads' and goes back, reset as the pool leaves
   * a free mbuf. A dead lcore's cache is emptied, not trusted: a worker
   * killed during a flush may have left its handles both in the ring and in
   * its cache, which the walk counts once.
   *
   * Control plane only: no other thread may use the pool meanwhile.
   * @returns how many mbufs were returned.
   */
  reclaim(dead: readonly number[] = [], held: Iterable<number> = []): number {
    this.ring.repair();
    const u32 = this.u32;
    const first = this.firstHandle;
    const seen = new Uint8Array(this.size);
    const mark = (h: number) => {
      if (this.owns(h)) seen[h - first] = 1;
    };
    for (const h of this.ring.contents()) mark(h);
    if (this.cacheSize > 0) {
      const step = CACHE_STRIDE >>> 2;
      for (let l = 0; l < MAX_LCORES; l++) {
        const w = (this.cacheBase >>> 2) + l * step;
        if (dead.includes(l)) {
          Atomics.store(u32, w, 0);
          continue;
        }
        const len = Math.min(u32[w]!, MEMPOOL_CACHE_MAX_SIZE * 2);
        for (let i = 0; i < len; i++) mark(u32[w + CACHE_W_OBJS + i]!);
      }
    }
    for (const h of held) mark(h);
    const back = new Uint32Array(this.size);
    let n = 0;
    for (let i = 0; i < this.size; i++) {
      if (seen[i]) continue;
      const h = first + i;
      const r = h << MBUF_WORD_SHIFT;
      u32[r + W_DATA_OFF_REFCNT] = this.headroom; // refcnt 0: in the pool
      u32[r + W_NB_SEGS_PORT] = 1 | (PORT_INVALID << 16);
      u32[r + W_NEXT] = 0;
      back[n++] = h;
    }
    this.returned(back, n);
    if (n > 0 && this.ring.enqueueBulk(back, n) !== n) throw this.overflow(back[0]!);
    return n;
  }

  /** Hook for the debug pool: `n` handles of `objs` go back by reclaim. */
  protected returned(_objs: Uint32Array, _n: number): void {}

  /** Throws LeakError naming how many mbufs are missing when the pool is not full. */
  checkLeaks(): void {
    const missing = this.inUse();
    if (missing !== 0) {
      throw new LeakError(this.name, missing, `mempool ${this.name}: ${missing} of ${this.size} mbufs not returned${this.leakDetail()}`);
    }
  }

  protected leakDetail(): string {
    return '';
  }

  private overflow(h: number): MbufError {
    return new MbufError(h, `mempool ${this.name}: more mbufs returned than it holds (double free or foreign handle near ${fmtHandle(h)})`);
  }
}

/**
 * The debug pool (RTE_LIBRTE_MBUF_DEBUG): a state byte per mbuf catches a put
 * of a handle that is already in the pool or belongs to no pool of ours. A
 * separate class, so the checks cost nothing when debug is off.
 */
class DebugMempool extends Mempool {
  private readonly state: number;
  private readonly u8: Uint8Array;

  constructor(heap: Heap, offset: number) {
    super(heap, offset);
    this.state = heap.u32[(offset >>> 2) + P_STATE]!;
    this.u8 = heap.u8;
  }

  override getBulk(objs: Burst, n: number, off = 0): number {
    if (super.getBulk(objs, n, off) === 0) return 0;
    for (let i = 0; i < n; i++) this.u8[this.state + objs[off + i]! - this.firstHandle] = 0;
    return n;
  }

  override allocBulk(objs: Burst, n: number, off = 0): number {
    // The fast path pops the cache itself, bypassing getBulk: mark here too.
    if (super.allocBulk(objs, n, off) === 0) return 0;
    for (let i = 0; i < n; i++) this.u8[this.state + objs[off + i]! - this.firstHandle] = 0;
    return n;
  }

  override putBulk(objs: Burst, n: number, off = 0): void {
    // Check the whole burst before any of it goes back, so a bad handle leaves the pool as it was.
    for (let i = 0; i < n; i++) {
      const h = objs[off + i]!;
      let problem = '';
      if (!this.owns(h)) {
        problem = `put of foreign handle ${fmtHandle(h)} (pool holds ${fmtHandle(this.firstHandle)}..${fmtHandle(this.firstHandle + this.size - 1)})`;
      } else if (this.u8[this.state + h - this.firstHandle] !== 0) {
        problem = `double free of mbuf ${fmtHandle(h)}`;
      }
      if (problem) {
        for (let j = 0; j < i; j++) this.u8[this.state + objs[off + j]! - this.firstHandle] = 0;
        throw new MbufError(h, `mempool ${this.name}: ${problem}`);
      }
      this.u8[this.state + h - this.firstHandle] = 1;
    }
    super.putBulk(objs, n, off);
  }

  protected override returned(objs: Uint32Array, n: number): void {
    for (let i = 0; i < n; i++) this.u8[this.state + objs[i]! - this.firstHandle] = 1;
  }

  protected override leakDetail(): string {
    const missing: string[] = [];
    for (let i = 0; i < this.size && missing.length < 16; i++) {
      if (this.u8[this.state + i] === 0) missing.push(fmtHandle(this.firstHandle + i));
    }
    return missing.length ? ` (${missing.join(', ')}${missing.length === 16 ? ', …' : ''})` : '';
  }
}
