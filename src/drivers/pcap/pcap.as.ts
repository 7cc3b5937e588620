// net_pcap's infinite_rx replay, one call per burst (twin: PcapTwin.replay in
// pcap.twin.ts, same signature). `q` is the queue's replay block
// (pcap.record.ts), `burst` the heap offset of freshly allocated mbufs.
import { RXQ_STAT_BYTES, RXQ_STAT_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import { mtod } from '../../mem/mbuf.as';
import { MBUF_SHIFT, M_DATA_LEN, M_PKT_LEN, M_PORT } from '../../mem/mbuf-layout.as';
import { PCAP_REPLAY_ENTRY_SIZE, REPLAY_COUNT, REPLAY_CURSOR, REPLAY_ENTRY_CAPLEN, REPLAY_ENTRY_DATA, REPLAY_PORT, REPLAY_ROOM, REPLAY_STATS, REPLAY_TABLE } from './pcap-layout.as';

/**
 * infinite_rx: fills the mbufs `burst[0..n)` from the replay table, from the
 * cursor on, wrapping at the table's end: bytes, lengths and port, as DPDK's
 * eth_pcap_rx_infinite (no timestamp). Stops before a packet longer than one mbuf's room
 * (a chain: TypeScript builds it). Adds packets and bytes to the queue's
 * counters. `lc` is unused (the mbufs are allocated already): the shape of
 * every kernel. @returns how many mbufs it filled.
 */
export function pcapReplay(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const table = load<u32>(q, REPLAY_TABLE);
  const count = load<u32>(q, REPLAY_COUNT);
  const port = load<u32>(q, REPLAY_PORT);
  const room = load<u32>(q, REPLAY_ROOM);
  let c = load<u32>(q, REPLAY_CURSOR);
  let bytes: u64 = 0;
  let i: u32 = 0;
  for (; i < n; i++) {
    const t = table + c * PCAP_REPLAY_ENTRY_SIZE;
    const len = load<u32>(t, REPLAY_ENTRY_CAPLEN);
    if (len > room) break;
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    copyBytes(mtod(r), load<u32>(t, REPLAY_ENTRY_DATA), len);
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u16>(r, <u16>port, M_PORT);
    bytes += len;
    if (++c === count) c = 0;
  }
  store<u32>(q, c, REPLAY_CURSOR);
  const stats = load<u32>(q, REPLAY_STATS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_PACKETS) + <f64>i, RXQ_STAT_PACKETS);
  store<f64>(stats, load<f64>(stats, RXQ_STAT_BYTES) + <f64>bytes, RXQ_STAT_BYTES);
  return i;
}
