/**
 * testpmd's Prometheus metrics, read from the shared counters at each scrape
 * on the main thread: every port's (metrics/ethdev.ts), forwarding drops and
 * state and, when cycles are recorded, each lcore's busy time. Counters
 * restart from 0 after `clear port stats`, which Prometheus treats as a
 * counter reset.
 */
import { ethdevMetrics } from '../../metrics/ethdev.js';
import type { MetricFamily } from '../../metrics/exposition.js';
import { heapPools } from './observe.js';
import type { Testpmd } from './testpmd.js';

/** Every family of a testpmd, in a fixed order. */
export function testpmdMetrics(pmd: Testpmd): MetricFamily[] {
  const fwdDropped = new Map<number, number>();
  for (const s of pmd.streamStats()) fwdDropped.set(s.txPort, (fwdDropped.get(s.txPort) ?? 0) + s.fwdDropped);
  const lcores = pmd.lcoreCycles();
  const lcoreGauge = (name: string, help: string, v: (c: (typeof lcores)[number]) => number): MetricFamily => ({
    name,
    help,
    type: 'gauge',
    samples: lcores.map((c) => ({ labels: { lcore: c.lcore }, value: v(c) })),
  });
  const lcoreCounter = (name: string, help: string, v: (c: (typeof lcores)[number]) => number): MetricFamily => ({ ...lcoreGauge(name, help, v), type: 'counter' });
  return [
    ...ethdevMetrics(pmd.ethdev, pmd.ports, heapPools(pmd)),
    {
      name: 'dpkit_port_fwd_dropped_total',
      help: 'Packets the port\'s tx queues refused and forwarding freed since forwarding started (TX-dropped).',
      type: 'counter',
      samples: pmd.ports.map((port) => ({ labels: { port, name: pmd.ethdev.name(port) }, value: fwdDropped.get(port) ?? 0 })),
    },
    { name: 'dpkit_forwarding', help: '1 while packet forwarding runs.', type: 'gauge', samples: [{ value: pmd.forwarding ? 1 : 0 }] },
    lcoreCounter('dpkit_lcore_busy_seconds_total', 'Time the lcore spent in engine calls that moved packets, since forwarding started.', (c) => c.busyNs / 1e9),
    lcoreCounter('dpkit_lcore_seconds_total', 'Time the lcore has polled since forwarding started.', (c) => c.totalNs / 1e9),
    lcoreGauge('dpkit_lcore_busy_ratio', 'Busy time over polling time since forwarding started (0 to 1).', (c) => (c.totalNs > 0 ? Math.min(1, c.busyNs / c.totalNs) : 0)),
    lcoreGauge('dpkit_lcore_packets_per_busy_second', 'Packets the lcore moved per second of busy time (rx; tx for txonly and flowgen).', (c) => (c.busyNs > 0 ? c.packets / (c.busyNs / 1e9) : 0)),
  ];
}
