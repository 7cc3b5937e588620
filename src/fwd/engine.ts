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
import type { GenStreamSpec } from '../gen/generate.js';
import { FWD_STREAM_STATS_SIZE } from './fwd-layout.js';
import { defaultVariants, type EngineVariants } from './variants.js';

/** testpmd's MAX_PKT_BURST. */
export const MAX_PKT_BURST = 512;

/** Stream counters (Float64 slots from FwdStream.stats), declared in fwd.record.ts. */
export { FS_FWD_DROPPED, FS_RX_BAD_IP_CSUM, FS_RX_BAD_L4_CSUM, FS_RX_PACKETS, FS_TX_PACKETS } from './fwd-layout.js';
/** Float64 slots per stream's counters. */
export const FS_SLOTS = FWD_STREAM_STATS_SIZE / 8;

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
  /** The stream's number among all forwarding streams (testpmd's stream id); the gen engine splits its streams by it. */
  index?: number;
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
  /** The arm of each study an engine runs (variants.ts: macswap's `--macswap-kernel`). */
  variants: EngineVariants;
  /** The gen engine's streams and settings (--gen-*, `set gen`). */
  gen: GenFwdConfig;
}

/** What testpmd's gen forward mode sends (fwd/gen.ts). */
export interface GenFwdConfig {
  /** The generator streams (gen/stream.ts specs with rate and pattern), split over the forwarding streams. */
  streams: GenStreamSpec[];
  /** The rate of streams that name none (--gen-rate); `N%` is of each stream's tx port's link. */
  rate: string;
  /** Packets per stream, then it stops sending (--gen-count); absent: until `stop`. */
  count?: number;
  /** A probe in every packet; each lcore checks what comes back on its streams' rx queues (--gen-latency). */
  latency: boolean;
  /** A burst leaving later than this after its deadline counts its packets late. */
  lateNs: number;
  /** Set by testpmd at start: how many forwarding streams there are (gen stream k goes to forwarding stream k mod this). */
  fwdStreams: number;
  /** Set by testpmd at start: each gen stream's genTxStats block (first Float64 slot), zeroed. */
  stats: number[];
  /** Set by testpmd at start: each port's link speed in Mbps (0: down or unknown), by port id, for `N%` rates. */
  linkMbps?: number[];
}

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
    variants: defaultVariants(),
    gen: { streams: [{}], rate: '1Mpps', latency: false, lateNs: 100_000, fwdStreams: 1, stats: [] },
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

/**
 * An engine's per-burst work: its wasm kernel (`<engine>.as.ts`) or the
 * TypeScript twin (`<engine>.twin.ts`), same signature, chosen once when the
 * engine is made (`<engine>Ops`). Arguments are heap byte offsets: `state`
 * the engine's or the stream's block (fwd.record.ts), `lc` the calling
 * thread's lcore block, `burst` a burst; `n` its count.
 */
export type EngineKernel = (state: number, lc: number, burst: number, n: number) => void;
