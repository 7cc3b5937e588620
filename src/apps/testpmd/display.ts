/**
 * testpmd's statistics blocks, laid out character for character as DPDK's
 * (app/test-pmd: nic_stats_display, fwd_stats_display), so scripts that
 * parse DPDK's output parse dpkit's.
 */
import type { EthStats } from '../../ethdev/stats.js';

/** printf's %-Nu: left-aligned in N columns (wider values push on, as printf does). */
const l = (v: number, w: number) => String(Math.round(v)).padEnd(w);
/** printf's %Nu: right-aligned. */
const r = (v: number, w: number) => String(Math.round(v)).padStart(w);

export interface Throughput {
  rxPps: number;
  rxBps: number;
  txPps: number;
  txBps: number;
}

/** `show port stats N` / the periodic block: one port's NIC statistics. */
export function nicStatsBlock(port: number, s: EthStats, t: Throughput): string {
  const hash = '  ' + '#'.repeat(76);
  return [
    '',
    `  ######################## NIC statistics for port ${String(port).padEnd(2)} ########################`,
    `  RX-packets: ${l(s.ipackets, 10)} RX-missed: ${l(s.imissed, 10)} RX-bytes:  ${l(s.ibytes, 0)}`,
    `  RX-errors: ${l(s.ierrors, 0)}`,
    `  RX-nombuf:  ${l(s.rxNombuf, 10)}`,
    `  TX-packets: ${l(s.opackets, 10)} TX-errors: ${l(s.oerrors, 10)} TX-bytes:  ${l(s.obytes, 0)}`,
    '',
    '  Throughput (since last show)',
    `  Rx-pps: ${r(t.rxPps, 12)}          Rx-bps: ${r(t.rxBps, 12)}`,
    `  Tx-pps: ${r(t.txPps, 12)}          Tx-bps: ${r(t.txBps, 12)}`,
    hash,
  ].join('\n');
}

export interface FwdPortStats {
  rxPackets: number;
  rxDropped: number;
  txPackets: number;
  txDropped: number;
  rxBadIpCsum: number;
  rxBadL4Csum: number;
}

function fwdLines(s: FwdPortStats, csum: boolean): string[] {
  const lines = [`  RX-packets: ${l(s.rxPackets, 14)} RX-dropped: ${l(s.rxDropped, 14)} RX-total: ${l(s.rxPackets + s.rxDropped, 0)}`];
  if (csum) lines.push(`  Bad-ipcsum: ${l(s.rxBadIpCsum, 14)} Bad-l4csum: ${l(s.rxBadL4Csum, 14)} Bad-outer-l4csum: 0`);
  lines.push(`  TX-packets: ${l(s.txPackets, 14)} TX-dropped: ${l(s.txDropped, 14)} TX-total: ${l(s.txPackets + s.txDropped, 0)}`);
  return lines;
}

/** "Forward statistics for port N" (fwd_stats_display). */
export function fwdStatsBlock(port: number, s: FwdPortStats, csum: boolean): string {
  return [
    '',
    `  ---------------------- Forward statistics for port ${String(port).padEnd(2)} ----------------------`,
    ...fwdLines(s, csum),
    '  ' + '-'.repeat(76),
  ].join('\n');
}

/** "Accumulated forward statistics for all ports". */
export function accumulatedBlock(s: FwdPortStats): string {
  return [
    '',
    '  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++',
    ...fwdLines(s, false),
    '  ' + '+'.repeat(76),
  ].join('\n');
}
