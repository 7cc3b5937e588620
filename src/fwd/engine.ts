/**
 * Forwarding engines (testpmd's fwd_engine): each is a function over one
 * stream's burst, run by one lcore's poll loop. Engines allocate nothing per
 * packet or burst: the burst array, views and templates are made when the
 * lcore starts.
 */
import type { RxQueue, TxQueue } from '../ethdev/driver.js';
import type { Burst, Heap } from '../eal/heap.js';
import type { Mbufs } from '../mem/mbuf.js';
import type { Mempool } from '../mem/mempool.js';

/** testpmd's MAX_PKT_BURST. */
export const MAX_PKT_BURST = 512;

/** Stream counters (Float64 slots from FwdStream.stats), declared in stream.record.ts; see ethdev/stats.ts for why plain stores are safe. */
export { FS_FWD_DROPPED, FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_SLOTS, FS_TX_PACKETS } from './stream-layout.js';

/** A forwarding stream (testpmd's fwd_stream): one rx queue to one tx queue. */
export interface FwdStream {
  rxPort: number;
  rxQueue: number;
  txPort: number;
  txQueue: number;
  rxq: RxQueue;
  txq: TxQueue;
  /** First Float64 slot of this stream's counters (FS_*). */
  stats: number;
  /** The tx port's own address and its peer's (--eth-peer, default 02:00:00:00:00:pp). */
  txMac: Uint8Array;
  peerMac: Uint8Array;
}

/** Engine settings testpmd takes from its command line and `set` commands. */
export interface FwdConfig {
  /** Packets per burst (--burst). */
  burst: number;
  /** Segment lengths of generated packets (--txpkts); their sum is the packet length. */
  txPkts: number[];
  /** Vary the source IP of generated packets per packet (--txonly-multi-flow). */
  txOnlyMultiFlow: boolean;
  /** Number of flows flowgen cycles through (--flowgen-flows). */
  flowgenFlows: number;
  /** Generated packets' addresses (testpmd: 198.18.0.1 → 198.18.0.2, UDP 9 → 9). */
  txIpSrc: number;
  txIpDst: number;
  txUdpSrc: number;
  txUdpDst: number;
  /** RTE_ETH_TX_OFFLOAD_* bits of the tx port (VLAN/QinQ insert change the mbufs). */
  txOffloads: number;
  vlanTci: number;
  vlanTciOuter: number;
  /** macswap's implementation: the TypeScript twin or one of the wasm variants of the SIMD macswap study. */
  macswapKernel: MacswapVariant;
}

/** `--macswap-kernel`: scalar (TypeScript), simd, simd-ofl (offload fields first), simd-interleave (4 at a time). */
export const MACSWAP_VARIANTS = ['scalar', 'simd', 'simd-ofl', 'simd-interleave'] as const;
export type MacswapVariant = (typeof MACSWAP_VARIANTS)[number];

export function defaultFwdConfig(): FwdConfig {
  return {
    burst: 32,
    txPkts: [64],
    txOnlyMultiFlow: false,
    flowgenFlows: 1024,
    txIpSrc: ((198 << 24) | (18 << 16) | 1) >>> 0,
    txIpDst: ((198 << 24) | (18 << 16) | 2) >>> 0,
    txUdpSrc: 9,
    txUdpDst: 9,
    txOffloads: 0,
    vlanTci: 0,
    vlanTciOuter: 0,
    macswapKernel: 'simd-interleave',
  };
}

/** What an engine works with on its lcore. */
export interface FwdContext {
  heap: Heap;
  mb: Mbufs;
  /** Pool for packets the engine creates (txonly, flowgen), this lcore's cache. */
  pool: Mempool;
  /** The lcore's burst array, in the heap (kernels work on it in place). */
  burst: Burst;
  config: FwdConfig;
}

export interface FwdEngine {
  readonly name: string;
  /** One pass over one stream: receive (or generate), work, transmit, free what tx refused. */
  fwd(fs: FwdStream): void;
}

export type EngineFactory = (ctx: FwdContext) => FwdEngine;
