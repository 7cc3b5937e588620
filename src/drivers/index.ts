/** Every driver dpkit has, by DPDK driver name. */
import type { DriverSpec } from '../ethdev/driver.js';
import { netAfPacket } from './af_packet/af-packet.js';
import { netNicsim } from './nicsim/nicsim.js';
import { netNull } from './null/null.js';
import { netPcap } from './pcap/pcap.js';
import { netRing } from './ring/ring.js';
import { netVhost } from './vhost/vhost.js';
import { virtioUser } from './virtio/virtio-user.js';

export const drivers: ReadonlyMap<string, DriverSpec> = new Map([netNull, netRing, netPcap, netVhost, virtioUser, netNicsim, netAfPacket].map((d) => [d.name, d]));
