/**
 * Rates between two reads of the ports' shared counters: what the streamed
 * `--stats-period --json` lines and the dashboard's points show. Each
 * sampler keeps its own previous read, so several readers never disturb one
 * another (nor the shell's "since last show" baseline).
 */
import type { EthStats } from '../../ethdev/stats.js';
import type { Testpmd } from './testpmd.js';

/** One port in one sample: rte_eth_stats' totals (without the per-queue arrays) and the rates since the previous sample. */
export interface PortSample extends Omit<EthStats, 'qIpackets' | 'qOpackets' | 'qIbytes' | 'qObytes' | 'qErrors'> {
  port: number;
  /** Packets and bits per second since the previous sample (0 for the first). */
  rxPps: number;
  txPps: number;
  rxBps: number;
  txBps: number;
}

export interface Sample {
  /** Wall-clock time of the read, ms since the epoch. */
  time: number;
  /** Seconds since the previous sample (0 for the first). */
  interval: number;
  forwarding: boolean;
  ports: PortSample[];
}

export class RateSampler {
  private prev = new Map<number, { at: number; rx: number; tx: number; rxBytes: number; txBytes: number }>();

  constructor(private readonly pmd: Testpmd) {}

  /** Reads every port now. A port whose counters went back (cleared) restarts its rates at 0. */
  sample(): Sample {
    const at = performance.now();
    let interval = 0;
    const ports = this.pmd.ports.map((port): PortSample => {
      const { qIpackets: _qi, qOpackets: _qo, qIbytes: _qib, qObytes: _qob, qErrors: _qe, ...s } = this.pmd.ethdev.stats(port);
      const p = this.prev.get(port);
      this.prev.set(port, { at, rx: s.ipackets, tx: s.opackets, rxBytes: s.ibytes, txBytes: s.obytes });
      const dt = p ? (at - p.at) / 1000 : 0;
      interval = Math.max(interval, dt);
      const rate = (now: number, before: number | undefined, scale = 1) => (dt > 0 && before !== undefined && now >= before ? ((now - before) * scale) / dt : 0);
      return {
        port,
        ...s,
        rxPps: rate(s.ipackets, p?.rx),
        txPps: rate(s.opackets, p?.tx),
        rxBps: rate(s.ibytes, p?.rxBytes, 8),
        txBps: rate(s.obytes, p?.txBytes, 8),
      };
    });
    return { time: Date.now(), interval, forwarding: this.pmd.forwarding, ports };
  }
}
