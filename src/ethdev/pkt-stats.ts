/**
 * A port's per-packet counters (`net_stats=1` on net_vhost and virtio_user):
 * one pktStats block per queue (ethdev/stats.record.ts), filled by the
 * mbufPktStats kernel as DPDK's vhost library and virtio PMD fill theirs for
 * every packet, and read back as DPDK's xstats names.
 */
import type { Heap } from '../eal/heap.js';
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
