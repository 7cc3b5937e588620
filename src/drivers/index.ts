/** Every driver dpkit has, by DPDK driver name. */
import type { DriverSpec } from '../ethdev/driver.js';
import { netNull } from './null/null.js';
import { netPcap } from './pcap/pcap.js';
import { netRing } from './ring/ring.js';

export const drivers: ReadonlyMap<string, DriverSpec> = new Map([netNull, netRing, netPcap].map((d) => [d.name, d]));
