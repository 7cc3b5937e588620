/**
 * ethdev: the one port API applications use (rte_ethdev). Ports are made
 * from devargs by drivers, configured with queue counts, given rx/tx queues
 * (descriptor counts, a pool, thresholds), started and stopped; the data
 * path is rxBurst / txBurst on a port's queue.
 *
 * Control-plane calls (configure, setup, start, stats) belong to one thread;
 * the data path may run in lcore workers, which re-open queues from their
 * descriptors (see driver.ts).
 */
import { ArgError, DpkitError } from '../errors.js';
import type { Burst, Heap } from '../eal/heap.js';
import type { Mempool } from '../mem/mempool.js';
import { parseDevargs } from './devargs.js';
import type { DevInfo, DriverContext, DriverSpec, EthDriver, RxQueue, RxQueueConf, TxQueue, TxQueueConf } from './driver.js';
import {
  QSTATS_SLOTS,
  RXQ_BYTES,
  RXQ_ERRORS,
  RXQ_MISSED,
  RXQ_NOMBUF,
  RXQ_PACKETS,
  TXQ_BYTES,
  TXQ_ERRORS,
  TXQ_PACKETS,
  newQueueStats,
  type EthStats,
} from './stats.js';

/** A port call at the wrong time (rte_ethdev's -EBUSY / -EINVAL on state). */
export class PortStateError extends DpkitError {
  constructor(message: string) {
    super('EBUSY', message);
  }
}

/** DPDK's RTE_MAX_ETHPORTS default. */
export const MAX_ETHPORTS = 32;

/** Ethernet MTUs: the default, the least ethdev accepts, and ethdev's default maximum (dev_info.max_mtu). */
export const RTE_ETHER_MTU = 1500;
export const RTE_ETHER_MIN_MTU = 68;
const MAX_MTU = 65535;

interface Port {
  id: number;
  name: string;
  spec: DriverSpec;
  drv: EthDriver;
  info: DevInfo;
  nbRxq: number;
  nbTxq: number;
  rxq: (RxQueue | undefined)[];
  txq: (TxQueue | undefined)[];
  rxStats: number[];
  txStats: number[];
  /** Counter values at the last statsReset, subtracted from every read. */
  base: Float64Array;
  configured: boolean;
  started: boolean;
  promiscuous: boolean;
  rxDesc: number[];
  txDesc: number[];
  txConf: TxQueueConf[];
  /** The devargs after the device name, as given (`size=64`), for `show port info`. */
  devargs: string;
  allmulticast: boolean;
  mtu: number;
  /** Administrative link state (rte_eth_dev_set_link_up/down). */
  linkAdminUp: boolean;
}

/**
 * The ports of one heap (rte_ethdev), by port id. Control plane: one thread
 * (the main lcore); lcores poll queues through handles reopened in their thread.
 */
export class Ethdev {
  private readonly ports: (Port | undefined)[] = [];
  private readonly f64: Float64Array;

  /** @internal Made by `init` (Eal.ethdev) over the drivers of src/drivers. */
  constructor(
    /** The heap the ports' queues, stats and mbufs live in. */
    readonly heap: Heap,
    private readonly drivers: ReadonlyMap<string, DriverSpec>,
  ) {
    this.f64 = heap.f64;
  }

  /** Creates a port from a devargs string (rte_dev_probe of a vdev). @returns its port id. */
  create(devargs: string): number {
    const d = parseDevargs(devargs, [...this.drivers.keys()]);
    const spec = this.drivers.get(d.driver)!;
    for (const k of d.args.keys()) {
      if (!spec.keys.includes(k)) {
        throw new ArgError(`${d.name}: unknown devarg '${k}' for ${spec.name} (known: ${spec.keys.join(', ') || 'none'})`);
      }
    }
    return this.add(spec, d.name, (ctx) => spec.create(ctx), d.args, d.all);
  }

  /**
   * Creates a port with a driver made by `make` instead of from devargs, e.g.
   * a net_ring port over given rings (rte_eth_from_rings). `driver` names the
   * spec whose queue openers the port's queues use in other threads.
   * @internal Drivers' interfaces are not public (yet).
   */
  createWith(driver: string, name: string, make: (ctx: DriverContext) => EthDriver): number {
    const spec = this.drivers.get(driver);
    if (!spec) throw new ArgError(`${name}: unknown driver ${driver}`);
    return this.add(spec, name, make, new Map(), []);
  }

  private add(spec: DriverSpec, name: string, make: (ctx: DriverContext) => EthDriver, args: Map<string, string>, all: readonly [string, string][]): number {
    if (this.ports.some((p) => p?.name === name)) throw new ArgError(`${name}: device already exists`);
    const id = this.ports.length;
    if (id >= MAX_ETHPORTS) throw new ArgError(`${name}: too many ports (max ${MAX_ETHPORTS})`);
    const drv = make({ heap: this.heap, portId: id, name, args, all });
    this.ports.push({
      id,
      name,
      spec,
      drv,
      info: drv.info(),
      nbRxq: 0,
      nbTxq: 0,
      rxq: [],
      txq: [],
      rxStats: [],
      txStats: [],
      base: new Float64Array(0),
      configured: false,
      started: false,
      promiscuous: true,
      rxDesc: [],
      txDesc: [],
      txConf: [],
      devargs: all.map(([k, v]) => `${k}=${v}`).join(','),
      // Software ports take every frame: multicast as much as unicast.
      allmulticast: true,
      mtu: RTE_ETHER_MTU,
      linkAdminUp: true,
    });
    return id;
  }

  /** Number of ports (rte_eth_dev_count_avail). */
  count(): number {
    return this.ports.filter((p) => p !== undefined).length;
  }

  /** Ids of the ports that exist, ascending (RTE_ETH_FOREACH_DEV). */
  portIds(): number[] {
    return this.ports.flatMap((p) => (p ? [p.id] : []));
  }

  /** The port's device name, e.g. `net_ring0` (rte_eth_dev_get_name_by_port). @throws ArgError for a missing port. */
  name(port: number): string {
    return this.port(port).name;
  }

  /** Queue and descriptor limits (rte_eth_dev_info_get). @throws ArgError for a missing port. */
  info(port: number): DevInfo {
    return this.port(port).info;
  }

  /** Sets the queue counts (rte_eth_dev_configure). The port must be stopped. */
  configure(port: number, nbRxq: number, nbTxq: number): void {
    const p = this.port(port);
    if (p.started) throw new PortStateError(`port ${port}: configure needs the port stopped`);
    checkRange(`port ${port}: nb_rx_queues`, nbRxq, 1, p.info.maxRxQueues);
    checkRange(`port ${port}: nb_tx_queues`, nbTxq, 1, p.info.maxTxQueues);
    p.drv.configure(nbRxq, nbTxq);
    p.nbRxq = nbRxq;
    p.nbTxq = nbTxq;
    p.rxq = new Array<RxQueue | undefined>(nbRxq).fill(undefined);
    p.txq = new Array<TxQueue | undefined>(nbTxq).fill(undefined);
    p.rxDesc = new Array<number>(nbRxq).fill(0);
    p.txDesc = new Array<number>(nbTxq).fill(0);
    p.txConf = new Array<TxQueueConf>(nbTxq).fill({});
    // Counter blocks survive reconfiguration so statistics keep counting.
    while (p.rxStats.length < nbRxq) p.rxStats.push(newQueueStats(this.heap));
    while (p.txStats.length < nbTxq) p.txStats.push(newQueueStats(this.heap));
    p.configured = true;
  }

  /**
   * Sets up rx queue `q` (rte_eth_rx_queue_setup). `nbDesc` 0 takes the
   * driver's default; otherwise it must lie within the driver's limits.
   */
  rxQueueSetup(port: number, q: number, nbDesc: number, pool: Mempool, conf: RxQueueConf = {}): void {
    const p = this.stoppedPort(port, `rx queue ${q} setup`);
    if (q < 0 || q >= p.nbRxq) throw new ArgError(`port ${port}: rx queue ${q} out of range (configured ${p.nbRxq})`);
    const n = checkDesc(`port ${port} rxq ${q}: nb_rx_desc`, nbDesc, p.info.rxDescLim, p.info.defaultRxDesc, p.spec.name);
    p.rxq[q] = p.drv.rxQueueSetup(q, n, pool, conf, p.rxStats[q]!);
    p.rxDesc[q] = n;
  }

  /**
   * Sets up tx queue `q` (rte_eth_tx_queue_setup). Thresholds, when given,
   * follow DPDK's rules for descriptor rings: 0 < tx_rs_thresh ≤
   * tx_free_thresh, tx_rs_thresh divides nb_desc and is below nb_desc - 2,
   * tx_free_thresh is below nb_desc - 3.
   */
  txQueueSetup(port: number, q: number, nbDesc: number, conf: TxQueueConf = {}): void {
    const p = this.stoppedPort(port, `tx queue ${q} setup`);
    if (q < 0 || q >= p.nbTxq) throw new ArgError(`port ${port}: tx queue ${q} out of range (configured ${p.nbTxq})`);
    const n = checkDesc(`port ${port} txq ${q}: nb_tx_desc`, nbDesc, p.info.txDescLim, p.info.defaultTxDesc, p.spec.name);
    checkTxThresholds(`port ${port} txq ${q}`, n, conf);
    p.txq[q] = p.drv.txQueueSetup(q, n, conf, p.txStats[q]!);
    p.txDesc[q] = n;
    p.txConf[q] = conf;
  }

  /** rte_eth_dev_start: every configured queue must be set up. */
  start(port: number): void {
    const p = this.configuredPort(port);
    if (p.started) return;
    const rx = p.rxq.findIndex((q) => !q);
    const tx = p.txq.findIndex((q) => !q);
    if (rx >= 0) throw new PortStateError(`port ${port}: rx queue ${rx} not set up`);
    if (tx >= 0) throw new PortStateError(`port ${port}: tx queue ${tx} not set up`);
    p.drv.start();
    p.started = true;
  }

  /** rte_eth_dev_stop; a stopped port is left as it is. Stop lcores polling it first. @throws ArgError for a missing port. */
  stop(port: number): void {
    const p = this.port(port);
    if (!p.started) return;
    p.drv.stop();
    p.started = false;
  }

  /** Stops and closes the port, releasing every mbuf its driver still holds. */
  close(port: number): void {
    const p = this.port(port);
    this.stop(port);
    p.drv.close();
    this.ports[port] = undefined;
  }

  /** Whether the port is started. @throws ArgError for a missing port. */
  isStarted(port: number): boolean {
    return this.port(port).started;
  }

  /** @internal The rx queue object, for a forwarding loop that calls it directly (user code: Eal.rxQueue). */
  rxQueue(port: number, q: number): RxQueue {
    const rxq = this.port(port).rxq[q];
    if (!rxq) throw new ArgError(`port ${port}: rx queue ${q} not set up`);
    return rxq;
  }

  /** @internal The tx queue object, for a forwarding loop that calls it directly (user code: Eal.txQueue). */
  txQueue(port: number, q: number): TxQueue {
    const txq = this.port(port).txq[q];
    if (!txq) throw new ArgError(`port ${port}: tx queue ${q} not set up`);
    return txq;
  }

  /**
   * rte_eth_rx_burst. @returns packets received into burst[0..).
   * @throws ArgError for a port or queue that is not there, or a burst not in the heap (one check per burst).
   */
  rxBurst(port: number, q: number, burst: Burst, n: number): number {
    const rxq = this.ports[port]?.rxq[q];
    if (rxq === undefined || burst.heapBuffer !== this.heap.buffer || n > burst.length) throw this.burstError(port, q, 'rx', burst, n);
    return rxq.rxBurst(burst, n);
  }

  /**
   * rte_eth_tx_burst. @returns packets taken; the caller still owns the rest.
   * @throws ArgError for a port or queue that is not there, or a burst not in the heap (one check per burst).
   */
  txBurst(port: number, q: number, burst: Burst, n: number): number {
    const txq = this.ports[port]?.txq[q];
    if (txq === undefined || burst.heapBuffer !== this.heap.buffer || n > burst.length) throw this.burstError(port, q, 'tx', burst, n);
    return txq.txBurst(burst, n);
  }

  private burstError(port: number, q: number, dir: 'rx' | 'tx', burst: Burst, n: number): ArgError {
    if (dir === 'rx') this.rxQueue(port, q);
    else this.txQueue(port, q);
    return badBurst(`port ${port} ${dir}q ${q}`, burst, n, this.heap.buffer);
  }

  /** Rx queues configured. @throws ArgError for a missing port. */
  nbRxQueues(port: number): number {
    return this.port(port).nbRxq;
  }

  /** Tx queues configured. @throws ArgError for a missing port. */
  nbTxQueues(port: number): number {
    return this.port(port).nbTxq;
  }

  /** Descriptors of rx queue `q` as set up (0 before setup). @throws ArgError for a missing port. */
  rxDesc(port: number, q: number): number {
    return this.port(port).rxDesc[q] ?? 0;
  }

  /** Descriptors of tx queue `q` as set up (0 before setup). @throws ArgError for a missing port. */
  txDesc(port: number, q: number): number {
    return this.port(port).txDesc[q] ?? 0;
  }

  /** rte_eth_stats_get: totals and per-queue counts since the last reset. */
  stats(port: number): EthStats {
    const p = this.port(port);
    const raw = this.rawCounters(p);
    const d = (i: number) => raw[i]! - (p.base[i] ?? 0);
    const s: EthStats = { ipackets: 0, opackets: 0, ibytes: 0, obytes: 0, imissed: 0, ierrors: 0, oerrors: 0, rxNombuf: 0, qIpackets: [], qOpackets: [], qIbytes: [], qObytes: [], qErrors: [] };
    for (let q = 0; q < p.nbRxq; q++) {
      const o = q * QSTATS_SLOTS;
      s.ipackets += d(o + RXQ_PACKETS);
      s.ibytes += d(o + RXQ_BYTES);
      s.ierrors += d(o + RXQ_ERRORS);
      s.imissed += d(o + RXQ_MISSED);
      s.rxNombuf += d(o + RXQ_NOMBUF);
      s.qIpackets.push(d(o + RXQ_PACKETS));
      s.qIbytes.push(d(o + RXQ_BYTES));
      s.qErrors.push(d(o + RXQ_ERRORS));
    }
    const t0 = p.rxStats.length * QSTATS_SLOTS;
    for (let q = 0; q < p.nbTxq; q++) {
      const o = t0 + q * QSTATS_SLOTS;
      s.opackets += d(o + TXQ_PACKETS);
      s.obytes += d(o + TXQ_BYTES);
      s.oerrors += d(o + TXQ_ERRORS);
      s.qOpackets.push(d(o + TXQ_PACKETS));
      s.qObytes.push(d(o + TXQ_BYTES));
    }
    return s;
  }

  /**
   * rte_eth_stats_reset. Counters have a single writer (the lcore), so
   * instead of zeroing them under its feet this remembers their values and
   * subtracts them from later reads.
   */
  statsReset(port: number): void {
    const p = this.port(port);
    p.base = this.rawCounters(p);
  }

  /** rte_eth_xstats_get with names: DPDK's generic names plus the driver's own. */
  xstats(port: number): Record<string, number> {
    const s = this.stats(port);
    const x: Record<string, number> = {
      rx_good_packets: s.ipackets,
      tx_good_packets: s.opackets,
      rx_good_bytes: s.ibytes,
      tx_good_bytes: s.obytes,
      rx_missed_errors: s.imissed,
      rx_errors: s.ierrors,
      tx_errors: s.oerrors,
      rx_mbuf_allocation_errors: s.rxNombuf,
    };
    s.qIpackets.forEach((v, q) => {
      x[`rx_q${q}_packets`] = v;
      x[`rx_q${q}_bytes`] = s.qIbytes[q]!;
      x[`rx_q${q}_errors`] = s.qErrors[q]!;
    });
    s.qOpackets.forEach((v, q) => {
      x[`tx_q${q}_packets`] = v;
      x[`tx_q${q}_bytes`] = s.qObytes[q]!;
    });
    return { ...x, ...(this.port(port).drv.xstats?.() ?? {}) };
  }

  /** The port's MAC address, 6 bytes (rte_eth_macaddr_get). @throws ArgError for a missing port. */
  macAddr(port: number): Uint8Array {
    return this.port(port).drv.macAddr();
  }

  /** Link status (rte_eth_link_get's link_status): up only while started. @throws ArgError for a missing port. */
  linkUp(port: number): boolean {
    const p = this.port(port);
    return p.started && p.linkAdminUp && p.drv.linkUp();
  }

  /** Link speed in Mbps (rte_eth_link_get's link_speed). @throws ArgError for a missing port. */
  linkSpeed(port: number): number {
    return this.port(port).drv.linkSpeed();
  }

  /** Whether the port's input has ended (a capture read to its end); undefined for ports that receive forever. */
  rxEnded(port: number): boolean | undefined {
    return this.port(port).drv.rxEnded?.();
  }

  /** rte_eth_promiscuous_enable (virtual ports receive everything regardless). @throws ArgError for a missing port. */
  promiscuousEnable(port: number): void {
    this.port(port).promiscuous = true;
  }

  /** rte_eth_promiscuous_disable. @throws ArgError for a missing port. */
  promiscuousDisable(port: number): void {
    this.port(port).promiscuous = false;
  }

  /** rte_eth_promiscuous_get. @throws ArgError for a missing port. */
  promiscuousGet(port: number): boolean {
    return this.port(port).promiscuous;
  }

  /** The devargs the port was made with, after its name (`rx_pcap=in.pcap`); '' for none. */
  devargs(port: number): string {
    return this.port(port).devargs;
  }

  /** rte_eth_allmulticast_enable: recorded and reported (the software drivers receive every multicast frame anyway). @throws ArgError for a missing port. */
  allmulticastEnable(port: number): void {
    this.port(port).allmulticast = true;
  }

  /** rte_eth_allmulticast_disable. @throws ArgError for a missing port. */
  allmulticastDisable(port: number): void {
    this.port(port).allmulticast = false;
  }

  /** rte_eth_allmulticast_get: whether all-multicast is on. @throws ArgError for a missing port. */
  allmulticastGet(port: number): boolean {
    return this.port(port).allmulticast;
  }

  /** rte_eth_dev_get_mtu (default RTE_ETHER_MTU, 1500). */
  mtuGet(port: number): number {
    return this.port(port).mtu;
  }

  /**
   * rte_eth_dev_set_mtu, within ethdev's default limits (RTE_ETHER_MIN_MTU
   * 68 to 65535). Drivers on a kernel interface (net_af_packet, net_tap) set
   * the interface's MTU, as DPDK's do; the others record and report it.
   * @throws ArgError, with ethdev's message, for an MTU outside the limits;
   *   the driver's DpkitError when it refuses (the recorded MTU is unchanged).
   */
  mtuSet(port: number, mtu: number): void {
    const p = this.port(port);
    if (mtu < RTE_ETHER_MIN_MTU) throw new ArgError(`MTU (${mtu}) < device min MTU (${RTE_ETHER_MIN_MTU}) for port_id ${port}`);
    if (mtu > MAX_MTU) throw new ArgError(`MTU (${mtu}) > device max MTU (${MAX_MTU}) for port_id ${port}`);
    p.drv.mtuSet?.(mtu);
    p.mtu = mtu;
  }

  /**
   * rte_eth_dev_set_link_up / set_link_down: the administrative link state.
   * A down link reads as down (linkUp, `show port info`); the software
   * drivers have no wire to take down, so their queues keep moving packets.
   */
  setLinkUp(port: number): void {
    this.port(port).linkAdminUp = true;
  }

  /** rte_eth_dev_set_link_down: see setLinkUp. @throws ArgError for a missing port. */
  setLinkDown(port: number): void {
    this.port(port).linkAdminUp = false;
  }

  /**
   * rte_eth_rx_descriptor_status: the state of the descriptor `offset`
   * places after the next one the driver will fill.
   * @returns RX_DESC_AVAIL / RX_DESC_DONE / RX_DESC_UNAVAIL, or -ENOTSUP
   *   (-95) when the driver cannot tell, -EINVAL (-22) for a queue or offset
   *   out of range.
   */
  rxDescriptorStatus(port: number, q: number, offset: number): number {
    const p = this.port(port);
    if (q < 0 || q >= p.nbRxq || !p.rxq[q]) return -22;
    return p.drv.rxDescriptorStatus?.(q, offset) ?? -95;
  }

  /** rte_eth_tx_descriptor_status, as rxDescriptorStatus: TX_DESC_FULL / TX_DESC_DONE / TX_DESC_UNAVAIL or -errno. */
  txDescriptorStatus(port: number, q: number, offset: number): number {
    const p = this.port(port);
    if (q < 0 || q >= p.nbTxq || !p.txq[q]) return -22;
    return p.drv.txDescriptorStatus?.(q, offset) ?? -95;
  }

  private rawCounters(p: Port): Float64Array {
    const n = (p.rxStats.length + p.txStats.length) * QSTATS_SLOTS;
    const out = new Float64Array(n);
    const f = this.f64;
    p.rxStats.forEach((slot, q) => out.set(f.subarray(slot, slot + QSTATS_SLOTS), q * QSTATS_SLOTS));
    const t0 = p.rxStats.length * QSTATS_SLOTS;
    p.txStats.forEach((slot, q) => out.set(f.subarray(slot, slot + QSTATS_SLOTS), t0 + q * QSTATS_SLOTS));
    return out;
  }

  private port(port: number): Port {
    const p = this.ports[port];
    if (!p) throw new ArgError(`port ${port}: no such port`);
    return p;
  }

  /** rte_eth_*_queue_setup refuses a started port (-EBUSY): queues change only while it is stopped. */
  private stoppedPort(port: number, what: string): Port {
    const p = this.configuredPort(port);
    if (p.started) throw new PortStateError(`port ${port}: ${what} needs the port stopped (stop it first)`);
    return p;
  }

  private configuredPort(port: number): Port {
    const p = this.port(port);
    if (!p.configured) throw new PortStateError(`port ${port}: not configured`);
    return p;
  }
}

/**
 * The error for a burst array a queue cannot take: not made by `heap.burst`
 * (or `burstAt`) of this heap, or shorter than the count asked for. A kernel
 * works on a burst at its heap byte offset, so a burst outside the heap would
 * make it read the heap's header as packets.
 */
export function badBurst(what: string, burst: Burst, n: number, buffer: ArrayBufferLike): ArgError {
  if (burst.heapBuffer !== buffer) return new ArgError(`${what}: burst is not in the heap (a plain Uint32Array, or a subarray of a burst?): make bursts with heap.burst(n) or heap.burstAt(offset, n)`);
  return new ArgError(`${what}: n=${n} does not fit a burst of ${burst.length}`);
}

function checkRange(what: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v) || v < min || v > max) throw new ArgError(`${what}=${v}: must be in [${min}, ${max}]`);
}

function checkDesc(what: string, n: number, lim: { min: number; max: number; align: number }, dflt: number, drv: string): number {
  if (n === 0) return dflt;
  if (!Number.isInteger(n) || n < lim.min || n > lim.max || n % lim.align !== 0) {
    throw new ArgError(`${what}=${n}: ${drv} allows ${lim.min}..${lim.max}${lim.align > 1 ? `, a multiple of ${lim.align}` : ''}`);
  }
  return n;
}

/** DPDK's tx threshold rules (i40e/ixgbe tx_queue_setup), checked where thresholds are given. */
export function checkTxThresholds(where: string, nbDesc: number, conf: TxQueueConf): void {
  const rs = conf.txRsThresh ?? 0;
  const free = conf.txFreeThresh ?? 0;
  if (rs === 0 && free === 0) return;
  if (nbDesc === 0) return; // the driver has no descriptor ring: thresholds do not apply
  const { rs: rsEff, free: freeEff } = txThresholds(nbDesc, conf);
  if (rsEff >= nbDesc - 2) throw new ArgError(`${where}: tx_rs_thresh=${rsEff} must be less than nb_desc - 2 (${nbDesc - 2})`);
  if (freeEff >= nbDesc - 3) throw new ArgError(`${where}: tx_free_thresh=${freeEff} must be less than nb_desc - 3 (${nbDesc - 3})`);
  if (rsEff > freeEff) throw new ArgError(`${where}: tx_rs_thresh=${rsEff} must be less than or equal to tx_free_thresh=${freeEff}`);
  if (nbDesc % rsEff !== 0) throw new ArgError(`${where}: tx_rs_thresh=${rsEff} must be a divisor of nb_desc=${nbDesc}`);
  // Otherwise the DD bit checked at tx_next_dd could be the previous lap's write-back.
  if (rsEff + freeEff > nbDesc) throw new ArgError(`${where}: tx_rs_thresh=${rsEff} + tx_free_thresh=${freeEff} must not exceed nb_desc=${nbDesc}`);
}

/** DPDK's tx defaults (i40e): free 32; rs 32, or nb_desc - free when 32 + free would not fit. 0 means "default". */
export function txThresholds(nbDesc: number, conf: TxQueueConf): { rs: number; free: number } {
  const free = conf.txFreeThresh || 32;
  const rs = conf.txRsThresh || (32 + free > nbDesc ? nbDesc - free : 32);
  return { rs, free };
}
