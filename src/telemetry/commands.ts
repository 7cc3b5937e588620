/**
 * DPDK's standard telemetry commands over dpkit's objects, with DPDK's keys
 * and help texts (22.11's lib/eal/common/eal_common_options.c,
 * lib/ethdev/rte_ethdev.c, lib/mempool/rte_mempool.c; the ring commands
 * arrived in 23.03's lib/ring/rte_ring.c). Values dpkit has no counterpart
 * for (NUMA nodes, memzone details) are what DPDK reports for a no-huge
 * single-socket run.
 */
import type { Ethdev } from '../ethdev/ethdev.js';
import { formatMac } from '../net/ether.js';
import type { Mempool } from '../mem/mempool.js';
import { RING_F_SC_DEQ, RING_F_SP_ENQ, type Ring } from '../ring/ring.js';
import { intParam, type TelemetryRegistry, type TelemetryValue } from './telemetry.js';

/** RTE_ETHDEV_QUEUE_STAT_CNTRS: the per-queue arrays of /ethdev/stats have this many entries. */
export const RTE_ETHDEV_QUEUE_STAT_CNTRS = 16;
/** RTE_ETH_DEV_INTR_LSC and friends are 0 here; testpmd's null ports report RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS (64). */
const DEV_FLAGS = 64;
/** The 4 KiB page size DPDK reports for memzones of a --no-huge run. */
const PAGE_SIZE = 4096;

/** /eal/params and /eal/app_params: the argv before `--` (after the program name) and after it. */
export function registerEal(reg: TelemetryRegistry, program: string, ealArgs: readonly string[], appArgs: readonly string[]): void {
  reg.register('/eal/params', 'Returns EAL commandline parameters used. Takes no parameters', () => [program, ...ealArgs]);
  reg.register('/eal/app_params', 'Returns app commandline parameters used. Takes no parameters', () => [...appArgs]);
}

/**
 * /ethdev/list, info, stats, xstats and link_status. A port id that is not
 * a number or names no port answers null, as DPDK's.
 * @param rxMbufSize what /ethdev/info reports as rx_mbuf_size_min (the rx pools' buffer size).
 */
export function registerEthdev(reg: TelemetryRegistry, ethdev: Ethdev, rxMbufSize: number): void {
  const port = (param: string | undefined): number | undefined => {
    const p = intParam(param);
    return p !== undefined && ethdev.portIds().includes(p) ? p : undefined;
  };
  const withPort = (f: (p: number) => TelemetryValue) => (param: string | undefined) => {
    const p = port(param);
    return p === undefined ? undefined : f(p);
  };
  reg.register('/ethdev/list', 'Returns list of available ethdev ports. Takes no parameters', () => ethdev.portIds());
  reg.register('/ethdev/info', 'Returns the device info for a port. Parameters: int port_id', withPort((p) => ethdevInfo(ethdev, p, rxMbufSize)));
  reg.register('/ethdev/stats', 'Returns the common stats for a port. Parameters: int port_id', withPort((p) => ethdevStats(ethdev, p)));
  reg.register('/ethdev/xstats', 'Returns the extended stats for a port. Parameters: int port_id', withPort((p) => ethdev.xstats(p)));
  reg.register('/ethdev/link_status', 'Returns the link status for a port. Parameters: int port_id', withPort((p) => linkStatus(ethdev, p)));
}

/** rte_eth_stats as /ethdev/stats shows it: totals, then 16 entries per queue array. */
function ethdevStats(ethdev: Ethdev, p: number): TelemetryValue {
  const s = ethdev.stats(p);
  const q = (a: number[]) => Array.from({ length: RTE_ETHDEV_QUEUE_STAT_CNTRS }, (_, i) => a[i] ?? 0);
  return {
    ipackets: s.ipackets,
    opackets: s.opackets,
    ibytes: s.ibytes,
    obytes: s.obytes,
    imissed: s.imissed,
    ierrors: s.ierrors,
    oerrors: s.oerrors,
    rx_nombuf: s.rxNombuf,
    q_ipackets: q(s.qIpackets),
    q_opackets: q(s.qOpackets),
    q_ibytes: q(s.qIbytes),
    q_obytes: q(s.qObytes),
    q_errors: q(s.qErrors),
  };
}

function ethdevInfo(ethdev: Ethdev, p: number, rxMbufSize: number): TelemetryValue {
  const started = ethdev.isStarted(p) ? 1 : 0;
  const nbRx = ethdev.nbRxQueues(p);
  const nbTx = ethdev.nbTxQueues(p);
  return {
    name: ethdev.name(p),
    state: 1, // RTE_ETH_DEV_ATTACHED
    nb_rx_queues: nbRx,
    nb_tx_queues: nbTx,
    port_id: p,
    mtu: ethdev.mtuGet(p),
    rx_mbuf_size_min: rxMbufSize,
    mac_addr: formatMac(ethdev.macAddr(p)),
    promiscuous: ethdev.promiscuousGet(p) ? 1 : 0,
    scattered_rx: 0,
    all_multicast: ethdev.allmulticastGet(p) ? 1 : 0,
    dev_started: started,
    lro: 0,
    dev_configured: nbRx + nbTx > 0 ? 1 : 0,
    rxq_state: Array.from({ length: nbRx }, () => started),
    txq_state: Array.from({ length: nbTx }, () => started),
    numa_node: 0,
    dev_flags: DEV_FLAGS,
    rx_offloads: 0,
    tx_offloads: 0,
    ethdev_rss_hf: 0,
  };
}

/** eth_dev_handle_port_link_status: only the status when down. */
function linkStatus(ethdev: Ethdev, p: number): TelemetryValue {
  if (!ethdev.linkUp(p)) return { status: 'DOWN' };
  return { status: 'UP', speed: ethdev.linkSpeed(p), duplex: 'full-duplex' };
}

/** /mempool/list and /mempool/info,<name> (an unknown name answers `{}`, as DPDK's). */
export function registerMempools(reg: TelemetryRegistry, pools: () => Mempool[]): void {
  reg.register('/mempool/list', 'Returns list of available mempool. Takes no parameters', () => pools().map((mp) => mp.name));
  reg.register('/mempool/info', 'Returns mempool info. Parameters: pool_name', (name): TelemetryValue | undefined => {
    if (name === undefined) return undefined;
    const mp = pools().find((m) => m.name === name);
    if (!mp) return {};
    return {
      name: mp.name,
      pool_id: mp.offset,
      flags: 16, // RTE_MEMPOOL_F_POOL_CREATED
      socket_id: 0,
      size: mp.size,
      cache_size: mp.cacheSize,
      elt_size: mp.bufLen,
      header_size: 64,
      trailer_size: 0,
      private_data_size: 64,
      ops_index: 0,
      populated_size: mp.size,
      mz_name: `MP_${mp.name}`,
      mz_len: mp.size * 8,
      mz_hugepage_sz: PAGE_SIZE,
      mz_socket_id: 0,
      mz_flags: 0,
    };
  });
}

/** /ring/list and /ring/info,<name> (DPDK 23.03's; an unknown name answers `{}`). */
export function registerRings(reg: TelemetryRegistry, rings: () => Ring[]): void {
  reg.register('/ring/list', 'Returns list of available rings. Takes no parameters', () => rings().map((r) => r.name));
  reg.register('/ring/info', 'Returns ring info. Parameters: ring_name.', (name): TelemetryValue | undefined => {
    if (name === undefined) return undefined;
    const r = rings().find((x) => x.name === name);
    if (!r) return {};
    const flags = (r.sp ? RING_F_SP_ENQ : 0) | (r.sc ? RING_F_SC_DEQ : 0);
    return {
      name: r.name,
      socket: 0,
      flags,
      producer_type: r.sp ? 'SP' : 'MP',
      consumer_type: r.sc ? 'SC' : 'MC',
      size: r.size,
      mask: r.size - 1,
      capacity: r.capacity,
      used_count: r.count(),
      mz_name: `RG_${r.name}`,
      mz_len: r.size * 4,
      mz_hugepage_sz: PAGE_SIZE,
      mz_socket_id: 0,
      mz_flags: '0x0',
    };
  });
}
