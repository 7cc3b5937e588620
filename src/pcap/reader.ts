/**
 * A streaming pcap / pcapng reader. The file is read through a fixed window
 * (never loaded whole); `next()` parses one packet record and leaves its
 * fields on the reader and its bytes in the window at `dataOff`, valid until
 * the next call. Nothing is allocated per packet.
 *
 * pcap: micro- and nanosecond magics, both byte orders. pcapng: SHB (byte
 * order per section), IDB (linktype, snaplen, if_tsresol, if_tsoffset), EPB,
 * SPB and the obsolete OPB; other blocks are skipped; several interfaces.
 *
 * Everything that makes the reader resumable lives in `state` (a Float64Array
 * the caller may place in the shared heap): an lcore that stops and a new one
 * that starts on the same queue continue where the first left off.
 *
 * Malformed input raises a PcapError naming the file, the offset and the
 * problem. A truncated final record is an error too, unless `skipTruncated`:
 * then it is reported through `onWarning` and reading ends there.
 *
 * Snapshot lengths are read as libpcap reads them, so dpkit delivers what
 * tcpdump and DPDK's net_pcap deliver: a snaplen of 0 or above libpcap's
 * maximum means that maximum; a pcap record longer than the file's snaplen
 * (a header written wrong, or a tool that cut records) gives its first snaplen
 * bytes and the rest is skipped (a pcapng packet longer than its interface's
 * snaplen is an error, in libpcap as here). Such records are counted (`cutToSnaplen`) and, if there
 * were any, `onCutToSnaplen` hears the count once, when the file ends.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import {
  IF_TSOFFSET,
  IF_TSRESOL,
  MAX_BLOCK,
  MAX_CAPLEN,
  PCAP_HEADER,
  PCAP_MAGIC_NS,
  PCAP_MAGIC_US,
  PCAP_RECORD_HEADER,
  PCAPNG_BYTE_ORDER,
  PCAPNG_EPB,
  PCAPNG_IDB,
  PCAPNG_OPB,
  PCAPNG_SHB,
  PCAPNG_SPB,
  PcapError,
  osReason,
  pad4,
  type PcapFormat,
} from './format.js';
import { unitsToTs, type Timestamp } from './time.js';

/** Window size that holds any block dpkit accepts, and then some. */
export const READER_WINDOW = MAX_BLOCK + (1 << 20);
/** Interfaces a pcapng section may describe (state words are fixed-size). */
export const MAX_IFACES = 64;

// State words (f64).
const S_OFFSET = 0; // file offset of the next unconsumed byte
const S_FORMAT = 1; // 0 none yet, 1 pcap, 2 pcapng
const S_LE = 2;
const S_UNITS = 3; // pcap: timestamp units per second (1e6 or 1e9)
const S_SNAPLEN = 4; // pcap
const S_LINKTYPE = 5; // pcap
const S_NB_IFACES = 6; // pcapng
const S_ENDED = 7; // 1 once the file is exhausted
const S_PACKETS = 8; // records returned so far
const S_CUT = 9; // records longer than their snaplen, delivered cut to it
const S_IFACES = 10; // pcapng: per interface linktype, snaplen, units per second, offset seconds
const IFACE_WORDS = 4;
export const READER_STATE_WORDS = S_IFACES + MAX_IFACES * IFACE_WORDS;

/** Whether the reader whose state starts at f64[state] has returned its last record. */
export function readerEnded(f64: Float64Array, state: number): boolean {
  return f64[state + S_ENDED] === 1;
}

export interface ReaderOptions {
  /** The window the file is read through (default: a private buffer of READER_WINDOW bytes). */
  window?: Uint8Array;
  /** Resumable state (default: private); all zero means "start at the beginning". */
  state?: Float64Array;
  /** End at a truncated final record with a warning instead of an error. */
  skipTruncated?: boolean;
  onWarning?: (message: string) => void;
  /** Called once when the file ends, if records longer than their snaplen were cut to it (as libpcap delivers them). */
  onCutToSnaplen?: (count: number, message: string) => void;
}

/** libpcap's snapshot length for a header's snaplen: 0 or anything above its maximum means the maximum. */
function snapshotLength(snaplen: number): number {
  return snaplen === 0 || snaplen > MAX_CAPLEN ? MAX_CAPLEN : snaplen;
}

export class PcapReader {
  /** The current record (after next() returned true). */
  caplen = 0;
  origLen = 0;
  sec = 0;
  nsec = 0;
  ifIndex = 0;
  linktype = 0;
  /** Where the current record's bytes start in `window`. */
  dataOff = 0;
  /** File offset of the current record. */
  recordOffset = 0;

  readonly window: Uint8Array;
  private readonly dv: DataView;
  private readonly fd: number;
  private readonly size: number;
  private readonly state: Float64Array;
  private lo = 0; // consumed up to here in the window
  private hi = 0; // valid bytes end here
  private fileOff: number; // file offset of window[hi]
  private le = true;
  private readonly ts: Timestamp = { sec: 0, nsec: 0 };
  private closed = false;

  constructor(
    readonly file: string,
    private readonly opts: ReaderOptions = {},
  ) {
    this.window = opts.window ?? new Uint8Array(READER_WINDOW);
    if (this.window.length < MAX_BLOCK + 64) throw new RangeError(`pcap reader window of ${this.window.length} bytes is smaller than the largest block (${MAX_BLOCK})`);
    this.dv = new DataView(this.window.buffer, this.window.byteOffset, this.window.byteLength);
    this.state = opts.state ?? new Float64Array(READER_STATE_WORDS);
    try {
      this.fd = openSync(file, 'r');
      this.size = fstatSync(this.fd).size;
    } catch (e) {
      throw new PcapError(file, -1, `cannot open: ${osReason(e)}`);
    }
    this.fileOff = this.state[S_OFFSET]!;
    this.le = this.state[S_LE] === 1;
    // A malformed header throws from here: the caller never holds a reader to close, so close it now.
    try {
      if (this.state[S_FORMAT] === 0) this.readFileHeader();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  get format(): PcapFormat {
    return this.state[S_FORMAT] === 2 ? 'pcapng' : 'pcap';
  }

  /** True once every record has been returned. */
  get ended(): boolean {
    return this.state[S_ENDED] === 1;
  }

  /** Records returned so far (over every reader sharing the state). */
  get packets(): number {
    return this.state[S_PACKETS]!;
  }

  /** Records longer than their snaplen, returned cut to it as libpcap returns them. */
  get cutToSnaplen(): number {
    return this.state[S_CUT]!;
  }

  /** Parses the next packet record. @returns false at the end of the file. */
  next(): boolean {
    if (this.state[S_ENDED] === 1) return false;
    const ok = this.state[S_FORMAT] === 1 ? this.nextPcap() : this.nextPcapng();
    if (ok) this.state[S_PACKETS]!++;
    else {
      this.state[S_ENDED] = 1;
      const cut = this.state[S_CUT]!;
      if (cut > 0) this.opts.onCutToSnaplen?.(cut, `${this.file}: ${cut} record(s) longer than the snaplen were read cut to it, as libpcap reads them`);
    }
    // The consumed offset, so another reader on the same state resumes here.
    this.state[S_OFFSET] = this.fileOff - (this.hi - this.lo);
    return ok;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  // ---- window --------------------------------------------------------------

  /** Makes `n` bytes available at `lo`. @returns false when the file ends first. */
  private ensure(n: number): boolean {
    if (this.hi - this.lo >= n) return true;
    if (this.lo > 0) {
      this.window.copyWithin(0, this.lo, this.hi);
      this.hi -= this.lo;
      this.lo = 0;
    }
    while (this.hi < n) {
      let got: number;
      try {
        got = readSync(this.fd, this.window, this.hi, this.window.length - this.hi, this.fileOff);
      } catch (e) {
        throw new PcapError(this.file, this.fileOff, `read failed: ${(e as Error).message}`);
      }
      if (got === 0) return false;
      this.hi += got;
      this.fileOff += got;
    }
    return true;
  }

  /** File offset of window[lo]. */
  private get offset(): number {
    return this.fileOff - (this.hi - this.lo);
  }

  private u16(p: number): number {
    return this.dv.getUint16(this.lo + p, this.le);
  }

  private u32(p: number): number {
    return this.dv.getUint32(this.lo + p, this.le);
  }

  private fail(problem: string, offset = this.offset): never {
    throw new PcapError(this.file, offset, problem);
  }

  /** A record cut short by the end of the file: an error, or the end with a warning. */
  private truncated(what: string, need: number): false {
    const have = this.hi - this.lo;
    const problem = `truncated ${what}: ${need} bytes needed, ${have} left in the file`;
    if (!this.opts.skipTruncated) this.fail(problem);
    this.opts.onWarning?.(`${this.file}: offset ${this.offset}: ${problem}; skipped, reading ends here`);
    this.lo = this.hi;
    return false;
  }

  // ---- file header ---------------------------------------------------------

  private readFileHeader(): void {
    if (!this.ensure(4)) this.fail(this.size === 0 ? 'empty file, not a pcap or pcapng capture' : 'file too short for a pcap or pcapng header');
    const raw = this.dv.getUint32(this.lo, true);
    if (raw === PCAPNG_SHB) {
      this.state[S_FORMAT] = 2;
      if (!this.ensure(28)) this.fail(`truncated section header block: 28 bytes needed, ${this.hi - this.lo} in the file`);
      if (!this.readShb()) this.state[S_ENDED] = 1;
      return;
    }
    const be = this.dv.getUint32(this.lo, false);
    let units = 0;
    if (raw === PCAP_MAGIC_US || raw === PCAP_MAGIC_NS) this.le = true;
    else if (be === PCAP_MAGIC_US || be === PCAP_MAGIC_NS) this.le = false;
    else this.fail(`bad magic 0x${be.toString(16).padStart(8, '0')}: not a pcap or pcapng capture`);
    units = this.u32(0) === PCAP_MAGIC_NS ? 1e9 : 1e6;
    if (!this.ensure(PCAP_HEADER)) this.fail(`truncated file header: ${PCAP_HEADER} bytes needed, ${this.hi - this.lo} in the file`);
    // libpcap reads versions 2.0 to 2.4 (all one layout) and refuses the rest.
    const major = this.u16(4);
    const minor = this.u16(6);
    if (major !== 2 || minor > 4) this.fail(`pcap version ${major}.${minor}, expected 2.4`);
    this.state[S_FORMAT] = 1;
    this.state[S_LE] = this.le ? 1 : 0;
    this.state[S_UNITS] = units;
    this.state[S_SNAPLEN] = snapshotLength(this.u32(16));
    this.state[S_LINKTYPE] = this.u32(20) & 0xffff; // the upper bits carry FCS information
    this.lo += PCAP_HEADER;
    this.state[S_OFFSET] = this.offset;
  }

  // ---- pcap ----------------------------------------------------------------

  private nextPcap(): boolean {
    if (!this.ensure(PCAP_RECORD_HEADER)) return this.hi === this.lo ? false : this.truncated('record header', PCAP_RECORD_HEADER);
    const caplen = this.u32(8);
    const snaplen = this.state[S_SNAPLEN]!;
    if (caplen > MAX_CAPLEN) this.fail(`record caplen ${caplen} is larger than ${MAX_CAPLEN}: corrupt record header`);
    if (!this.ensure(PCAP_RECORD_HEADER + caplen)) return this.truncated('record', PCAP_RECORD_HEADER + caplen);
    const units = this.state[S_UNITS]!;
    const frac = this.u32(4);
    this.recordOffset = this.offset;
    this.sec = this.u32(0);
    this.nsec = units === 1e9 ? frac : frac * 1000;
    this.caplen = this.cut(caplen, snaplen);
    this.origLen = this.u32(12);
    this.ifIndex = 0;
    this.linktype = this.state[S_LINKTYPE]!;
    this.dataOff = this.lo + PCAP_RECORD_HEADER;
    this.lo += PCAP_RECORD_HEADER + caplen;
    return true;
  }

  // ---- pcapng --------------------------------------------------------------

  /** Reads the SHB at lo (its first 12 bytes are in the window): byte order, version; forgets the interfaces. */
  private readShb(): boolean {
    const bom = this.dv.getUint32(this.lo + 8, true);
    if (bom === PCAPNG_BYTE_ORDER) this.le = true;
    else if (bom === 0x4d3c2b1a) this.le = false;
    else this.fail(`bad pcapng byte-order magic 0x${bom.toString(16).padStart(8, '0')}`);
    this.state[S_LE] = this.le ? 1 : 0;
    this.state[S_NB_IFACES] = 0;
    const len = this.blockLength('section header block');
    if (len === 0) return false; // truncated, skipped with a warning
    if (len < 28) this.fail(`section header block length ${len} is shorter than 28`);
    // As libpcap: 1.0, and 1.2 (which some writers put out, with the same layout).
    const major = this.u16(12);
    const minor = this.u16(14);
    if (major !== 1 || (minor !== 0 && minor !== 2)) this.fail(`pcapng version ${major}.${minor}, expected 1.0`);
    this.lo += len;
    this.state[S_OFFSET] = this.offset;
    return true;
  }

  /** Checks the block at lo (8 bytes in the window): length sane, whole block present, trailer equal. */
  private blockLength(what: string): number {
    const len = this.u32(4);
    if (len < 12 || len % 4 !== 0) this.fail(`${what} length ${len} is not a multiple of 4 of at least 12`);
    if (len > MAX_BLOCK) this.fail(`${what} length ${len} is larger than ${MAX_BLOCK}`);
    if (!this.ensure(len)) {
      this.truncated(what, len);
      return 0;
    }
    const trailer = this.u32(len - 4);
    if (trailer !== len) this.fail(`${what} length mismatch: ${len} at its start, ${trailer} at its end`);
    return len;
  }

  private nextPcapng(): boolean {
    for (;;) {
      if (!this.ensure(8)) {
        // libpcap refuses a capture whose first section describes no interface, packets or not.
        if (this.state[S_PACKETS] === 0 && this.state[S_NB_IFACES] === 0) this.fail('pcapng capture with no interface description block');
        return this.hi === this.lo ? false : this.truncated('block header', 8);
      }
      const rawType = this.dv.getUint32(this.lo, true);
      if (rawType === PCAPNG_SHB) {
        if (!this.ensure(12)) return this.truncated('section header block', 12);
        if (!this.readShb()) return false;
        continue;
      }
      const type = this.u32(0);
      const what = type === PCAPNG_EPB ? 'enhanced packet block' : type === PCAPNG_SPB ? 'simple packet block' : type === PCAPNG_IDB ? 'interface description block' : `block of type 0x${type.toString(16)}`;
      const len = this.blockLength(what);
      if (len === 0) return false; // truncated, skipped with a warning
      switch (type) {
        case PCAPNG_IDB:
          this.readIdb(len);
          break;
        case PCAPNG_EPB:
        case PCAPNG_OPB:
          if (this.packetBlock(type, len)) return true;
          break;
        case PCAPNG_SPB:
          if (this.simplePacket(len)) return true;
          break;
        default:
          break; // name resolution, statistics, custom, …: not packets
      }
      this.lo += len;
    }
  }

  private readIdb(len: number): void {
    if (len < 20) this.fail(`interface description block length ${len} is shorter than 20`);
    const n = this.state[S_NB_IFACES]!;
    if (n >= MAX_IFACES) this.fail(`more than ${MAX_IFACES} interfaces in one section`);
    let units = 1e6;
    let offsetSec = 0;
    // Options: code u16, length u16, value padded to 32 bits; opt_endofopt (0) ends them.
    for (let p = 16; p + 4 <= len - 4; ) {
      const code = this.u16(p);
      const olen = this.u16(p + 2);
      // Checked before opt_endofopt ends the list: libpcap refuses an end marker whose length runs past the block too.
      if (p + 4 + pad4(olen) > len - 4) this.fail(`interface description block option ${code} runs past the block`, this.offset + p);
      if (code === 0) break;
      // libpcap refuses these two options at any other length.
      if (code === IF_TSRESOL && olen !== 1) this.fail(`interface description block if_tsresol option has length ${olen}, not 1`, this.offset + p);
      if (code === IF_TSOFFSET && olen !== 8) this.fail(`interface description block if_tsoffset option has length ${olen}, not 8`, this.offset + p);
      if (code === IF_TSRESOL) {
        const v = this.window[this.lo + p + 4]!;
        const exp = v & 0x7f;
        units = v & 0x80 ? 2 ** exp : 10 ** exp;
        if (units > 2 ** 37) this.fail(`if_tsresol ${v} is finer than dpkit reads (at most 2^37 units per second)`, this.offset + p);
      } else if (code === IF_TSOFFSET) {
        const a = this.u32(p + 4);
        const b = this.u32(p + 8);
        const [low, high] = this.le ? [a, b] : [b, a];
        offsetSec = high * 4294967296 + low;
      }
      p += 4 + pad4(olen);
    }
    const w = S_IFACES + n * IFACE_WORDS;
    this.state[w] = this.u16(8);
    this.state[w + 1] = snapshotLength(this.u32(12));
    this.state[w + 2] = units;
    this.state[w + 3] = offsetSec;
    this.state[S_NB_IFACES] = n + 1;
  }

  private iface(id: number, what: string): number {
    if (id >= this.state[S_NB_IFACES]!) this.fail(`${what} for interface ${id}, but the section describes ${this.state[S_NB_IFACES]} interface(s)`);
    return S_IFACES + id * IFACE_WORDS;
  }

  private packetBlock(type: number, len: number): boolean {
    const what = type === PCAPNG_EPB ? 'enhanced packet block' : 'packet block';
    if (len < 32) this.fail(`${what} length ${len} is shorter than 32`);
    const id = type === PCAPNG_EPB ? this.u32(8) : this.u16(8);
    const w = this.iface(id, what);
    const caplen = this.u32(20);
    if (caplen > MAX_CAPLEN) this.fail(`${what} caplen ${caplen} is larger than ${MAX_CAPLEN}`);
    if (28 + pad4(caplen) + 4 > len) this.fail(`${what} caplen ${caplen} runs past its block of ${len} bytes`);
    // Unlike a pcap record, libpcap refuses a pcapng packet longer than its interface's snaplen.
    const snaplen = this.state[w + 1]!;
    if (caplen > snaplen) this.fail(`${what} caplen ${caplen} is larger than interface ${id}'s snaplen ${snaplen}`);
    unitsToTs(this.u32(12), this.u32(16), this.state[w + 2]!, this.ts);
    this.set(id, w, caplen, this.u32(24), 28);
    return true;
  }

  private simplePacket(len: number): boolean {
    const w = this.iface(0, 'simple packet block');
    const origLen = this.u32(8);
    const caplen = Math.min(origLen, this.state[w + 1]!, len - 16);
    this.ts.sec = 0;
    this.ts.nsec = 0;
    this.set(0, w, caplen, origLen, 12);
    return true;
  }

  /** A record's length as libpcap delivers it: at most the snapshot length, the rest skipped (and counted). */
  private cut(caplen: number, snaplen: number): number {
    if (caplen <= snaplen) return caplen;
    this.state[S_CUT]!++;
    return snaplen;
  }

  private set(id: number, w: number, caplen: number, origLen: number, dataAt: number): void {
    this.recordOffset = this.offset;
    this.caplen = caplen;
    this.origLen = origLen;
    this.sec = this.ts.sec + this.state[w + 3]!;
    this.nsec = this.ts.nsec;
    this.ifIndex = id;
    this.linktype = this.state[w]!;
    this.dataOff = this.lo + dataAt;
    // lo moves past the block in nextPcapng's caller path: do it here, since we return early.
    this.lo += this.u32(4);
  }
}
