/**
 * A port's per-packet counters (`net_stats=1` on net_vhost and virtio_user):
 * one pktStats block per queue (ethdev/stats.record.ts), filled by the
 * ethdevPktStats kernel (pkt-stats.as.ts; twin pktStatsTwin below) as DPDK's
 * vhost library and virtio PMD fill theirs for every packet, and read back as
 * DPDK's xstats names.
 */
import type { Burst, Heap } from '../eal/heap.js';
import { Mbufs } from '../mem/mbuf.js';
import { PKT_STATS_SIZE, PKTS_BROADCAST, PKTS_MULTICAST, PKTS_UNDERSIZE } from './stats-layout.js';

/** The size bins' xstats names, in the block's order (DPDK's vhost and virtio names). */
const BINS = ['undersize', 'size_64', 'size_65_to_127', 'size_128_to_255', 'size_256_to_511', 'size_512_to_1023', 'size_1024_to_1518', 'size_1519_to_max'];

export class PktStats {
  private readonly blocks = new Map<string, number>();

  constructor(
    private readonly heap: Heap,
    private readonly name: string,
    /** Whether the port counts per packet; without it `block` gives 0 and nothing is counted. */
    readonly enabled: boolean,
  ) {}

  /** The block of rx or tx queue `q` (made, zeroed, on first use), or 0 when the port does not count. */
  block(dir: 'rx' | 'tx', q: number): number {
    if (!this.enabled) return 0;
    const key = `${dir}_q${q}`;
    let b = this.blocks.get(key);
    if (b === undefined) {
      b = this.heap.reserve(PKT_STATS_SIZE, 64, `${this.name} ${key} pkt stats`);
      this.heap.f64.fill(0, b >>> 3, (b + PKT_STATS_SIZE) >>> 3);
      this.blocks.set(key, b);
    }
    return b;
  }

  /** rx_q0_size_64_packets, …, rx_q0_multicast_packets, rx_q0_broadcast_packets per queue that has a block. */
  xstats(): Record<string, number> {
    const out: Record<string, number> = {};
    const f = this.heap.f64;
    for (const [key, b] of this.blocks) {
      const w = b >>> 3;
      BINS.forEach((bin, i) => (out[`${key}_${bin}_packets`] = f[w + PKTS_UNDERSIZE + i]!));
      out[`${key}_multicast_packets`] = f[w + PKTS_MULTICAST]!;
      out[`${key}_broadcast_packets`] = f[w + PKTS_BROADCAST]!;
    }
    return out;
  }
}

/** Counts the `n` packets of a burst into the pktStats block at heap byte `block`. */
export type PktStatsOp = (burst: Burst, n: number, block: number) => void;

/** The ethdevPktStats kernel, or its twin on a heap without kernels: chosen once, at queue setup. */
export function pktStatsOp(heap: Heap): PktStatsOp {
  if (heap.kernels) {
    const k = heap.kernels.fn('ethdevPktStats');
    return (burst, n, block) => k(burst.heapOffset, n, block);
  }
  const mb = new Mbufs(heap);
  return (burst, n, block) => pktStatsTwin(mb, burst.heapOffset, n, block);
}

/** The twin of the ethdevPktStats kernel, same signature after the mbuf view: `objs` is the burst's heap offset. */
export function pktStatsTwin(mb: Mbufs, objs: number, n: number, block: number): void {
  const { u8, u32, f64 } = mb.heap;
  const o = objs >>> 2;
  const b = block >>> 3;
  for (let i = 0; i < n; i++) {
    const h = u32[o + i]!;
    const len = mb.pktLen(h);
    const bin = len >= 1024 ? (len > 1518 ? 7 : 6) : len <= 64 ? len >>> 6 : 32 - Math.clz32(len) - 5;
    f64[b + PKTS_UNDERSIZE + bin]! += 1;
    const d = mb.mtod(h);
    if ((u8[d]! & 1) !== 0) {
      // Byte by byte: the data need not be aligned.
      const bcast = (u8[d]! & u8[d + 1]! & u8[d + 2]! & u8[d + 3]! & u8[d + 4]! & u8[d + 5]!) === 0xff;
      f64[b + (bcast ? PKTS_BROADCAST : PKTS_MULTICAST)]! += 1;
    }
  }
}
