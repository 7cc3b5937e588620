/**
 * The driver interface behind ethdev: what a poll-mode driver implements.
 *
 * Data path: an RxQueue / TxQueue object per queue, called once per burst.
 * A queue can be re-opened in another thread (an lcore worker) from its
 * descriptor, a plain structured-clonable object, so everything a queue
 * touches on the data path lives in the shared heap.
 */
import type { Burst, Heap } from '../eal/heap.js';
import type { Mempool } from '../mem/mempool.js';

export interface RxQueue {
  /**
   * Receives up to `n` packets into `burst[0..)` (rte_eth_rx_burst).
   * @returns how many; the caller owns them.
   */
  rxBurst(burst: Burst, n: number): number;
  /** Closes what this handle opened for itself (an lcore calls it when it stops), e.g. a capture file. */
  release?(): void;
  descriptor(): QueueDescriptor;
}

export interface TxQueue {
  /**
   * Sends `burst[0..n)` (rte_eth_tx_burst).
   * @returns how many the driver took; the caller still owns `burst[count..n)`.
   */
  txBurst(burst: Burst, n: number): number;
  /** Pushes out what the queue buffered (an lcore calls it when it stops), e.g. records of a capture file. */
  flush?(): void;
  descriptor(): QueueDescriptor;
}

/** Plain data that re-opens a queue in another thread; `driver` selects the opener. */
export interface QueueDescriptor {
  readonly driver: string;
  readonly [key: string]: unknown;
}

/** rte_eth_rxconf: an rx queue's settings beyond its descriptors and pool. */
export interface RxQueueConf {
  /** rx_free_thresh: descriptors refilled at once (drivers with descriptor rings). */
  rxFreeThresh?: number;
}

/** rte_eth_txconf: a tx queue's settings beyond its descriptors. */
export interface TxQueueConf {
  /** tx_rs_thresh: descriptors between two report-status requests. */
  txRsThresh?: number;
  /** tx_free_thresh: reclaim completed descriptors below this many free. */
  txFreeThresh?: number;
  /** RTE_ETH_TX_OFFLOAD_* bits. */
  offloads?: number;
}

/** RTE_ETH_TX_OFFLOAD_* values used by dpkit. */
export const TxOffload = {
  /** RTE_ETH_TX_OFFLOAD_VLAN_INSERT: insert the mbuf's vlanTci. */
  VLAN_INSERT: 1 << 0,
  /** RTE_ETH_TX_OFFLOAD_IPV4_CKSUM: compute the IPv4 header checksum. */
  IPV4_CKSUM: 1 << 1,
  /** RTE_ETH_TX_OFFLOAD_UDP_CKSUM: compute the UDP checksum. */
  UDP_CKSUM: 1 << 2,
  /** RTE_ETH_TX_OFFLOAD_TCP_CKSUM: compute the TCP checksum. */
  TCP_CKSUM: 1 << 3,
  /** RTE_ETH_TX_OFFLOAD_QINQ_INSERT: insert the outer and inner VLAN tags. */
  QINQ_INSERT: 1 << 8,
  /** RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE: mbufs sent are direct, refcnt 1, from one pool: freed in bulk. */
  MBUF_FAST_FREE: 1 << 16,
} as const;

/** rte_eth_desc_lim: the descriptor counts a queue accepts. */
export interface DescLim {
  /** Fewest descriptors. */
  min: number;
  /** Most descriptors. */
  max: number;
  /** The count must be a multiple of this. */
  align: number;
}

/** rte_eth_desc_lim plus queue-count limits (rte_eth_dev_info). */
export interface DevInfo {
  /** The driver's name (`net_null`, `net_memif`, …). */
  driverName: string;
  /** Rx queues the port can have. */
  maxRxQueues: number;
  /** Tx queues the port can have. */
  maxTxQueues: number;
  /** Rx descriptor counts a queue accepts. */
  rxDescLim: DescLim;
  /** Tx descriptor counts a queue accepts. */
  txDescLim: DescLim;
  /** Used when the application asks for 0 descriptors (testpmd's default). */
  defaultRxDesc: number;
  /** Tx's count used when the application asks for 0. */
  defaultTxDesc: number;
}

/** What ethdev asks of a driver. One object per port. */
export interface EthDriver {
  info(): DevInfo;
  macAddr(): Uint8Array;
  configure(nbRxq: number, nbTxq: number): void;
  rxQueueSetup(q: number, nbDesc: number, pool: Mempool, conf: RxQueueConf, stats: number): RxQueue;
  txQueueSetup(q: number, nbDesc: number, conf: TxQueueConf, stats: number): TxQueue;
  start(): void;
  stop(): void;
  /** Releases everything, including mbufs the driver still holds. */
  close(): void;
  linkUp(): boolean;
  /** Link speed in Mbps, for `show port info`. */
  linkSpeed(): number;
  /**
   * The driver's mtu_set: acts on what carries the frames (a kernel
   * interface's MTU). Absent: the MTU is only recorded.
   * @throws DpkitError naming the device and why the MTU was refused.
   */
  mtuSet?(mtu: number): void;
  /** Driver-specific counters by name, added to ethdev's xstats. */
  xstats?(): Record<string, number>;
  /**
   * For ports whose input ends (a capture file): true once every rx queue
   * has delivered its last packet. Absent on ports that receive forever.
   */
  rxEnded?(): boolean;
  /**
   * rx_descriptor_status: RX_DESC_AVAIL (0), RX_DESC_DONE (1) or
   * RX_DESC_UNAVAIL (2) for the descriptor `offset` after the next to be
   * filled, or a negative errno. Absent: the driver cannot tell (-ENOTSUP).
   */
  rxDescriptorStatus?(q: number, offset: number): number;
  /** tx_descriptor_status: TX_DESC_FULL (0), TX_DESC_DONE (1), TX_DESC_UNAVAIL (2) or a negative errno. */
  txDescriptorStatus?(q: number, offset: number): number;
}

/** Context a driver is created with. */
export interface DriverContext {
  heap: Heap;
  portId: number;
  /** The full device name from the devargs, e.g. net_null0. */
  name: string;
  args: Map<string, string>;
  /** Every key=value in order, for keys that may repeat (net_pcap's rx_pcap=…,rx_pcap=…). */
  all: readonly [string, string][];
}

export interface DriverSpec {
  /** DPDK's driver name: net_null, net_ring, … */
  name: string;
  /** Accepted devargs keys; anything else is rejected with an error naming it. */
  keys: readonly string[];
  create(ctx: DriverContext): EthDriver;
  /** Heap bytes a port with these devargs will reserve beyond its queues' usual needs (e.g. a capture replayed from memory). */
  memoryNeeded?(args: readonly [string, string][]): number;
  /** Re-opens a queue from its descriptor in another thread. */
  openRxQueue(heap: Heap, desc: QueueDescriptor): RxQueue;
  openTxQueue(heap: Heap, desc: QueueDescriptor): TxQueue;
}
