/**
 * net_pcap's live interfaces, with DPDK's devargs: `iface=IF` (rx and tx on
 * one interface, receiving only what comes in), `rx_iface=IF` (receiving in
 * and out, libpcap's default direction), `rx_iface_in=IF` (only what comes
 * in), `tx_iface=IF`, `phy_mac=1` (the port takes iface's MAC). Each rx or tx
 * key is one queue, in the order given.
 *
 * DPDK reads interfaces through libpcap, one copy per packet through its
 * buffer; dpkit uses net_af_packet's queue pairs instead (a TPACKET ring
 * mapped into the heap, walked by the af-packet kernels), so the devargs are
 * DPDK's and the data path is af_packet's. As in DPDK, a port receives from
 * files or from interfaces, not both, and sends to files or to interfaces.
 */
import { ArgError } from '../../errors.js';
import type { DriverContext, RxQueue, TxQueue } from '../../ethdev/driver.js';
import { boolArg } from '../../ethdev/devargs.js';
import type { Mempool } from '../../mem/mempool.js';
import { pageSize } from '../../native/memory.js';
import { requireNative } from '../../native/native.js';
import { ifaceInfo } from '../../native/packet.js';
import { ringGeometry } from '../af_packet/af-packet.js';
import { PacketQueuePair, pairMemory } from '../af_packet/queue-pair.js';

export const LIVE_KEYS = ['iface', 'rx_iface', 'rx_iface_in', 'tx_iface', 'phy_mac'] as const;

/** An interface a queue opens on, and whether its rx sees what the host sends out too. */
export interface Source {
  key: (typeof LIVE_KEYS)[number];
  iface: string;
  receiveOutgoing: boolean;
}

/** The live rx and tx sources of devargs `all`, in order; checks DPDK's combinations. @throws ArgError naming the conflict. */
export function liveSources(dev: string, all: readonly [string, string][]): { rx: Source[]; tx: Source[] } {
  const rx: Source[] = [];
  const tx: Source[] = [];
  const ifaces = all.filter(([k]) => k === 'iface');
  const has = (k: string) => all.some(([x]) => x === k);
  if (ifaces.length > 1) throw new ArgError(`${dev}: iface= given ${ifaces.length} times; a port has one (use rx_iface / tx_iface for more queues)`);
  if (ifaces.length === 1) {
    const other = ['rx_pcap', 'tx_pcap', 'rx_iface', 'rx_iface_in', 'tx_iface'].find(has);
    if (other) throw new ArgError(`${dev}: iface= is rx and tx on one interface; it cannot be combined with ${other}=`);
    const iface = ifaces[0]![1];
    rx.push({ key: 'iface', iface, receiveOutgoing: false });
    tx.push({ key: 'iface', iface, receiveOutgoing: false });
  }
  for (const [k, v] of all) {
    if (k === 'rx_iface' || k === 'rx_iface_in') rx.push({ key: k, iface: v, receiveOutgoing: k === 'rx_iface' });
    else if (k === 'tx_iface') tx.push({ key: k, iface: v, receiveOutgoing: false });
  }
  if (has('phy_mac') && ifaces.length === 0) throw new ArgError(`${dev}: phy_mac=1 takes the MAC of iface=, and there is none`);
  if (rx.length > 0 && has('rx_pcap')) throw new ArgError(`${dev}: a port receives from rx_pcap files or from interfaces, not both`);
  if (tx.length > 0 && has('tx_pcap')) throw new ArgError(`${dev}: a port sends to tx_pcap files or to interfaces, not both`);
  for (const s of [...rx, ...tx]) if (s.iface === '') throw new ArgError(`${dev}: ${s.key}=: empty interface name`);
  return { rx, tx };
}

/** The queue pairs behind a net_pcap port's live devargs: one per rx key, one per tx key (iface= shares one). */
export class LiveInterfaces {
  private constructor(
    private readonly rx: PacketQueuePair[],
    private readonly tx: PacketQueuePair[],
    /** iface's MAC when phy_mac=1, else null. */
    readonly mac: Uint8Array | null,
  ) {}

  /**
   * The queues of `ctx`'s live sources (from liveSources), opened.
   * @throws ArgError for a missing interface; CapabilityError without CAP_NET_RAW; one line either way.
   */
  static open(ctx: DriverContext, { rx, tx }: { rx: Source[]; tx: Source[] }): LiveInterfaces {
    const dev = ctx.name;
    requireNative(dev);
    const phyMac = boolArg(dev, ctx.args, 'phy_mac');
    const page = pageSize();
    const pairs: PacketQueuePair[] = [];
    const open = (s: Source): PacketQueuePair => {
      const info = ifaceInfo(s.iface, dev);
      if (!info) throw new ArgError(`${dev}: ${s.key}=${s.iface}: no such interface`);
      const p = PacketQueuePair.open(ctx.heap, dev, ctx.portId, s.iface, ringGeometry(dev, new Map(), info.mtu, page), { qdiscBypass: false, fanout: 0, receiveOutgoing: s.receiveOutgoing });
      pairs.push(p);
      return p;
    };
    try {
      const rxPairs = rx.map(open);
      // iface= is one socket for both directions, as DPDK's one pcap handle.
      const txPairs = tx.map((s, i) => (s.key === 'iface' ? rxPairs[i]! : open(s)));
      const mac = phyMac ? ifaceInfo(rx[0]!.iface, dev)!.mac : null;
      return new LiveInterfaces(rxPairs, txPairs, mac);
    } catch (e) {
      for (const p of pairs) p.close();
      throw e;
    }
  }

  get rxCount(): number {
    return this.rx.length;
  }

  get txCount(): number {
    return this.tx.length;
  }

  /** Rx queue `q` on its interface, or null when the port has no such live queue. */
  rxQueue(q: number, pool: Mempool, stats: number): RxQueue | null {
    return this.rx[q]?.rxQueue(pool, stats) ?? null;
  }

  /** Tx queue `q` on its interface, or null when the port has no such live queue. */
  txQueue(q: number, stats: number): TxQueue | null {
    return this.tx[q]?.txQueue(stats) ?? null;
  }

  close(): void {
    for (const p of [...this.rx, ...this.tx]) p.close();
  }
}

/** Heap bytes the live devargs' rings map (the interfaces' MTUs read when they can be). */
export function liveMemoryNeeded(all: readonly [string, string][]): number {
  let page = 4096;
  let n = 0;
  let bytes = 0;
  for (const [k, v] of all) {
    if (k !== 'iface' && k !== 'rx_iface' && k !== 'rx_iface_in' && k !== 'tx_iface') continue;
    let mtu = 1500;
    try {
      page = pageSize();
      mtu = ifaceInfo(v, 'net_pcap')?.mtu ?? mtu;
    } catch {
      // No shim: opening the port will say so.
    }
    try {
      bytes += pairMemory(ringGeometry('net_pcap', new Map(), mtu, page), page);
      n++;
    } catch {
      return bytes; // opening the port will name the problem
    }
  }
  return n === 0 ? 0 : bytes;
}
