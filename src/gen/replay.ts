/**
 * pcap replay at the capture's own timing: every packet departs at its
 * timestamp's offset from the first one divided by `speed`, loops repeat the
 * file after its span (plus the mean gap), and the paced loop of generate()
 * accounts for lateness and drops as for any stream. The file is read once
 * into the heap, so a burst is copies from the heap into fresh mbufs.
 */
import { ArgError } from '../errors.js';
import { PcapReader } from '../pcap/reader.js';
import type { Pacer } from './pacer.js';
import { countBefore } from './pacer.js';
import { runPaced, type GenReport, type GenTarget, type PacedOptions } from './generate.js';

/** What `replay` takes beyond the paced loop's options. */
export interface ReplayOptions extends PacedOptions {
  /** The capture (pcap or pcapng). */
  file: string;
  /** Timing factor: 2 plays twice as fast, 0.5 at half speed. Default 1. */
  speed?: number;
  /** Times the file is played. Default 1; Infinity until the duration or a signal. */
  loops?: number;
}

/** The file's packets and times, as read (bytes stay in the heap). */
interface Capture {
  /** Heap offsets and lengths of the packets. */
  off: Uint32Array;
  len: Uint32Array;
  /** Nanoseconds from the first packet. */
  t: Float64Array;
  /** One loop: the last packet's time plus the mean gap. */
  span: number;
}

function readCapture(target: GenTarget, file: string, room: number): Capture {
  const offs: number[] = [];
  const lens: number[] = [];
  const ts: number[] = [];
  let total = 0;
  let sec0 = NaN;
  let nsec0 = 0;
  const scan = (each: (r: PcapReader, i: number) => void): void => {
    const r = new PcapReader(file);
    try {
      for (let i = 0; r.next(); i++) each(r, i);
    } finally {
      r.close();
    }
  };
  scan((r, i) => {
    if (r.caplen > room) throw new ArgError(`gen: --replay ${file}: packet ${i + 1} has ${r.caplen} bytes, more than the pool's ${room}-byte mbufs`);
    // Seconds since 1970 in ns are past 2^53: subtract the first packet's time in parts.
    if (Number.isNaN(sec0)) (sec0 = r.sec), (nsec0 = r.nsec);
    ts.push((r.sec - sec0) * 1e9 + (r.nsec - nsec0));
    lens.push(r.caplen);
    offs.push(total);
    total += r.caplen;
  });
  if (ts.length === 0) throw new ArgError(`gen: --replay ${file}: no packets`);
  const base = target.heap.reserve(Math.max(total, 1), 64, `gen replay ${file}`);
  const u8 = target.heap.u8;
  scan((r, i) => u8.set(r.window.subarray(r.dataOff, r.dataOff + r.caplen), base + offs[i]!));
  // A capture's clock may step back: keep departures in order.
  for (let i = 1; i < ts.length; i++) if (ts[i]! < ts[i - 1]!) ts[i] = ts[i - 1]!;
  const last = ts[ts.length - 1]!;
  const span = last + (ts.length > 1 ? last / (ts.length - 1) : 1e6);
  return { off: Uint32Array.from(offs, (o) => o + base), len: Uint32Array.from(lens), t: Float64Array.from(ts), span };
}

/**
 * Replays `opts.file` on a started port at its own timing times `speed`,
 * `loops` times (or for `duration` seconds).
 * @returns the run's report, as generate's (one stream, named by the file).
 * @throws ArgError (one line) for a missing or bad file, a bad speed or loop
 *   count, or a packet larger than the pool's mbufs.
 */
export async function replay(target: GenTarget, opts: ReplayOptions): Promise<GenReport> {
  const speed = opts.speed ?? 1;
  const loops = opts.loops ?? 1;
  if (!(speed > 0 && Number.isFinite(speed))) throw new ArgError(`gen: --speed ${speed} must be a positive number`);
  if (!(loops === Infinity || (Number.isInteger(loops) && loops > 0))) throw new ArgError(`gen: --loops ${loops} must be a positive integer`);
  if (loops === Infinity && opts.duration === undefined && opts.signal === undefined) throw new ArgError('gen: endless replay needs a duration');
  const pool = opts.pool ?? target.pool;
  let cap: Capture;
  try {
    cap = readCapture(target, opts.file, pool.bufLen - pool.headroom);
  } catch (e) {
    if (e instanceof ArgError) throw e;
    throw new ArgError(`gen: --replay ${opts.file}: ${(e as Error).message}`);
  }
  const n = cap.t.length;
  const pacer: Pacer = {
    deadline: (i) => (Math.floor(i / n) * cap.span + cap.t[i % n]!) / speed,
  };
  let planned = loops * n;
  if (opts.duration !== undefined) planned = Math.min(planned, countBefore(pacer, opts.duration * 1e9));
  const mbufs = target.mbufs;
  const u8 = target.heap.u8;
  return runPaced(
    target,
    [
      {
        name: opts.file,
        pacer,
        planned,
        fill: (burst, first, k) => {
          let bytes = 0;
          for (let i = 0; i < k; i++) {
            const h = burst[i]!;
            const j = (first + i) % n;
            const len = cap.len[j]!;
            const src = cap.off[j]!;
            u8.copyWithin(mbufs.mtod(h), src, src + len);
            mbufs.setDataLen(h, len);
            mbufs.setPktLen(h, len);
            bytes += len;
          }
          return bytes;
        },
      },
    ],
    opts,
  );
}
