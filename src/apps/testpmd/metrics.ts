/**
 * testpmd's Prometheus metrics, read from the shared counters at each scrape
 * on the main thread: ports and queues (rte_eth_stats), forwarding drops,
 * links, mempools and, when cycles are recorded, each lcore's busy time.
 * Counters restart from 0 after `clear port stats`, which Prometheus treats
 * as a counter reset.
 */
import type { MetricFamily, MetricSample } from '../../metrics/exposition.js';
import { heapPools } from './observe.js';
import type { Testpmd } from './testpmd.js';

/** Every family of a testpmd, in a fixed order. */
export function testpmdMetrics(pmd: Testpmd): MetricFamily[] {
  const ports = pmd.ports.map((port) => ({ port, name: pmd.ethdev.name(port), s: pmd.ethdev.stats(port) }));
  const perPort = (name: string, help: string, v: (s: (typeof ports)[number]['s']) => number): MetricFamily => ({
    name,
    help,
    type: 'counter',
    samples: ports.map((p) => ({ labels: { port: p.port, name: p.name }, value: v(p.s) })),
  });
  const perQueue = (name: string, help: string, v: (s: (typeof ports)[number]['s']) => number[]): MetricFamily => ({
    name,
    help,
    type: 'counter',
    samples: ports.flatMap((p) => v(p.s).map((value, queue) => ({ labels: { port: p.port, queue }, value }))),
  });
  const fwdDropped = new Map<number, number>();
  for (const s of pmd.streamStats()) fwdDropped.set(s.txPort, (fwdDropped.get(s.txPort) ?? 0) + s.fwdDropped);
  const pools = heapPools(pmd);
  const lcores = pmd.lcoreCycles();
  const lcoreGauge = (name: string, help: string, v: (c: (typeof lcores)[number]) => number): MetricFamily => ({
    name,
    help,
    type: 'gauge',
    samples: lcores.map((c) => ({ labels: { lcore: c.lcore }, value: v(c) })),
  });
  const lcoreCounter = (name: string, help: string, v: (c: (typeof lcores)[number]) => number): MetricFamily => ({ ...lcoreGauge(name, help, v), type: 'counter' });
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
    {
      name: 'dpkit_port_fwd_dropped_total',
      help: 'Packets the port\'s tx queues refused and forwarding freed since forwarding started (TX-dropped).',
      type: 'counter',
      samples: ports.map((p) => ({ labels: { port: p.port, name: p.name }, value: fwdDropped.get(p.port) ?? 0 })),
    },
    perQueue('dpkit_queue_rx_packets_total', 'Packets received by the rx queue.', (s) => s.qIpackets),
    perQueue('dpkit_queue_rx_bytes_total', 'Bytes received by the rx queue.', (s) => s.qIbytes),
    perQueue('dpkit_queue_rx_errors_total', 'Erroneous packets on the rx queue.', (s) => s.qErrors),
    perQueue('dpkit_queue_tx_packets_total', 'Packets sent by the tx queue.', (s) => s.qOpackets),
    perQueue('dpkit_queue_tx_bytes_total', 'Bytes sent by the tx queue.', (s) => s.qObytes),
    { name: 'dpkit_port_link_up', help: 'Link status: 1 up, 0 down.', type: 'gauge', samples: linkSamples((p) => (pmd.ethdev.linkUp(p) ? 1 : 0)) },
    { name: 'dpkit_port_link_speed_mbps', help: 'Link speed in Mbps.', type: 'gauge', samples: linkSamples((p) => pmd.ethdev.linkSpeed(p)) },
    { name: 'dpkit_mempool_in_use', help: 'Mbufs taken from the pool and not returned (rte_mempool_in_use_count).', type: 'gauge', samples: pools.map((mp) => ({ labels: { pool: mp.name }, value: mp.inUse() })) },
    { name: 'dpkit_mempool_size', help: 'Mbufs in the pool.', type: 'gauge', samples: pools.map((mp) => ({ labels: { pool: mp.name }, value: mp.size })) },
    { name: 'dpkit_forwarding', help: '1 while packet forwarding runs.', type: 'gauge', samples: [{ value: pmd.forwarding ? 1 : 0 }] },
    lcoreCounter('dpkit_lcore_busy_seconds_total', 'Time the lcore spent in engine calls that moved packets, since forwarding started.', (c) => c.busyNs / 1e9),
    lcoreCounter('dpkit_lcore_seconds_total', 'Time the lcore has polled since forwarding started.', (c) => c.totalNs / 1e9),
    lcoreGauge('dpkit_lcore_busy_ratio', 'Busy time over polling time since forwarding started (0 to 1).', (c) => (c.totalNs > 0 ? Math.min(1, c.busyNs / c.totalNs) : 0)),
    lcoreGauge('dpkit_lcore_packets_per_busy_second', 'Packets the lcore moved per second of busy time (rx; tx for txonly and flowgen).', (c) => (c.busyNs > 0 ? c.packets / (c.busyNs / 1e9) : 0)),
  ];
}
