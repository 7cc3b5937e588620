/**
 * The per-packet counters DPDK's vhost library and virtio PMD keep (a port's
 * net_stats=1), as a kernel (twin: pktStatsTwin in pkt-stats.ts). The block is
 * ethdev's (stats.record.ts); the kernel only reads the mbufs.
 */
import { MBUF_SHIFT, M_PKT_LEN } from '../mem/mbuf-layout.as';
import { mtod } from '../mem/mbuf.as';
import { PKT_STAT_BROADCAST, PKT_STAT_MULTICAST, PKT_STAT_UNDERSIZE } from './stats-layout.as';

/**
 * For each of the `n` packets of the burst at `burst`: its size bin (RFC 2819's,
 * as vhost_queue_stats_update bins them) and, from its first bytes, multicast or
 * broadcast, counted into the pktStats block at `block`.
 */
export function ethdevPktStats(burst: u32, n: u32, block: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const len = load<u32>(r, M_PKT_LEN);
    const bin: u32 = len >= 1024 ? (len > 1518 ? 7 : 6) : len <= 64 ? len >> 6 : 32 - clz<u32>(len) - 5;
    const at = block + PKT_STAT_UNDERSIZE + (bin << 3);
    store<f64>(at, load<f64>(at) + 1);
    const d = mtod(r);
    if ((load<u8>(d) & 1) != 0) {
      const bcast = load<u32>(d) == 0xffffffff && load<u16>(d, 4) == 0xffff;
      const c = block + (bcast ? PKT_STAT_BROADCAST : PKT_STAT_MULTICAST);
      store<f64>(c, load<f64>(c) + 1);
    }
  }
}
