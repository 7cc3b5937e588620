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
 * broadcast, counted into the pktStats block at `block`. A burst's packets
 * mostly share a bin, so the kernel counts runs of one bin in a register and
 * adds a run to its f64 counter when the bin changes: an add a packet into
 * the same counter in memory is a chain through store-to-load forwarding
 * (about 9 cycles a packet, 15 % of a vhost pair's lcore at 64 B).
 */
export function ethdevPktStats(burst: u32, n: u32, block: u32): void {
  let runBin: u32 = 0;
  let run: u32 = 0;
  let multicast: u32 = 0;
  let broadcast: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const len = load<u32>(r, M_PKT_LEN);
    const bin: u32 = len >= 1024 ? (len > 1518 ? 7 : 6) : len <= 64 ? len >> 6 : 32 - clz<u32>(len) - 5;
    if (bin != runBin) {
      addCount(block + PKT_STAT_UNDERSIZE + (runBin << 3), run);
      runBin = bin;
      run = 0;
    }
    run++;
    const d = mtod(r);
    if ((load<u8>(d) & 1) != 0) {
      if (load<u32>(d) == 0xffffffff && load<u16>(d, 4) == 0xffff) broadcast++;
      else multicast++;
    }
  }
  addCount(block + PKT_STAT_UNDERSIZE + (runBin << 3), run);
  addCount(block + PKT_STAT_BROADCAST, broadcast);
  addCount(block + PKT_STAT_MULTICAST, multicast);
}

/** Adds `k` to the f64 counter at `at` (nothing when k is 0). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function addCount(at: u32, k: u32): void {
  if (k != 0) store<f64>(at, load<f64>(at) + <f64>k);
}
