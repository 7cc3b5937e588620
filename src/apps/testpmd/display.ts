/**
 * testpmd's statistics and information blocks, laid out character for
 * character as DPDK's (app/test-pmd: nic_stats_display, fwd_stats_display,
 * port_infos_display, …), so scripts that parse DPDK's output parse dpkit's.
 */
import type { Ethdev } from '../../ethdev/ethdev.js';
import type { EthStats } from '../../ethdev/stats.js';
import { formatMac } from '../../net/ether.js';

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

/** "Forward statistics for port N" (fwd_stats_display); `extra` lines (burst stats) go before the closing rule. */
export function fwdStatsBlock(port: number, s: FwdPortStats, csum: boolean, extra: string[] = []): string {
  return [
    '',
    `  ---------------------- Forward statistics for port ${String(port).padEnd(2)} ----------------------`,
    ...fwdLines(s, csum),
    ...extra,
    '  ' + '-'.repeat(76),
  ].join('\n');
}

/** One stream's counters, as fwd_stream_stats_display prints them. */
export interface StreamStatsView {
  rxPort: number;
  rxQueue: number;
  txPort: number;
  txQueue: number;
  rxPackets: number;
  txPackets: number;
  fwdDropped: number;
  rxBadIpCsum: number;
  rxBadL4Csum: number;
}

/**
 * "Forward Stats for RX Port= P/Queue= Q -> TX Port= P/Queue= Q"
 * (fwd_stream_stats_display): printed before the port blocks when there are
 * more streams than ports, for each stream that moved or dropped a packet.
 */
export function streamStatsBlock(s: StreamStatsView, csum: boolean): string {
  const n = (v: number) => String(v).padStart(2);
  let counts = `  RX-packets: ${l(s.rxPackets, 14)} TX-packets: ${l(s.txPackets, 14)} TX-dropped: ${l(s.fwdDropped, 14)}`;
  // csum's counts continue the line, as testpmd prints them.
  if (csum) counts += `  RX- bad IP checksum: ${l(s.rxBadIpCsum, 14)}  Rx- bad L4 checksum: ${l(s.rxBadL4Csum, 14)} Rx- bad outer L4 checksum: ${l(0, 14)}\n RX- bad outer IP checksum: ${l(0, 14)}`;
  return ['', `  ------- Forward Stats for RX Port=${n(s.rxPort)}/Queue=${n(s.rxQueue)} -> TX Port=${n(s.txPort)}/Queue=${n(s.txQueue)} -------`, counts].join('\n');
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

const INFO_BORDER = '*********************';

/** rte_eth_link_speed_to_str: a link speed in Mbps as DPDK names it. */
export function linkSpeedText(mbps: number): string {
  if (mbps === 0) return 'None';
  if (mbps < 1000) return `${mbps} Mbps`;
  return `${mbps / 1000} Gbps`;
}

/** `show port info N` (port_infos_display): every field DPDK prints, with what dpkit's ports have. */
export function portInfoBlock(e: Ethdev, p: number): string {
  const i = e.info(p);
  return [
    '',
    `${INFO_BORDER} Infos for port ${String(p).padEnd(2)} ${INFO_BORDER}`,
    `MAC address: ${formatMac(e.macAddr(p))}`,
    `Device name: ${e.name(p)}`,
    `Driver name: ${i.driverName}`,
    'Firmware-version: not available',
    `Devargs: ${e.devargs(p)}`,
    'Connect to socket: 0',
    'memory allocation on the socket: 0',
    `Link status: ${e.linkUp(p) ? 'up' : 'down'}`,
    `Link speed: ${linkSpeedText(e.linkUp(p) ? e.linkSpeed(p) : 0)}`,
    'Link duplex: full-duplex',
    'Autoneg status: Off',
    `MTU: ${e.mtuGet(p)}`,
    `Promiscuous mode: ${e.promiscuousGet(p) ? 'enabled' : 'disabled'}`,
    `Allmulticast mode: ${e.allmulticastGet(p) ? 'enabled' : 'disabled'}`,
    'Maximum number of MAC addresses: 1',
    'Maximum number of MAC addresses of hash filtering: 0',
    'VLAN offload: ',
    '  strip off, filter off, extend off, qinq strip off',
    // dpkit's drivers hash no flows for RSS (net_ring's rss spreads by its own rule).
    'No RSS offload flow type is supported.',
    'Minimum size of RX buffer: 0',
    'Maximum configurable length of RX packet: 65535',
    'Maximum configurable size of LRO aggregated packet: 0',
    `Current number of RX queues: ${e.nbRxQueues(p)}`,
    `Max possible RX queues: ${i.maxRxQueues}`,
    `Max possible number of RXDs per queue: ${i.rxDescLim.max}`,
    `Min possible number of RXDs per queue: ${i.rxDescLim.min}`,
    `RXDs number alignment: ${i.rxDescLim.align}`,
    `Current number of TX queues: ${e.nbTxQueues(p)}`,
    `Max possible TX queues: ${i.maxTxQueues}`,
    `Max possible number of TXDs per queue: ${i.txDescLim.max}`,
    `Min possible number of TXDs per queue: ${i.txDescLim.min}`,
    `TXDs number alignment: ${i.txDescLim.align}`,
    'Max segment number per packet: 65535',
    'Max segment number per MTU/TSO: 65535',
    'Device capabilities: 0x0( )',
    'Device error handling mode: none',
  ].join('\n');
}

/** `show port summary all` (port_summary_header_display + port_summary_display). */
export function portSummary(e: Ethdev, ports: number[]): string {
  const row = (a: string, b: string, c: string, d: string, s: string, l: string) => `${a.padEnd(4)} ${b.padEnd(17)} ${c.padEnd(12)} ${d.padEnd(14)} ${s.padEnd(8)} ${l}`;
  return [
    `Number of available ports: ${ports.length}`,
    row('Port', 'MAC Address', 'Name', 'Driver', 'Status', 'Link'),
    ...ports.map((p) => row(String(p), formatMac(e.macAddr(p)), e.name(p), e.info(p).driverName, e.linkUp(p) ? 'up' : 'down', linkSpeedText(e.linkUp(p) ? e.linkSpeed(p) : 0))),
  ].join('\n');
}

/** `show port xstats N` (nic_xstats_display). */
export function xstatsBlock(e: Ethdev, p: number): string {
  return [`###### NIC extended statistics for port ${String(p).padEnd(2)}`, ...Object.entries(e.xstats(p)).map(([k, v]) => `${k}: ${v}`)].join('\n');
}

/** `show device info all` (device_infos_display): each vdev and its port. */
export function deviceInfoBlock(e: Ethdev, p: number): string {
  return [
    '',
    `${INFO_BORDER} Infos for device ${e.name(p)} ${INFO_BORDER}`,
    'Bus name: vdev',
    'Bus information: ',
    `Driver name: ${e.info(p).driverName}`,
    `Devargs: ${e.devargs(p)}`,
    'Connect to socket: 0',
    '',
    `\tPort id: ${String(p).padEnd(2)}`,
    `\tMAC address: ${formatMac(e.macAddr(p))}`,
    `\tDevice name: ${e.name(p)}`,
    '\tDevice speed capability: Autonegotiate (all speeds)',
  ].join('\n');
}
