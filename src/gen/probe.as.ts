// Probe signatures (twins: probe.twin.ts, same signatures). probeStamp
// writes one into the last PROBE_SIG_LEN bytes of each packet's first
// segment at tx; probeCheck reads them at rx into per-stream loss, order and
// latency. The signature, little-endian:
//   +0  seq u32        low 32 bits of the stream's sequence number
//   +4  stream u24, magic u8 (PROBE_MAGIC)
//   +8  tx time u48    ns of CLOCK_MONOTONIC, modulo 2^48 (78 hours)
//   +14 adjust u16     makes the 16 bytes sum (one's complement) to what the
//                      bytes they replace summed to
// The adjust word keeps the packet's UDP/TCP checksum valid whatever the
// area held, at any offset and under any header stack, with no parse and no
// checksum rewrite: one's-complement sums are congruent modulo 0xffff, and
// the signature's sum equals the old bytes' (RFC 1071's byte-order
// independence makes the parity of the offset irrelevant).
import { MBUF_SHIFT, M_DATA_LEN } from '../mem/mbuf-layout.as';
import { mtod } from '../mem/mbuf.as';
import { histRecord } from './hist.as';
import {
  PROBE_MAGIC,
  PROBE_SIG_LEN,
  PROBE_WINDOW,
  PRX_FOREIGN,
  PRX_NB_STREAMS,
  PRX_NOW,
  PRX_PROBES,
  PRX_SKEW,
  PRX_STREAMS,
  PST_BASE,
  PST_DUPS,
  PST_HIST,
  PST_LATE,
  PST_MAX_SEQ,
  PST_RECEIVED,
  PST_REORDERED,
  PST_SEEN,
  PST_STARTED,
  PROBE_STREAM_SIZE,
  PTX_NOW,
  PTX_SEQ,
  PTX_SHORT,
  PTX_STAMPED,
  PTX_STREAM,
} from './probe-layout.as';

const TS_MASK: u64 = (<u64>1 << 48) - 1;
const TS_HALF: u64 = <u64>1 << 47;

/** Sum of the eight 16-bit words at `p`, modulo 0xffff. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function sum8(p: u32): u32 {
  let s: u32 = 0;
  for (let i: u32 = 0; i < 16; i += 2) s += <u32>load<u16>(p + i);
  return s % 0xffff;
}

/**
 * Stamps `burst[0..n)` for the stream of block `t` (probe.record.ts
 * probeTx) with consecutive sequence numbers and the block's tx time.
 * Packets shorter than a signature are left as they are and counted.
 * Returns how many were stamped.
 */
export function probeStamp(t: u32, lc: u32, burst: u32, n: u32): u32 {
  const id = load<u32>(t, PTX_STREAM) | (PROBE_MAGIC << 24);
  let seq = <u64>load<f64>(t, PTX_SEQ);
  const ts = <u64>load<f64>(t, PTX_NOW) & TS_MASK;
  const tsLo = <u32>ts;
  const tsHi = <u32>(ts >> 32);
  const fixed = (tsLo & 0xffff) + (tsLo >> 16) + tsHi + (id & 0xffff) + (id >> 16);
  let done: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const len = <u32>load<u16>(r, M_DATA_LEN);
    if (len < PROBE_SIG_LEN) continue;
    const p = mtod(r) + len - PROBE_SIG_LEN;
    const old = sum8(p);
    const s = <u32>seq;
    const now = (fixed + (s & 0xffff) + (s >> 16)) % 0xffff;
    store<u32>(p, s);
    store<u32>(p, id, 4);
    store<u32>(p, tsLo, 8);
    store<u16>(p, <u16>tsHi, 12);
    store<u16>(p, <u16>((old + 0xffff - now) % 0xffff), 14);
    seq++;
    done++;
  }
  store<f64>(t, <f64>seq, PTX_SEQ);
  store<f64>(t, load<f64>(t, PTX_STAMPED) + <f64>done, PTX_STAMPED);
  if (done < n) store<f64>(t, load<f64>(t, PTX_SHORT) + <f64>(n - done), PTX_SHORT);
  return done;
}

/** Bit `s` of stream record `st`'s window, as (word address, mask). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function seenWord(st: u32, s: u64): u32 {
  return st + PST_SEEN + ((<u32>(s >> 5) & (PROBE_WINDOW / 32 - 1)) << 2);
}

/**
 * Checks `burst[0..n)` against checker block `x` (probe.record.ts probeRx):
 * for each packet with a probe of a tracked stream, its latency (the block's
 * rx time minus the stamp) into the stream's histogram and its sequence
 * number into the stream's loss, duplicate and order counts. Packets are not
 * changed. Returns how many carried a probe.
 */
export function probeCheck(x: u32, lc: u32, burst: u32, n: u32): u32 {
  const streams = load<u32>(x, PRX_STREAMS);
  const nb = load<u32>(x, PRX_NB_STREAMS);
  const now = <u64>load<f64>(x, PRX_NOW) & TS_MASK;
  let probes: u32 = 0;
  let skew: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const len = <u32>load<u16>(r, M_DATA_LEN);
    if (len < PROBE_SIG_LEN) continue;
    const p = mtod(r) + len - PROBE_SIG_LEN;
    const id = load<u32>(p, 4);
    const stream = id & 0xffffff;
    if (id >> 24 != PROBE_MAGIC || stream >= nb) continue;
    probes++;
    const st = streams + stream * PROBE_STREAM_SIZE;
    const s32 = load<u32>(p);
    // Latency, modulo 2^48; a stamp from the future is another clock's.
    const lat = (now - ((<u64>load<u16>(p, 12) << 32) | <u64>load<u32>(p, 8))) & TS_MASK;
    if (lat >= TS_HALF) skew++;
    else histRecord(load<u32>(st, PST_HIST), lat);
    // Sequence: extend 32 bits to the number nearest the highest seen.
    if (load<u32>(st, PST_STARTED) == 0) {
      store<u32>(st, 1, PST_STARTED);
      store<f64>(st, <f64>s32, PST_BASE);
      store<f64>(st, <f64>s32, PST_MAX_SEQ);
      store<f64>(st, load<f64>(st, PST_RECEIVED) + 1, PST_RECEIVED);
      const w = seenWord(st, <u64>s32);
      store<u32>(w, load<u32>(w) | (1 << (s32 & 31)));
      continue;
    }
    const max = <i64>load<f64>(st, PST_MAX_SEQ);
    const ext = max + <i64><i32>(s32 - <u32>max);
    if (ext > max) {
      if (ext - max >= <i64>PROBE_WINDOW) {
        memory.fill(st + PST_SEEN, 0, PROBE_WINDOW / 8);
      } else {
        for (let k = max + 1; k <= ext; k++) {
          const w = seenWord(st, <u64>k);
          store<u32>(w, load<u32>(w) & ~(1 << (<u32>k & 31)));
        }
      }
      const w = seenWord(st, <u64>ext);
      store<u32>(w, load<u32>(w) | (1 << (<u32>ext & 31)));
      store<f64>(st, <f64>ext, PST_MAX_SEQ);
      store<f64>(st, load<f64>(st, PST_RECEIVED) + 1, PST_RECEIVED);
      continue;
    }
    if (max - ext >= <i64>PROBE_WINDOW) {
      store<f64>(st, load<f64>(st, PST_LATE) + 1, PST_LATE);
    } else {
      const w = seenWord(st, <u64>ext);
      const bit: u32 = 1 << (<u32>ext & 31);
      if (load<u32>(w) & bit) {
        store<f64>(st, load<f64>(st, PST_DUPS) + 1, PST_DUPS);
        continue;
      }
      store<u32>(w, load<u32>(w) | bit);
    }
    store<f64>(st, load<f64>(st, PST_REORDERED) + 1, PST_REORDERED);
    store<f64>(st, load<f64>(st, PST_RECEIVED) + 1, PST_RECEIVED);
    if (<f64>ext < load<f64>(st, PST_BASE)) store<f64>(st, <f64>ext, PST_BASE);
  }
  store<f64>(x, load<f64>(x, PRX_PROBES) + <f64>probes, PRX_PROBES);
  if (probes < n) store<f64>(x, load<f64>(x, PRX_FOREIGN) + <f64>(n - probes), PRX_FOREIGN);
  if (skew > 0) store<f64>(x, load<f64>(x, PRX_SKEW) + <f64>skew, PRX_SKEW);
  return probes;
}
