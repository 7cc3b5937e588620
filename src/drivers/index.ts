/** Every driver dpkit has, by DPDK driver name. */
import { parseDevargs } from '../ethdev/devargs.js';
import type { DriverSpec } from '../ethdev/driver.js';
import { netAfPacket } from './af_packet/af-packet.js';
import { netAfXdp } from './af_xdp/af-xdp.js';
import { netFaulty } from './faulty/faulty.js';
import { netMemif } from './memif/memif.js';
import { netNicsim } from './nicsim/nicsim.js';
import { netNull } from './null/null.js';
import { netPcap } from './pcap/pcap.js';
import { netRing } from './ring/ring.js';
import { netTap } from './tap/tap.js';
import { netVhost } from './vhost/vhost.js';
import { virtioUser } from './virtio/virtio-user.js';

export const drivers: ReadonlyMap<string, DriverSpec> = new Map([netNull, netRing, netPcap, netVhost, virtioUser, netNicsim, netMemif, netAfPacket, netAfXdp, netTap, netFaulty].map((d) => [d.name, d]));

/** Heap bytes the ports of these devargs ask for beyond their queues' usual needs (captures replayed from memory). */
export function vdevsMemory(vdevs: readonly string[]): number {
  let bytes = 0;
  for (const v of vdevs) {
    const d = parseDevargs(v, [...drivers.keys()]);
    bytes += drivers.get(d.driver)?.memoryNeeded?.(d.all) ?? 0;
  }
  return bytes;
}
