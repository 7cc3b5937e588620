/** Ethernet addresses and header constants. */
import { ArgError } from '../errors.js';

export const ETHER_HDR_LEN = 14;
export const ETHER_ADDR_LEN = 6;
export const ETHER_TYPE_IPV4 = 0x0800;
export const ETHER_TYPE_IPV6 = 0x86dd;
export const ETHER_TYPE_ARP = 0x0806;
export const ETHER_TYPE_VLAN = 0x8100;
export const ETHER_TYPE_QINQ = 0x88a8;

/** Parses 02:00:00:00:00:01 (or with dashes) into 6 bytes. */
export function parseMac(text: string): Uint8Array {
  const parts = text.split(/[:-]/);
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-fA-F]{1,2}$/.test(p))) {
    throw new ArgError(`'${text}' is not a MAC address (expected XX:XX:XX:XX:XX:XX)`);
  }
  return Uint8Array.from(parts.map((p) => parseInt(p, 16)));
}

/** Formats as DPDK prints MACs: upper-case hex with colons. */
export function formatMac(mac: Uint8Array): string {
  return [...mac.subarray(0, 6)].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

/** testpmd's default peer address for port `p`: 02:00:00:00:00:pp. */
export function defaultPeerMac(port: number): Uint8Array {
  return Uint8Array.from([0x02, 0, 0, 0, (port >> 8) & 0xff, port & 0xff]);
}
