/**
 * The probe kernels' twins (probe.as.ts says what the signature holds and
 * why its adjust word keeps L4 checksums valid), and `probeOps`, which picks
 * the kernels or the twins once. Same signatures: `(block, lc, burst, n)`,
 * heap byte offsets and a count.
 */
import type { Heap } from '../eal/heap.js';
import type { KernelFn } from '../eal/kernels.js';
import { Mbufs } from '../mem/mbuf.js';
import { histRecordTwin } from './hist.js';
import {
  PROBE_MAGIC,
  PROBE_SIG_LEN,
  PROBE_STREAM_SIZE,
  PROBE_WINDOW,
  PRX_D_FOREIGN,
  PRX_D_NOW,
  PRX_D_PROBES,
  PRX_D_SKEW,
  PRX_W_NB_STREAMS,
  PRX_W_STREAMS,
  PST_D_BASE,
  PST_D_DUPS,
  PST_D_LATE,
  PST_D_MAX_SEQ,
  PST_D_RECEIVED,
  PST_D_REORDERED,
  PST_SEEN,
  PST_W_HIST,
  PST_W_STARTED,
  PTX_D_NOW,
  PTX_D_SEQ,
  PTX_D_SHORT,
  PTX_D_STAMPED,
  PTX_W_STREAM,
} from './probe-layout.js';

/** What a stamper and a checker call per burst. */
export interface ProbeOps {
  /** Stamps `n` packets for the stream of block `t`; returns how many were long enough. */
  stamp: KernelFn;
  /** Checks `n` packets against checker block `x`; returns how many carried a probe. */
  check: KernelFn;
}

const TWO32 = 2 ** 32;
const TWO48 = 2 ** 48;

/** The kernels when the heap has them, else the twins. */
export function probeOps(heap: Heap): ProbeOps {
  const k = heap.kernels;
  return k === null ? probeTwins(heap) : { stamp: k.fn('probeStamp'), check: k.fn('probeCheck') };
}

/** The twins, over the heap's views. */
export function probeTwins(heap: Heap): ProbeOps {
  const { u8, u32, f64 } = heap;
  const mb = new Mbufs(heap);
  const le16 = (p: number) => u8[p]! | (u8[p + 1]! << 8);
  const le32 = (p: number) => (u8[p]! | (u8[p + 1]! << 8) | (u8[p + 2]! << 16) | (u8[p + 3]! << 24)) >>> 0;
  const put16 = (p: number, v: number) => {
    u8[p] = v & 0xff;
    u8[p + 1] = (v >>> 8) & 0xff;
  };
  const put32 = (p: number, v: number) => {
    put16(p, v & 0xffff);
    put16(p + 2, v >>> 16);
  };
  /** Bit s of a stream's window: [word index in u32, mask]. */
  const seenWord = (st: number, s: number) => ((st + PST_SEEN) >>> 2) + (Math.floor(s / 32) & (PROBE_WINDOW / 32 - 1));
  const seenBit = (s: number) => (1 << (s & 31)) >>> 0;

  const stamp: KernelFn = (t, _lc, burst, n) => {
    const tw = t >>> 2;
    const td = t >>> 3;
    const id = (u32[tw + PTX_W_STREAM]! | (PROBE_MAGIC << 24)) >>> 0;
    let seq = f64[td + PTX_D_SEQ]!;
    const ts = f64[td + PTX_D_NOW]! % TWO48;
    const tsLo = ts % TWO32;
    const tsHi = Math.floor(ts / TWO32);
    const fixed = (tsLo & 0xffff) + (tsLo >>> 16) + tsHi + (id & 0xffff) + (id >>> 16);
    let done = 0;
    for (let i = 0; i < n; i++) {
      const h = u32[(burst >>> 2) + i]!;
      const len = mb.dataLen(h);
      if (len < PROBE_SIG_LEN) continue;
      const p = mb.mtod(h) + len - PROBE_SIG_LEN;
      let old = 0;
      for (let k = 0; k < 16; k += 2) old += le16(p + k);
      old %= 0xffff;
      const s = seq % TWO32;
      const now = (fixed + (s & 0xffff) + (s >>> 16)) % 0xffff;
      put32(p, s);
      put32(p + 4, id);
      put32(p + 8, tsLo);
      put16(p + 12, tsHi);
      put16(p + 14, (old + 0xffff - now) % 0xffff);
      seq++;
      done++;
    }
    f64[td + PTX_D_SEQ] = seq;
    f64[td + PTX_D_STAMPED]! += done;
    if (done < n) f64[td + PTX_D_SHORT]! += n - done;
    return done;
  };

  const check: KernelFn = (x, _lc, burst, n) => {
    const xw = x >>> 2;
    const xd = x >>> 3;
    const streams = u32[xw + PRX_W_STREAMS]!;
    const nb = u32[xw + PRX_W_NB_STREAMS]!;
    const now = f64[xd + PRX_D_NOW]! % TWO48;
    let probes = 0;
    let skew = 0;
    for (let i = 0; i < n; i++) {
      const h = u32[(burst >>> 2) + i]!;
      const len = mb.dataLen(h);
      if (len < PROBE_SIG_LEN) continue;
      const p = mb.mtod(h) + len - PROBE_SIG_LEN;
      const id = le32(p + 4);
      const stream = id & 0xffffff;
      if (id >>> 24 !== PROBE_MAGIC || stream >= nb) continue;
      probes++;
      const st = streams + stream * PROBE_STREAM_SIZE;
      const sw = st >>> 2;
      const sd = st >>> 3;
      const s32 = le32(p);
      const lat = (((now - (le16(p + 12) * TWO32 + le32(p + 8))) % TWO48) + TWO48) % TWO48;
      if (lat >= TWO48 / 2) skew++;
      else histRecordTwin(u32, f64, u32[sw + PST_W_HIST]!, lat);
      if (u32[sw + PST_W_STARTED] === 0) {
        u32[sw + PST_W_STARTED] = 1;
        f64[sd + PST_D_BASE] = s32;
        f64[sd + PST_D_MAX_SEQ] = s32;
        f64[sd + PST_D_RECEIVED]! += 1;
        u32[seenWord(st, s32)]! |= seenBit(s32);
        continue;
      }
      const max = f64[sd + PST_D_MAX_SEQ]!;
      const ext = max + ((s32 - (((max % TWO32) + TWO32) % TWO32)) | 0);
      if (ext > max) {
        if (ext - max >= PROBE_WINDOW) {
          u32.fill(0, (st + PST_SEEN) >>> 2, ((st + PST_SEEN) >>> 2) + PROBE_WINDOW / 32);
        } else {
          for (let k = max + 1; k <= ext; k++) u32[seenWord(st, k)]! &= ~seenBit(k);
        }
        u32[seenWord(st, ext)]! |= seenBit(ext);
        f64[sd + PST_D_MAX_SEQ] = ext;
        f64[sd + PST_D_RECEIVED]! += 1;
        continue;
      }
      if (max - ext >= PROBE_WINDOW) {
        f64[sd + PST_D_LATE]! += 1;
      } else {
        const w = seenWord(st, ext);
        const bit = seenBit(ext);
        if ((u32[w]! & bit) !== 0) {
          f64[sd + PST_D_DUPS]! += 1;
          continue;
        }
        u32[w]! |= bit;
      }
      f64[sd + PST_D_REORDERED]! += 1;
      f64[sd + PST_D_RECEIVED]! += 1;
      if (ext < f64[sd + PST_D_BASE]!) f64[sd + PST_D_BASE] = ext;
    }
    f64[xd + PRX_D_PROBES]! += probes;
    if (probes < n) f64[xd + PRX_D_FOREIGN]! += n - probes;
    if (skew > 0) f64[xd + PRX_D_SKEW]! += skew;
    return probes;
  };
  return { stamp, check };
}
