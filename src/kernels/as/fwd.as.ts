// Per-burst work of drivers on packet metadata and bytes: one call per
// burst, in place in the shared heap. Each has a TypeScript twin in the
// module that calls it (see the comments). The forwarding engines' kernels
// are beside them in src/fwd/.
import { RXQ_STAT_BYTES as Q_BYTES, RXQ_STAT_PACKETS as Q_PACKETS } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import {
  MBUF_SHIFT,
  M_BUF_ADDR,
  M_DATA_LEN,
  M_DATA_OFF,
  M_OL_FLAGS,
  M_PKT_LEN,
  M_PORT,
  M_TIMESTAMP,
  OL_RX_TIMESTAMP,
} from '../../mem/mbuf-layout.as';

/** Total pktLen of a burst (tx byte counters; twin: burstBytes in src/drivers/burst-bytes.ts). */
export function pktLenSum(objs: u32, n: u32): u32 {
  let sum: u32 = 0;
  for (let i: u32 = 0; i < n; i++) sum += load<u32>(load<u32>(objs + (i << 2)) << MBUF_SHIFT, M_PKT_LEN);
  return sum;
}

/** Heap offset of the packet data of record `r`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function dataAddr(r: u32): u32 {
  return load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF);
}

// ---- net_pcap replay (twin: PcapRxQueue's replay loop, drivers/pcap/pcap.ts) ----

/**
 * infinite_rx: fills the freshly allocated mbufs `objs[0..n)` from the replay
 * table (per packet: data offset, caplen, seconds, nanoseconds as u32 words),
 * starting at the cursor word at `cursor` and wrapping at `count`: bytes,
 * lengths, port, the rx timestamp and its flag. Stops before a packet longer
 * than `room` (a chain: TypeScript builds it). Adds packets and bytes to the
 * queue statistics at `stats`. @returns how many mbufs it filled.
 */
export function pcapReplay(objs: u32, n: u32, table: u32, count: u32, cursor: u32, port: u32, room: u32, stats: u32): u32 {
  let c = load<u32>(cursor);
  let bytes: u64 = 0;
  let i: u32 = 0;
  for (; i < n; i++) {
    const t = table + (c << 4);
    const len = load<u32>(t, 4);
    if (len > room) break;
    const r = load<u32>(objs + (i << 2)) << MBUF_SHIFT;
    copyBytes(dataAddr(r), load<u32>(t), len);
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u16>(r, <u16>port, M_PORT);
    store<u64>(r, <u64>load<u32>(t, 8) * 1_000_000_000 + <u64>load<u32>(t, 12), M_TIMESTAMP);
    store<u32>(r, load<u32>(r, M_OL_FLAGS) | OL_RX_TIMESTAMP, M_OL_FLAGS);
    bytes += len;
    if (++c === count) c = 0;
  }
  store<u32>(cursor, c);
  store<f64>(stats, load<f64>(stats, Q_PACKETS) + <f64>i, Q_PACKETS);
  store<f64>(stats, load<f64>(stats, Q_BYTES) + <f64>bytes, Q_BYTES);
  return i;
}
