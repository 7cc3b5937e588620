// Captures for tests: packets with known bytes and timestamps, written by dpkit or by hand.
import { writeFileSync } from 'node:fs';
import { PcapReader } from '../../src/pcap/reader.js';
import { PcapWriter, type WriterOptions } from '../../src/pcap/writer.js';
import { eth } from '../net/packets.js';

export interface Pkt {
  bytes: Uint8Array;
  sec: number;
  nsec: number;
}

/** An Ethernet frame of `len` bytes: dst, src, IPv4 ethertype, then a pattern from `seed` (cut short below 14 bytes). */
export function frame(len: number, seed: number): Uint8Array {
  const rest = Uint8Array.from({ length: Math.max(0, len - 14) }, (_, j) => ((j + 14) * 31 + seed * 7 + ((j + 14) >> 8)) & 0xff);
  return eth(0x0800, rest, [0x02, 0, 0, 0, 0, seed & 0xff], [0x02, 0, 0, 0, 1, seed & 0xff]).slice(0, len);
}

/** Packets of the given sizes with timestamps that exercise every digit. */
export function packets(sizes: number[], startSec = 1_700_000_000): Pkt[] {
  return sizes.map((len, i) => ({ bytes: frame(len, i), sec: startSec + i * 3, nsec: (i * 123_456_789 + 987) % 1_000_000_000 }));
}

export function writeCapture(file: string, pkts: Pkt[], opts: WriterOptions = {}): void {
  const w = PcapWriter.create(file, opts);
  for (const p of pkts) w.write(p.bytes, 0, p.bytes.length, p.sec, p.nsec);
  w.close();
}

/** Every record of a capture, copied out (tests only: allocates). */
export function readCapture(file: string, opts: { skipTruncated?: boolean; onWarning?: (m: string) => void } = {}): (Pkt & { origLen: number; ifIndex: number; linktype: number })[] {
  const r = new PcapReader(file, opts);
  const out = [];
  try {
    while (r.next()) out.push({ bytes: r.window.slice(r.dataOff, r.dataOff + r.caplen), sec: r.sec, nsec: r.nsec, origLen: r.origLen, ifIndex: r.ifIndex, linktype: r.linktype });
  } finally {
    r.close();
  }
  return out;
}

/** A byte builder for hand-made files in either byte order. */
export class Bytes {
  private readonly parts: number[] = [];
  constructor(readonly le: boolean) {}
  u8(...v: number[]): this {
    this.parts.push(...v);
    return this;
  }
  u16(v: number): this {
    return this.le ? this.u8(v & 0xff, v >>> 8) : this.u8(v >>> 8, v & 0xff);
  }
  u32(v: number): this {
    const b = [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
    return this.u8(...(this.le ? b : b.reverse()));
  }
  bytes(b: Uint8Array): this {
    return this.u8(...b);
  }
  pad4(): this {
    while (this.parts.length % 4) this.parts.push(0);
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  build(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
  save(file: string): string {
    writeFileSync(file, this.build());
    return file;
  }
}

/** A pcapng block: type, length, body (padded), length. */
export function block(le: boolean, type: number, body: Uint8Array): Uint8Array {
  const b = new Bytes(le);
  const padded = (body.length + 3) & ~3;
  b.u32(type).u32(12 + padded).bytes(body).pad4().u32(12 + padded);
  return b.build();
}

export function shb(le: boolean): Uint8Array {
  return block(le, 0x0a0d0d0a, new Bytes(le).u32(0x1a2b3c4d).u16(1).u16(0).u32(0xffffffff).u32(0xffffffff).build());
}

/** IDB with optional if_tsresol byte and if_tsoffset seconds. */
export function idb(le: boolean, opts: { linktype?: number; snaplen?: number; tsresol?: number; tsoffset?: number } = {}): Uint8Array {
  const b = new Bytes(le).u16(opts.linktype ?? 1).u16(0).u32(opts.snaplen ?? 0);
  if (opts.tsresol !== undefined) b.u16(9).u16(1).u8(opts.tsresol).pad4();
  if (opts.tsoffset !== undefined) b.u16(14).u16(8).u32(le ? opts.tsoffset : 0).u32(le ? 0 : opts.tsoffset);
  b.u16(0).u16(0);
  return block(le, 1, b.build());
}

export function epb(le: boolean, iface: number, tsHigh: number, tsLow: number, data: Uint8Array, origLen = data.length): Uint8Array {
  return block(le, 6, new Bytes(le).u32(iface).u32(tsHigh).u32(tsLow).u32(data.length).u32(origLen).bytes(data).pad4().build());
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
