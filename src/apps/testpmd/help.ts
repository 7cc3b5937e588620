/**
 * testpmd's `help` texts (app/test-pmd/cmdline.c, cmd_help_brief and
 * cmd_help_long), section by section in DPDK's words, listing the commands
 * dpkit's shell has.
 */
import { engines } from '../../fwd/index.js';

export const HELP_SECTIONS = ['control', 'display', 'config', 'ports', 'filters', 'traffic_management', 'devices', 'drivers'] as const;

export const HELP_BRIEF = `
Help is available for the following sections:

    help control                    : Start and stop forwarding.
    help display                    : Displaying port, stats and config information.
    help config                     : Configuration information.
    help ports                      : Configuring ports.
    help filters                    : Filters configuration help.
    help traffic_management         : Traffic Management commands.
    help devices                    : Device related commands.
    help drivers                    : Driver specific commands.
    help all                        : All of the above sections.
`;

/** One entry per command: the syntax line, then its description. */
const entries = (list: [string, string][]) => list.map(([syntax, what]) => `${syntax}\n    ${what}\n`).join('\n');

const NONE = '    (dpkit has none of these commands yet)\n';

function section(name: (typeof HELP_SECTIONS)[number]): string {
  switch (name) {
    case 'control':
      return `
Control forwarding:
-------------------

${entries([
  ['start', 'Start packet forwarding with current configuration.'],
  ['start tx_first [(nb_burst)]', 'Start packet forwarding with current config after sending one burst of packets (or nb_burst bursts).'],
  ['stop', 'Stop packet forwarding, and display accumulated statistics.'],
  ['quit', 'Quit to prompt.'],
])}`;
    case 'display':
      return `
Display:
--------

${entries([
  ['show port (info|stats|summary|xstats) (port_id|all)', 'Display information for port_id, or all.'],
  ['show port (port_id) rss-hash [key]', 'Display the RSS hash functions and RSS hash key of port'],
  ['clear port (stats|xstats) (port_id|all)', 'Clear information for port_id, or all.'],
  ['show config (rxtx|cores|fwd)', 'Display the given configuration.'],
  ['show fwd stats all', 'Display statistics for all fwd engines.'],
  ['clear fwd stats all', 'Clear statistics for all fwd engines.'],
  ['show device info (<identifier>|all)', 'Show general information about devices probed.'],
  ['show port (port_id) rxq|txq (queue_id) desc (desc_id) status', 'Show status of rx|tx descriptor.'],
])}`;
    case 'config':
      return `
Configuration:
--------------
Configuration changes only become active when forwarding is started/restarted.

${entries([
  ['set verbose (level)', 'Set the debug verbosity level X.'],
  ['set record-core-cycles (on|off)', 'set record core cycles'],
  ['set record-burst-stats (on|off)', 'set record burst stats'],
  ['set nbport (num)', 'Set number of ports.'],
  ['set nbcore (num)', 'Set number of cores.'],
  ['set burst (num)', 'Set number of packets per burst.'],
  ['set burst tx delay (microseconds) retry (num)', 'Set the transmit delay time and number of retries, effective when retry is enabled.'],
  ['set txpkts (x[,y]*)', 'Set the length of each segment of TXONLY and optionally CSUM packets.'],
  ['set portlist (x[,y]*)', 'Set the list of forwarding ports.'],
  [`set fwd (${[...engines.keys()].join('|')})`, 'Set packet forwarding mode.'],
  ['set fwd (mode) retry', 'Set packet forwarding mode with retry.'],
  ['set gen rate (rate)', 'gen: rate of streams that name none (1000, 2.5Mpps, 100Mbps, 10Gbps-l1, 50% of the link).'],
  ['set gen size (N|MIN-MAX|imix)', 'gen: one stream of these packet sizes (replaces --gen-stream streams).'],
  ['set gen latency (on|off)', 'gen: a probe in every packet, checked on the streams\' rx queues.'],
  ['set fwd (./engine.js|.ts) [retry]', 'Set a user engine module as packet forwarding mode.'],
  ['set eth-peer (port_id) (peer_addr)', 'set the peer address for certain port.'],
  ['set promisc (port_id|all) (on|off)', 'Set the promiscuous mode on port_id, or all.'],
  ['set allmulti (port_id|all) (on|off)', 'Set the allmulti mode on port_id, or all.'],
  ['set link-up port (port_id)', 'Set link up for a port.'],
  ['set link-down port (port_id)', 'Set link down for a port.'],
])}`;
    case 'ports':
      return `
Port Operations:
----------------

${entries([
  ['port start (port_id|all)', 'Start all ports or port_id.'],
  ['port stop (port_id|all)', 'Stop all ports or port_id.'],
  ['port close (port_id|all)', 'Close all ports or port_id.'],
  ['port reset (port_id|all)', 'Reset all ports or port_id.'],
  ['port config all (rxq|txq|rxd|txd) (value)', 'Set number for rxq/txq/rxd/txd.'],
  ['port config mtu X value', 'Set the MTU of port X to a given value'],
])}`;
    case 'filters':
      return `\nfilters:\n--------\n\n${NONE}`;
    case 'traffic_management':
      return `\nTraffic Management:\n--------------\n${NONE}`;
    case 'devices':
      return `\nDevice Operations:\n--------------\n${NONE}`;
    case 'drivers':
      return `\nDriver specific:\n----------------\n${NONE}`;
  }
}

/** `help SECTION` or `help all`. */
export function helpText(which: 'all' | (typeof HELP_SECTIONS)[number]): string {
  return (which === 'all' ? HELP_SECTIONS.map(section) : [section(which)]).join('');
}
