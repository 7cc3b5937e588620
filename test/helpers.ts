import assert from 'node:assert/strict';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import type { Ethdev } from '../src/ethdev/ethdev.js';
import { Heap, type Burst } from '../src/eal/heap.js';
import { LCORE_PENDING, LCORE_SIZE } from '../src/eal/heap-layout.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool, type MempoolOptions } from '../src/mem/mempool.js';

/** A small heap, a pool in it and the mbuf ops: what most tests start from. */
export function setup(pool: Partial<MempoolOptions> = {}, heapSize = 16 << 20) {
  const heap = Heap.create({ size: heapSize });
  const mp = Mempool.create(heap, { name: 'test_pool', n: 256, ...pool });
  const mb = new Mbufs(heap);
  return { heap, mp, mb };
}

/** A burst in `heap` holding `values`: what a test hands the data path (bursts live in the heap). */
export function burstOf(heap: Heap, values: ArrayLike<number>): Burst {
  const b = heap.burst(values.length);
  b.set(Array.from(values));
  return b;
}

/**
 * A kernel and its twin did the same: the heap `w` that ran the kernels and
 * the heap `t` that ran the twins are byte for byte the same, but for
 * free_bulk's pending array in the lcore block (a thread's scratch: its
 * leftovers mean nothing).
 */
export function assertSameHeaps(w: Heap, t: Heap): void {
  assert.ok(w.kernels && !t.kernels);
  const first = firstHeapDifference(w, t);
  assert.equal(first, -1, `heaps differ first at byte ${first}`);
}

/** Every test ends with this: all mbufs back in the pool. */
export function assertFull(...pools: Mempool[]): void {
  for (const mp of pools) mp.checkLeaks();
}

/**
 * Waits for every worker to post its result and exit. A worker that throws,
 * exits early or outlives `ms` fails the test and all workers are stopped, so
 * a broken lock-free structure fails instead of hanging the suite.
 */
export async function joinWorkers<T = unknown>(workers: Worker[], ms = 120_000): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const results = workers.map(
    (w, i) =>
      new Promise<T>((resolve, reject) => {
        let result: T | undefined;
        let got = false;
        w.on('message', (m: T) => {
          result = m;
          got = true;
        });
        w.once('error', reject);
        w.once('exit', (code) => (code === 0 && got ? resolve(result as T) : reject(new Error(`worker ${i} exited with code ${code}${got ? '' : ' before reporting'}`))));
      }),
  );
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`workers still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([Promise.all(results), timeout]);
  } finally {
    clearTimeout(timer);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Gives port `p` `queues` rx and tx queues (default descriptors, rx from `pool`) and starts it. @returns p */
export function portUp(ethdev: Ethdev, pool: Mempool, p: number, queues = 1): number {
  ethdev.configure(p, queues, queues);
  for (let q = 0; q < queues; q++) {
    ethdev.rxQueueSetup(p, q, 0, pool);
    ethdev.txQueueSetup(p, q, 0);
  }
  ethdev.start(p);
  return p;
}

/** What is written to stderr from now until `restore()`, a chunk a line, instead of the terminal. */
export function captureStderr(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
  return { lines, restore: () => void (process.stderr.write = write) };
}

/**
 * The first byte where a wasm heap and a twin (ts) heap differ, or -1: what a
 * kernel test asserts after driving both with the same script. Skips free_bulk's
 * pending array in the lcore block (a thread's scratch: its leftovers mean
 * nothing) and any `skip` ranges [from, to) of byte offsets.
 */
export function firstHeapDifference(wasm: Heap, ts: Heap, skip: (readonly [number, number])[] = []): number {
  const ranges = [[wasm.lcore + LCORE_PENDING, wasm.lcore + LCORE_SIZE] as const, ...skip];
  const a = wasm.u8;
  const b = ts.u8;
  // memcmp over the stretches between skipped ranges first: fuzz targets compare heaps per input,
  // and the byte loop below costs tens of milliseconds a heap.
  const cuts = [...ranges].sort((x, y) => x[0] - y[0]);
  let same = a.length === b.length;
  for (let at = 0, k = 0; same && at < a.length; k++) {
    const end = k < cuts.length ? Math.min(a.length, Math.max(at, cuts[k]![0])) : a.length;
    same = Buffer.from(a.buffer, a.byteOffset + at, end - at).equals(Buffer.from(b.buffer, b.byteOffset + at, end - at));
    at = k < cuts.length ? Math.max(at, end, cuts[k]![1]) : a.length;
  }
  if (same) return -1;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !ranges.some(([lo, hi]) => i >= lo && i < hi)) return i;
  return -1;
}

/**
 * Bytes of the young generation per call of `loop`'s body over 10 000 calls,
 * the least of up to 300 tries (a try a scavenge cut short reads low, never
 * high). The body should call one function at one site, so the optimizer can
 * inline it and keep its doubles unboxed, once its code is installed: on a
 * loaded machine the compile on V8's background thread may take many tries,
 * so tries go on (yielding, so the code can be installed) until one reads
 * under `enough` bytes. Unoptimized code boxes every double.
 */
export async function bytesPerCall(loop: (n: number) => number, enough: number): Promise<number> {
  const newSpace = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;
  loop(200_000);
  let least = Infinity;
  for (let k = 0; k < 300 && least >= enough; k++) {
    const before = newSpace();
    loop(10_000);
    const used = newSpace() - before;
    if (used >= 0) least = Math.min(least, used / 10_000);
    await new Promise((r) => setImmediate(r));
  }
  return least;
}
