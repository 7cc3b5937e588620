/**
 * The measurement's own cost: what a probe's latency includes when the
 * network adds nothing. Stamps bursts, passes them through a ring on the
 * same thread (the cheapest port there is) and checks them, with the same
 * clock reads a sender and a receiver make; the latencies recorded are the
 * floor every reported latency stands on (TRex quotes ~4 µs per direction
 * for its software timestamps). Reports state it beside their figures, or
 * subtract its p50.
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { Mbufs } from '../mem/mbuf.js';
import type { Mempool } from '../mem/mempool.js';
import { Ring } from '../ring/ring.js';
import type { LatencySummary } from './hist.js';
import { ProbeRx, ProbeTx } from './probe.js';

/** How probeLoopbackBias measures. */
export interface BiasOptions {
  /** Bursts sent (default 1000). */
  bursts?: number;
  /** Packets a burst (default 32). */
  burst?: number;
  /** Bytes a packet (default 64; at least the 16 of a signature). */
  size?: number;
}

/**
 * Measures the loopback bias of stamp + ring + check on this thread, with
 * mbufs from `pool` (all returned). Control plane: it allocates its blocks
 * in the heap once (a probe checker of one stream, 1 ns precision bits 11).
 * @returns the latency distribution of the loopback, ns.
 */
export function probeLoopbackBias(heap: Heap, pool: Mempool, opts: BiasOptions = {}): LatencySummary {
  const bursts = opts.bursts ?? 1000;
  const n = opts.burst ?? 32;
  const size = opts.size ?? 64;
  if (!Number.isInteger(bursts) || bursts < 1) throw new ArgError(`probe bias: bursts=${bursts}: must be a positive integer`);
  if (!Number.isInteger(n) || n < 1 || n > 512) throw new ArgError(`probe bias: burst=${n}: must be an integer in [1, 512]`);
  if (!Number.isInteger(size) || size < 16 || size > 2048) throw new ArgError(`probe bias: size=${size}: must be an integer in [16, 2048]`);
  const mb = new Mbufs(heap);
  const ring = Ring.create(heap, { name: 'probe bias', count: 1024, sp: true, sc: true });
  const tx = ProbeTx.create(heap, 0);
  const rx = ProbeRx.create(heap, { streams: 1 });
  const burst = heap.burst(n);
  if (pool.allocBulk(burst, n) !== n) throw new ArgError(`probe bias: pool ${pool.name} cannot lend ${n} mbufs`);
  try {
    for (let i = 0; i < n; i++) {
      mb.setDataLen(burst[i]!, size);
      mb.setPktLen(burst[i]!, size);
    }
    for (let b = 0; b < bursts; b++) {
      tx.stamp(burst, n);
      ring.enqueueBurst(burst, n);
      const got = ring.dequeueBurst(burst, n);
      rx.check(burst, got);
    }
  } finally {
    mb.freeBulk(burst, n);
  }
  return rx.histogram(0).summary();
}
