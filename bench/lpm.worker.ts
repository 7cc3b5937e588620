import { parentPort, workerData } from 'node:worker_threads';
import { benchLoop } from '../src/apps/bench/control.js';
import { Heap, type HeapDescriptor } from '../src/eal/heap.js';
import { Hash } from '../src/hash/hash.js';
import { hashOps } from '../src/hash/hash.twin.js';
import { Lpm } from '../src/lpm/lpm.js';
import { lpmOps } from '../src/lpm/lpm.twin.js';
import { Lpm6 } from '../src/lpm/lpm6.js';
import { lpm6Ops } from '../src/lpm/lpm6.twin.js';
import type { LookupOp, TableKind } from './lpm.js';

const job = workerData as { ctl: Int32Array; thread: number; kind: TableKind; op: LookupOp; burst: number; datapath: 'wasm' | 'ts'; heap: HeapDescriptor; table: number; at: number };
const heap = Heap.attach(job.heap, 1, job.datapath);
// LOOKUPS entries at job.at (bench/lpm.ts), walked a burst at a time so the tables are hit as random traffic does.
const N = 1 << 16;
const size = job.kind === 'lpm' ? 4 : 16;
const out = heap.burst(64).byteOffset;
const n = job.burst;
let at = 0;

/** One burst of lookups by heap offset, as the lcores call them: no view made per burst. */
function bulk(): () => number {
  if (job.kind === 'lpm') {
    const ops = lpmOps(heap);
    if (job.op === 'x4') return () => (ops.lookupX4(job.table, job.at + 4 * at, out, 0), (at = (at + 4) & (N - 1)), 4);
    return () => (ops.lookupBulk(job.table, job.at + 4 * at, out, n), (at = (at + n) & (N - 1)), n);
  }
  if (job.kind === 'lpm6') {
    const lookupBulk = lpm6Ops(heap);
    return () => (lookupBulk(job.table, job.at + 16 * at, out, n), (at = (at + n) & (N - 1)), n);
  }
  const ops = hashOps(heap);
  return () => (ops.lookupBulk(job.table, job.at + 16 * at, out, n), (at = (at + n) & (N - 1)), n);
}

/** Lookups one at a time through the table's own lookup(), as a control path calls it; the keys' views are made here, once. */
function single(): () => number {
  if (job.kind === 'lpm') {
    const lpm = Lpm.attach(heap, job.table);
    const ips = heap.u32.subarray(job.at >>> 2, (job.at >>> 2) + N);
    return () => {
      for (let i = 0; i < 32; i++) lpm.lookup(ips[(at + i) & (N - 1)]!);
      at = (at + 32) & (N - 1);
      return 32;
    };
  }
  const views = Array.from({ length: N }, (_, i) => heap.u8.subarray(job.at + size * i, job.at + size * i + size));
  const find = job.kind === 'lpm6' ? Lpm6.attach(heap, job.table) : Hash.attach(heap, job.table);
  return () => {
    for (let i = 0; i < 32; i++) find.lookup(views[(at + i) & (N - 1)]!);
    at = (at + 32) & (N - 1);
    return 32;
  };
}

parentPort!.postMessage(await benchLoop(job.ctl, job.thread, job.op === 'single' ? single() : bulk()));
