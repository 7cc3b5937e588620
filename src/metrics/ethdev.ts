/**
 * The Prometheus families of any dpkit program's ports and pools (testpmd's
 * `--metrics` and the API's `Eal.metricsListen`): per port and queue
 * packets, bytes, errors, drops, rx_nombuf, link state and speed, and each
 * pool's mbufs in use, read whole from the shared counters at each scrape.
 */
import type { EthStats } from '../ethdev/stats.js';
import type { Ethdev } from '../ethdev/ethdev.js';
import type { Mempool } from '../mem/mempool.js';
import type { MetricFamily, MetricSample } from './exposition.js';

/** The families of `ports` of `ethdev` and of `pools`, in a fixed order. */
export function ethdevMetrics(ethdev: Ethdev, portIds: readonly number[], pools: readonly Mempool[]): MetricFamily[] {
  const ports = portIds.map((port) => ({ port, name: ethdev.name(port), s: ethdev.stats(port) }));
  const perPort = (name: string, help: string, v: (s: EthStats) => number): MetricFamily => ({
    name,
    help,
    type: 'counter',
    samples: ports.map((p) => ({ labels: { port: p.port, name: p.name }, value: v(p.s) })),
  });
  const perQueue = (name: string, help: string, v: (s: EthStats) => number[]): MetricFamily => ({
    name,
    help,
    type: 'counter',
    samples: ports.flatMap((p) => v(p.s).map((value, queue) => ({ labels: { port: p.port, queue }, value }))),
  });
  const linkSamples = (v: (port: number) => number): MetricSample[] => ports.map((p) => ({ labels: { port: p.port, name: p.name }, value: v(p.port) }));
  return [
    perPort('dpkit_port_rx_packets_total', 'Packets received by the port (ipackets).', (s) => s.ipackets),
    perPort('dpkit_port_tx_packets_total', 'Packets sent by the port (opackets).', (s) => s.opackets),
    perPort('dpkit_port_rx_bytes_total', 'Bytes received by the port (ibytes).', (s) => s.ibytes),
    perPort('dpkit_port_tx_bytes_total', 'Bytes sent by the port (obytes).', (s) => s.obytes),
    perPort('dpkit_port_rx_errors_total', 'Erroneous received packets (ierrors).', (s) => s.ierrors),
    perPort('dpkit_port_tx_errors_total', 'Failed transmitted packets (oerrors).', (s) => s.oerrors),
    perPort('dpkit_port_rx_missed_total', 'Packets dropped by the port for lack of room (imissed).', (s) => s.imissed),
    perPort('dpkit_port_rx_nombuf_total', 'Receive mbuf allocation failures (rx_nombuf).', (s) => s.rxNombuf),
    perQueue('dpkit_queue_rx_packets_total', 'Packets received by the rx queue.', (s) => s.qIpackets),
    perQueue('dpkit_queue_rx_bytes_total', 'Bytes received by the rx queue.', (s) => s.qIbytes),
    perQueue('dpkit_queue_rx_errors_total', 'Erroneous packets on the rx queue.', (s) => s.qErrors),
    perQueue('dpkit_queue_tx_packets_total', 'Packets sent by the tx queue.', (s) => s.qOpackets),
    perQueue('dpkit_queue_tx_bytes_total', 'Bytes sent by the tx queue.', (s) => s.qObytes),
    { name: 'dpkit_port_link_up', help: 'Link status: 1 up, 0 down.', type: 'gauge', samples: linkSamples((p) => (ethdev.linkUp(p) ? 1 : 0)) },
    { name: 'dpkit_port_link_speed_mbps', help: 'Link speed in Mbps.', type: 'gauge', samples: linkSamples((p) => ethdev.linkSpeed(p)) },
    { name: 'dpkit_mempool_in_use', help: 'Mbufs taken from the pool and not returned (rte_mempool_in_use_count).', type: 'gauge', samples: pools.map((mp) => ({ labels: { pool: mp.name }, value: mp.inUse() })) },
    { name: 'dpkit_mempool_size', help: 'Mbufs in the pool.', type: 'gauge', samples: pools.map((mp) => ({ labels: { pool: mp.name }, value: mp.size })) },
  ];
}
