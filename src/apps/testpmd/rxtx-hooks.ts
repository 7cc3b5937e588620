/**
 * What testpmd hangs on a stream's queues besides its engine, installed by
 * the lcore only when asked for, so the plain data path stays as it is:
 * - `set verbose 1`: every received burst printed (testpmd's rx dump
 *   callback, util.c dump_pkt_burst), on the lcore, as DPDK does;
 * - `set fwd MODE retry`: what a tx queue refuses is offered again after a
 *   delay, a number of times (testpmd's burst_tx_delay_time and
 *   burst_tx_retry_num), before the engine frees it as dropped.
 * Both wrap a queue and keep its contract, so engines know nothing of them.
 */
import type { Burst, Heap } from '../../eal/heap.js';
import type { RxQueue, TxQueue } from '../../ethdev/driver.js';
import { Mbufs } from '../../mem/mbuf.js';
import { MBUF_WORD_SHIFT, OlFlags, W_TIMESTAMP_HI, W_TIMESTAMP_LO } from '../../mem/mbuf-layout.js';
import { Mempool } from '../../mem/mempool.js';
import { formatMac } from '../../net/ether.js';

/** The lines testpmd prints for one received burst: a header, then two lines per packet. */
export function dumpRxBurst(heap: Heap, mb: Mbufs, port: number, queue: number, burst: Burst, n: number): string {
  const lines = [`port ${port}/queue ${queue}: received ${n} packets`];
  const u8 = heap.u8;
  for (let i = 0; i < n; i++) {
    const h = burst[i]!;
    const at = mb.mtod(h);
    const len = mb.dataLen(h);
    const dst = len >= 6 ? formatMac(u8.subarray(at, at + 6)) : '??';
    const src = len >= 12 ? formatMac(u8.subarray(at + 6, at + 12)) : '??';
    const type = len >= 14 ? (u8[at + 12]! << 8) | u8[at + 13]! : 0;
    const ol = mb.olFlags(h);
    let line = `  src=${src} - dst=${dst} - pool=${Mempool.byId(heap, mb.poolId(h))?.name ?? '?'} - type=0x${type.toString(16).padStart(4, '0')} - length=${mb.pktLen(h)} - nb_segs=${mb.nbSegs(h)}`;
    if (ol & OlFlags.RX_RSS_HASH) line += ` - RSS hash=0x${(mb.hash(h) >>> 0).toString(16)} - RSS queue=0x${queue.toString(16)}`;
    if (ol & OlFlags.RX_TIMESTAMP) line += ` - timestamp ${rxTimestamp(heap, h)} `;
    if (ol & OlFlags.RX_QINQ) line += ` - QinQ VLAN tci=0x${mb.vlanTci(h).toString(16)}, VLAN tci outer=0x${mb.vlanTciOuter(h).toString(16)}`;
    else if (ol & OlFlags.RX_VLAN) line += ` - VLAN tci=0x${mb.vlanTci(h).toString(16)}`;
    lines.push(`${line} - Receive queue=0x${queue.toString(16)}`, `  ol_flags: ${olFlagNames(ol)}`);
  }
  return lines.join('\n') + '\n';
}

/** The rx timestamp in ns (Mbufs has no accessor for it: only the pcap driver and kernels use it). */
function rxTimestamp(heap: Heap, h: number): bigint {
  const w = h << MBUF_WORD_SHIFT;
  return (BigInt(heap.u32[w + W_TIMESTAMP_HI]!) << 32n) | BigInt(heap.u32[w + W_TIMESTAMP_LO]!);
}

/** rte_get_rx_ol_flag_list's names for the flags dpkit's drivers set. */
function olFlagNames(ol: number): string {
  const names: string[] = [];
  if (ol & OlFlags.RX_VLAN) names.push('RTE_MBUF_F_RX_VLAN');
  if (ol & OlFlags.RX_RSS_HASH) names.push('RTE_MBUF_F_RX_RSS_HASH');
  const l4 = ol & (OlFlags.RX_L4_CKSUM_BAD | OlFlags.RX_L4_CKSUM_GOOD);
  names.push(l4 === OlFlags.RX_L4_CKSUM_BAD ? 'RTE_MBUF_F_RX_L4_CKSUM_BAD' : l4 === OlFlags.RX_L4_CKSUM_GOOD ? 'RTE_MBUF_F_RX_L4_CKSUM_GOOD' : l4 ? 'RTE_MBUF_F_RX_L4_CKSUM_NONE' : 'RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN');
  const ip = ol & (OlFlags.RX_IP_CKSUM_BAD | OlFlags.RX_IP_CKSUM_GOOD);
  names.push(ip === OlFlags.RX_IP_CKSUM_BAD ? 'RTE_MBUF_F_RX_IP_CKSUM_BAD' : ip === OlFlags.RX_IP_CKSUM_GOOD ? 'RTE_MBUF_F_RX_IP_CKSUM_GOOD' : ip ? 'RTE_MBUF_F_RX_IP_CKSUM_NONE' : 'RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN');
  if (ol & OlFlags.RX_VLAN_STRIPPED) names.push('RTE_MBUF_F_RX_VLAN_STRIPPED');
  if (ol & OlFlags.RX_QINQ) names.push('RTE_MBUF_F_RX_QINQ');
  names.push('RTE_MBUF_F_RX_OUTER_L4_CKSUM_UNKNOWN');
  return names.join(' ') + ' ';
}

/** An rx queue that writes every non-empty burst it receives to `out` (verbose level 1 and more). */
export function dumpingRxQueue(rxq: RxQueue, heap: Heap, port: number, queue: number, out: (text: string) => void): RxQueue {
  const mb = new Mbufs(heap);
  return {
    rxBurst(burst: Burst, n: number): number {
      const got = rxq.rxBurst(burst, n);
      if (got > 0) out(dumpRxBurst(heap, mb, port, queue, burst, got));
      return got;
    },
    release: rxq.release?.bind(rxq),
    descriptor: () => rxq.descriptor(),
  };
}

/**
 * A tx queue that, when the queue takes only part of a burst, waits
 * `delayUs` and offers the rest again, up to `retries` times (testpmd's
 * retry, as its io/mac engines do it). Keeps txBurst's contract: the count
 * taken, the caller owning burst[count..n).
 */
export function retryingTxQueue(txq: TxQueue, heap: Heap, delayUs: number, retries: number): TxQueue {
  const rest = heap.burst(512);
  return {
    txBurst(burst: Burst, n: number): number {
      let sent = txq.txBurst(burst, n);
      for (let r = 0; sent < n && r < retries; r++) {
        delay(delayUs);
        const left = n - sent;
        rest.set(burst.subarray(sent, n));
        const k = txq.txBurst(rest, left);
        // What the queue still refused goes back where the caller looks for it.
        burst.set(rest.subarray(k, left), sent + k);
        sent += k;
      }
      return sent;
    },
    flush: txq.flush?.bind(txq),
    descriptor: () => txq.descriptor(),
  };
}

/** rte_delay_us_block: a busy wait, as DPDK's lcores wait between retries. */
function delay(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end);
}
