/**
 * pcap and pcapng on disk: magics, block types, limits, and the error every
 * reader and writer problem becomes. Byte layouts follow libpcap's
 * pcap-savefile(5) and the pcapng draft (IETF opsawg-pcapng).
 */
import { DpkitError } from '../errors.js';

export const PCAP_MAGIC_US = 0xa1b2c3d4;
export const PCAP_MAGIC_NS = 0xa1b23c4d;
export const PCAP_HEADER = 24;
export const PCAP_RECORD_HEADER = 16;

export const PCAPNG_SHB = 0x0a0d0d0a;
export const PCAPNG_BYTE_ORDER = 0x1a2b3c4d;
export const PCAPNG_IDB = 1;
export const PCAPNG_OPB = 2;
export const PCAPNG_SPB = 3;
export const PCAPNG_EPB = 6;
/** Interface Description Block options. */
export const IF_TSRESOL = 9;
export const IF_TSOFFSET = 14;

export const LINKTYPE_ETHERNET = 1;
/** The largest packet dpkit reads or writes: libpcap's MAXIMUM_SNAPLEN. */
export const MAX_CAPLEN = 262_144;
/** The largest pcapng block dpkit accepts: a largest packet plus room for options. */
export const MAX_BLOCK = MAX_CAPLEN + 65_536;

export type PcapFormat = 'pcap' | 'pcapng';
export type TsResolution = 'ns' | 'us';

/** A file that is not what it should be, or an I/O failure on it: names the file, the offset (-1: none) and the problem. */
export class PcapError extends DpkitError {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly problem: string,
  ) {
    super('EPCAP', offset >= 0 ? `${file}: offset ${offset}: ${problem}` : `${file}: ${problem}`);
  }
}

/** An fs error as a reason after the file's name: "ENOENT: no such file or directory", without node's repeat of the call and path. */
export function osReason(e: unknown): string {
  return (e as Error).message.replace(/, \w+ '.*'$/, '');
}

/** Rounds a pcapng body length up to 32 bits. */
export function pad4(n: number): number {
  return (n + 3) & ~3;
}
