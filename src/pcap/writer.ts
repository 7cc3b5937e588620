/**
 * A buffered pcap / pcapng writer. Records are built in a buffer the caller
 * may place in the shared heap (so an lcore writes them and the main thread
 * can flush what is left when the port stops); `state[0]` is the buffer's
 * fill. pcap is written with nanosecond timestamps by default (magic
 * 0xa1b23c4d), microseconds on request; pcapng as one SHB, one Ethernet IDB
 * (if_tsresol 9 or 6) and EPBs.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { native } from '../native/native.js';
import {
  IF_TSRESOL,
  LINKTYPE_ETHERNET,
  MAX_CAPLEN,
  PCAP_HEADER,
  PCAP_MAGIC_NS,
  PCAP_MAGIC_US,
  PCAP_RECORD_HEADER,
  PCAPNG_BYTE_ORDER,
  PCAPNG_EPB,
  PCAPNG_IDB,
  PCAPNG_SHB,
  PcapError,
  osReason,
  pad4,
  type PcapFormat,
  type TsResolution,
} from './format.js';
import { storeUnits } from './time.js';

export const WRITER_BUFFER = 1 << 20;
/** Largest record header: a pcapng EPB's 28 bytes plus its trailer and padding. */
const MAX_OVERHEAD = 36;

export interface WriterOptions {
  format?: PcapFormat;
  resolution?: TsResolution;
  snaplen?: number;
  linktype?: number;
  /** Record buffer (default: private, WRITER_BUFFER bytes). */
  buffer?: Uint8Array;
  /** state[0]: bytes waiting in the buffer (default: private). */
  state?: Float64Array;
}

export class PcapWriter {
  readonly format: PcapFormat;
  readonly resolution: TsResolution;
  readonly snaplen: number;
  readonly buffer: Uint8Array;
  private readonly dv: DataView;
  private readonly state: Float64Array;
  private readonly units: Uint32Array = new Uint32Array(2);
  private closed = false;

  /**
   * Opens `file` (truncating it) and writes the file header, or, with `fd`,
   * attaches to a file another writer opened (an lcore's side of a queue).
   */
  constructor(
    readonly file: string,
    readonly fd: number,
    opts: WriterOptions,
  ) {
    this.format = opts.format ?? 'pcap';
    this.resolution = opts.resolution ?? 'ns';
    this.snaplen = opts.snaplen ?? MAX_CAPLEN;
    this.buffer = opts.buffer ?? new Uint8Array(WRITER_BUFFER);
    if (this.buffer.length < MAX_CAPLEN + MAX_OVERHEAD) throw new RangeError(`pcap writer buffer of ${this.buffer.length} bytes cannot hold a ${MAX_CAPLEN}-byte record`);
    this.dv = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    this.state = opts.state ?? new Float64Array(1);
  }

  /** Creates `file` and writes its header. */
  static create(file: string, opts: WriterOptions = {}): PcapWriter {
    let fd: number;
    try {
      fd = openSync(file, 'w');
    } catch (e) {
      throw new PcapError(file, -1, `cannot create: ${osReason(e)}`);
    }
    const w = new PcapWriter(file, fd, opts);
    w.state[0] = 0;
    w.writeHeader(opts.linktype ?? LINKTYPE_ETHERNET);
    return w;
  }

  private get fill(): number {
    return this.state[0]!;
  }

  private writeHeader(linktype: number): void {
    const dv = this.dv;
    let p = this.fill;
    if (this.format === 'pcap') {
      dv.setUint32(p, this.resolution === 'ns' ? PCAP_MAGIC_NS : PCAP_MAGIC_US, true);
      dv.setUint16(p + 4, 2, true);
      dv.setUint16(p + 6, 4, true);
      dv.setUint32(p + 8, 0, true); // thiszone
      dv.setUint32(p + 12, 0, true); // sigfigs
      dv.setUint32(p + 16, this.snaplen, true);
      dv.setUint32(p + 20, linktype, true);
      this.state[0] = p + PCAP_HEADER;
      return;
    }
    // SHB: no options, section length unknown (-1).
    dv.setUint32(p, PCAPNG_SHB, true);
    dv.setUint32(p + 4, 28, true);
    dv.setUint32(p + 8, PCAPNG_BYTE_ORDER, true);
    dv.setUint16(p + 12, 1, true);
    dv.setUint16(p + 14, 0, true);
    dv.setInt32(p + 16, -1, true);
    dv.setInt32(p + 20, -1, true);
    dv.setUint32(p + 24, 28, true);
    p += 28;
    // IDB with if_tsresol and opt_endofopt.
    const idbLen = 20 + 8 + 4;
    dv.setUint32(p, PCAPNG_IDB, true);
    dv.setUint32(p + 4, idbLen, true);
    dv.setUint16(p + 8, linktype, true);
    dv.setUint16(p + 10, 0, true);
    dv.setUint32(p + 12, this.snaplen, true);
    dv.setUint16(p + 16, IF_TSRESOL, true);
    dv.setUint16(p + 18, 1, true);
    dv.setUint32(p + 20, this.resolution === 'ns' ? 9 : 6, true); // the value byte, then padding
    dv.setUint32(p + 24, 0, true); // opt_endofopt
    dv.setUint32(p + 28, idbLen, true);
    this.state[0] = p + idbLen;
  }

  /**
   * Reserves one record of `caplen` bytes (caplen <= snaplen) and writes its
   * header. @returns where its bytes go in `buffer`; call endRecord() once
   * they are there.
   */
  beginRecord(caplen: number, origLen: number, sec: number, nsec: number): number {
    if (this.fill + caplen + MAX_OVERHEAD > this.buffer.length) this.flush();
    const dv = this.dv;
    const p = this.fill;
    if (this.format === 'pcap') {
      dv.setUint32(p, sec, true);
      dv.setUint32(p + 4, this.resolution === 'ns' ? nsec : Math.floor(nsec / 1000), true);
      dv.setUint32(p + 8, caplen, true);
      dv.setUint32(p + 12, origLen, true);
      this.pending = caplen;
      return p + PCAP_RECORD_HEADER;
    }
    const units = this.resolution === 'ns' ? 1e9 : 1e6;
    storeUnits(this.units, 0, sec, this.resolution === 'ns' ? nsec : Math.floor(nsec / 1000), units);
    const len = 28 + pad4(caplen) + 4;
    dv.setUint32(p, PCAPNG_EPB, true);
    dv.setUint32(p + 4, len, true);
    dv.setUint32(p + 8, 0, true);
    dv.setUint32(p + 12, this.units[1]!, true);
    dv.setUint32(p + 16, this.units[0]!, true);
    dv.setUint32(p + 20, caplen, true);
    dv.setUint32(p + 24, origLen, true);
    this.pending = caplen;
    return p + 28;
  }

  private pending = 0;

  /** Completes the record begun last. */
  endRecord(): void {
    const caplen = this.pending;
    let p = this.fill;
    if (this.format === 'pcap') {
      this.state[0] = p + PCAP_RECORD_HEADER + caplen;
      return;
    }
    const len = 28 + pad4(caplen) + 4;
    for (let i = 28 + caplen; i < len - 4; i++) this.buffer[p + i] = 0;
    this.dv.setUint32(p + len - 4, len, true);
    p += len;
    this.state[0] = p;
  }

  /** Writes one record from `bytes[off..off + len)` (truncated to the snaplen). */
  write(bytes: Uint8Array, off: number, len: number, sec: number, nsec: number): void {
    const caplen = Math.min(len, this.snaplen);
    const at = this.beginRecord(caplen, len, sec, nsec);
    if (bytes.buffer === this.buffer.buffer) this.buffer.copyWithin(at, bytes.byteOffset - this.buffer.byteOffset + off, bytes.byteOffset - this.buffer.byteOffset + off + caplen);
    else this.buffer.set(bytes.subarray(off, off + caplen), at);
    this.endRecord();
  }

  /**
   * Writes the buffered records to the file: through the native shim's
   * write(2) when it has one, since fs.writeSync allocates on every call and
   * an lcore writing a capture collected garbage for it (the soak's pcap pair).
   */
  flush(): void {
    let done = 0;
    const fill = this.fill;
    const shim = native();
    while (done < fill) {
      try {
        done += shim?.writeFd ? shim.writeFd(this.fd, this.buffer, done, fill - done) : writeSync(this.fd, this.buffer, done, fill - done);
      } catch (e) {
        throw new PcapError(this.file, -1, `write failed: ${(e as Error).message}`);
      }
    }
    this.state[0] = 0;
  }

  /** Flushes and closes the file (the creating side only). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.flush();
    closeSync(this.fd);
  }
}
