// What the net_memif tests share: waiting for a state (never for a time),
// packets built as mbuf chains, the shim's skip reason, the report lines.
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { drivers } from '../../src/drivers/index.js';
import { setMemifLog } from '../../src/drivers/memif/channel.js';
import { Heap, type Burst } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { nativeUnavailable } from '../../src/native/native.js';

export const noShim: string | false = nativeUnavailable() ? `native shim ${nativeUnavailable()}` : false;

/**
 * Waits until `cond()` holds, turning the event loop meanwhile; fails after `what` has not happened
 * in `ms` (a hang, not a timing assertion), with `detail()` in the message: what the port saw, so a
 * hang seen once can be traced.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000, detail?: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`still waiting for ${what} after ${ms} ms${detail ? ` (${detail()})` : ''}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The report lines net_memif writes while `f` runs (also echoed when DPKIT_TEST_VERBOSE is set). */
export function collectLog(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const prev = setMemifLog((l) => {
    lines.push(l);
    if (process.env['DPKIT_TEST_VERBOSE']) process.stderr.write(`  [memif] ${l}\n`);
  });
  return { lines, restore: () => setMemifLog(prev) };
}

/** A heap big enough for a pool and two ports' windows (untouched pages cost nothing), a pool, and ethdev. */
export function world(datapath: 'wasm' | 'ts' = 'wasm', n = 2048, heapMiB = 400) {
  const heap = Heap.create({ size: heapMiB << 20, datapath });
  const mp = Mempool.create(heap, { name: 'memif_pool', n, cacheSize: 32 });
  const ethdev = new Ethdev(heap, drivers);
  return { heap, mp, ethdev, mb: new Mbufs(heap), burst: heap.burst(64) };
}

/** Deterministic bytes for packet `i` of `len` bytes. */
export function payload(i: number, len: number): Uint8Array {
  const b = new Uint8Array(len);
  let x = (i * 2654435761) >>> 0;
  for (let k = 0; k < len; k++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[k] = x >>> 24;
  }
  return b;
}

/** A packet of `bytes` as a chain of mbufs from `mp`, each filled to its tailroom (or `seg` bytes). */
export function packet(mb: Mbufs, mp: Mempool, bytes: Uint8Array, seg = Infinity): number {
  const head = mb.fromBytes(mp, bytes, seg);
  if (head === 0) throw new Error(`no packet of ${bytes.length} B: pool empty or chain too long`);
  return head;
}

/** Sends `pkts` on (port, 0), retrying what the ring had no room for; frees nothing itself. */
export async function sendAll(ethdev: Ethdev, port: number, burst: Burst, pkts: number[]): Promise<void> {
  let at = 0;
  const end = Date.now() + 60_000;
  while (at < pkts.length) {
    if (Date.now() > end) throw new Error(`port ${port}: ${pkts.length - at} of ${pkts.length} packets still unsent after 60 s`);
    const n = Math.min(burst.length, pkts.length - at);
    for (let i = 0; i < n; i++) burst[i] = pkts[at + i]!;
    const sent = ethdev.txBurst(port, 0, burst, n);
    at += sent;
    if (sent < n) await new Promise((r) => setTimeout(r, 1));
  }
}
