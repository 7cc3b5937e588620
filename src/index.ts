/**
 * dpkit's public API: `import { init } from 'dpkit'`. Everything a packet
 * program needs: the EAL-like start (`init`), ports (`Eal.ethdev`), pools,
 * rings, mbuf accessors, bursts, lcore launches, and the typed errors. Other
 * paths of the package are private and may change without notice.
 * @packageDocumentation
 */
export * from './errors.js';
export { init, Eal } from './api/eal.js';
export type { EalOptions, EalPoolOptions, MetricsEndpoint } from './api/eal.js';
export { Launch, LaunchError } from './api/launch.js';
export type { LaunchOptions, LcoreResult } from './api/launch.js';
export type { LcoreContext } from './api/lcore.js';
export { RxQueueHandle, TxQueueHandle } from './api/queue.js';
export { BurstOps } from './api/burst-ops.js';
export type { ChecksumCounts, MacAddrs } from './api/burst-ops.js';
export { buildKernel, loadKernel } from './api/kernel.js';
export type { BuildKernelOptions, UserKernel } from './api/kernel.js';
export { KernelError } from './eal/kernels.js';
export type { KernelFn } from './eal/kernels.js';
export { LcoreError } from './eal/launcher.js';
export { Heap, MAX_LCORES, MAX_POOLS, wasmMemoryProvider } from './eal/heap.js';
export type { Burst, HeapDescriptor, HeapOptions, MemoryProvider } from './eal/heap.js';
export type { Datapath } from './eal/kernels.js';
export { Ethdev, PortStateError, MAX_ETHPORTS } from './ethdev/ethdev.js';
export { TxOffload } from './ethdev/driver.js';
export type { DescLim, DevInfo, RxQueueConf, TxQueueConf } from './ethdev/driver.js';
export type { EthStats } from './ethdev/stats.js';
export { Mempool, MEMPOOL_CACHE_MAX_SIZE, MBUF_DEFAULT_BUF_SIZE } from './mem/mempool.js';
export type { MempoolDescriptor, MempoolOptions } from './mem/mempool.js';
export { Mbufs, FREE_PENDING_SZ } from './mem/mbuf.js';
export { OlFlags, OlFlagsHi, PORT_INVALID, PKTMBUF_HEADROOM, MBUF_SIZE } from './mem/mbuf-layout.js';
export { Ring, RING_F_EXACT_SZ, RING_F_SC_DEQ, RING_F_SP_ENQ } from './ring/ring.js';
export type { RingDescriptor, RingOptions } from './ring/ring.js';
export type { UserBurstFn, UserEngine, UserEngineContext, UserStream } from './api/user-engine.js';
export { generate, monotonicClock } from './gen/generate.js';
export type { GenBurstHook, GenClock, GenerateOptions, GenPeriodReport, GenReport, GenStreamReport, GenStreamSpec, GenTarget, PacedOptions } from './gen/generate.js';
export { searchRate } from './gen/search.js';
export type { SearchOptions, SearchReport, SearchTrial } from './gen/search.js';
export { replay } from './gen/replay.js';
export { generateOnLcores } from './api/generate-lcores.js';
export type { GenerateOnLcoresOptions } from './api/generate-lcores.js';
export type { ReplayOptions } from './gen/replay.js';
export type { EthSpec, FieldVarSpec, Ipv4Spec, Ipv6Spec, RawField, SizeRange, SizeSpec, StreamSpec, TcpSpec, UdpSpec, VaryMode } from './gen/stream.js';
export type { BurstPattern, ConstantPattern, Pacer, PatternSpec, PoissonPattern, RampPattern, SchedulePattern, ScheduleStep } from './gen/pacer.js';
// Rates as `--rate` writes them (pps, bits with or without FCS, L1, % of a link), in packets a second.
export { L1_OVERHEAD_LEN, parseRate, parseRateSpec, RTE_ETHER_CRC_LEN } from './gen/pacer.js';
export type { RateKind, RateLink, RateSpec } from './gen/pacer.js';
export { rateLink } from './gen/generate.js';
export type { PacedSource } from './gen/generate.js';
// Latency, loss and order (docs/latency.md): one clock, probes, histograms.
export { nowNs, clockIsNative, clockUncertaintyNs } from './eal/clock.js';
export { ProbeRx, ProbeTx, probeStreamStats, PROBE_MAX_STREAMS, PROBE_SIG_LEN } from './gen/probe.js';
export type { ProbeRxOptions, ProbeStreamStats } from './gen/probe.js';
export { LatencyHistogram } from './gen/hist.js';
export type { HistogramOptions, LatencySummary } from './gen/hist.js';
export { probeLoopbackBias } from './gen/bias.js';
export type { BiasOptions } from './gen/bias.js';
