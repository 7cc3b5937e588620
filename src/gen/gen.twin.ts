/**
 * The traffic generator's per-burst work: the wasm kernels genFill and
 * genCsum (gen.as.ts) or their TypeScript twins (here, same signatures),
 * chosen once when a stream is made (`genOps`). Arguments are heap byte
 * offsets: `s` the stream's block (gen.record.ts), `lc` the lcore block,
 * `burst` the burst of freshly allocated single-segment mbufs.
 */
import type { Heap } from '../eal/heap.js';
import { H_DATA_LEN, H_DATA_OFF, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, W_BUF_ADDR, W_PKT_LEN } from '../mem/mbuf-layout.js';
import {
  GEN_DEC,
  GEN_F_CSUM,
  GEN_F_IPV4,
  GEN_F_LEN,
  GEN_F_TCP,
  GEN_F_UDP,
  GEN_INC,
  GEN_RANDOM,
  GEN_VAR_SIZE,
  GENS_VARS,
  GENS_W_FLAGS,
  GENS_W_IP_SUM,
  GENS_W_L3,
  GENS_W_L4,
  GENS_W_L4_SUM,
  GENS_W_NB_VARS,
  GENS_W_RNG,
  GENS_W_TMPL,
  GENS_W_TMPL_LEN,
  GENV_OFF,
  GENV_W_CUR,
  GENV_W_LIST,
  GENV_W_LIST_LEN,
  GENV_W_MAX,
  GENV_W_MIN,
  GENV_W_STEP,
  GENV_KIND,
  GENV_WIDTH,
} from './gen-layout.js';

/** One per-burst step of a stream: `(s, lc, burst, n)`; genFill returns the bytes it filled. */
export type GenKernel = (s: number, lc: number, burst: number, n: number) => number;

/** A stream's two per-burst steps. */
export interface GenOps {
  /** genFill: template, field variables and lengths into each mbuf. @returns the bytes filled */
  fill: GenKernel;
  /** genCsum: the IPv4 and L4 checksums fixed from the template's sums. @returns n */
  csum: GenKernel;
}

/** The kernels when the heap has them, else the twins. */
export function genOps(heap: Heap): GenOps {
  const k = heap.kernels;
  return k === null ? genTwin(heap) : { fill: k.fn('genFill'), csum: k.fn('genCsum') };
}

/** The twins, over the heap's views. */
export function genTwin(heap: Heap): GenOps {
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;

  /** The variable at byte `v`'s next value; advances its state (and stream `s`'s random state). */
  const nextValue = (s: number, v: number): number => {
    const w = v >>> 2;
    const kind = u8[v + GENV_KIND]!;
    const min = u32[w + GENV_W_MIN]!;
    const max = u32[w + GENV_W_MAX]!;
    const cur = u32[w + GENV_W_CUR]!;
    if (kind === GEN_INC) {
      const step = u32[w + GENV_W_STEP]!;
      u32[w + GENV_W_CUR] = max - cur < step ? min : cur + step;
      return cur;
    }
    if (kind === GEN_DEC) {
      const step = u32[w + GENV_W_STEP]!;
      u32[w + GENV_W_CUR] = cur - min < step ? max : cur - step;
      return cur;
    }
    if (kind === GEN_RANDOM) {
      let x = u32[(s >>> 2) + GENS_W_RNG]!;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      u32[(s >>> 2) + GENS_W_RNG] = x;
      const span = (max - min + 1) >>> 0;
      return span === 0 ? x : (min + (x % span)) >>> 0;
    }
    const next = cur + 1;
    u32[w + GENV_W_CUR] = next === u32[w + GENV_W_LIST_LEN]! ? 0 : next;
    return u32[(u32[w + GENV_W_LIST]! >>> 2) + cur]!;
  };

  const fold = (sum: number): number => {
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    return sum;
  };

  return {
    fill(s, _lc, burst, n) {
      const sw = s >>> 2;
      const tmpl = u32[sw + GENS_W_TMPL]!;
      const tmplLen = u32[sw + GENS_W_TMPL_LEN]!;
      const flags = u32[sw + GENS_W_FLAGS]!;
      const l3 = u32[sw + GENS_W_L3]!;
      const l4 = u32[sw + GENS_W_L4]!;
      const nbVars = u32[sw + GENS_W_NB_VARS]!;
      const b = burst >>> 2;
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        const h = u32[b + i]!;
        const p = u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
        const len = flags & GEN_F_LEN ? nextValue(s, s + GENS_VARS) : tmplLen;
        u8.copyWithin(p, tmpl, tmpl + len);
        for (let k = flags & GEN_F_LEN ? 1 : 0; k < nbVars; k++) {
          const v = s + GENS_VARS + k * GEN_VAR_SIZE;
          const x = nextValue(s, v);
          const at = p + u16[(v + GENV_OFF) >>> 1]!;
          const width = u8[v + GENV_WIDTH]!;
          if (width === 4) dv.setUint32(at, x);
          else if (width === 2) dv.setUint16(at, x & 0xffff);
          else u8[at] = x & 0xff;
        }
        if (flags & GEN_F_LEN) {
          if (l3 !== 0) {
            if (flags & GEN_F_IPV4) dv.setUint16(p + l3 + 2, (len - l3) & 0xffff);
            else dv.setUint16(p + l3 + 4, (len - l3 - 40) & 0xffff);
          }
          if (flags & GEN_F_UDP) dv.setUint16(p + l4 + 4, (len - l4) & 0xffff);
        }
        u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = len;
        u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
        bytes += len;
      }
      return bytes;
    },
    csum(s, _lc, burst, n) {
      const sw = s >>> 2;
      const flags = u32[sw + GENS_W_FLAGS]!;
      if (!(flags & GEN_F_CSUM)) return n;
      const tmpl = u32[sw + GENS_W_TMPL]!;
      const tmplLen = u32[sw + GENS_W_TMPL_LEN]!;
      const l3 = u32[sw + GENS_W_L3]!;
      const l4 = u32[sw + GENS_W_L4]!;
      const nbVars = u32[sw + GENS_W_NB_VARS]!;
      const v4 = (flags & GEN_F_IPV4) !== 0;
      const ipEnd = v4 ? l3 + 20 : 0;
      const addrFrom = l3 + (v4 ? 12 : 8);
      const addrTo = l3 + (v4 ? 20 : 40);
      const l4At = flags & GEN_F_TCP ? l4 + 16 : l4 + 6;
      const hasL4 = (flags & (GEN_F_UDP | GEN_F_TCP)) !== 0;
      const b = burst >>> 2;
      for (let i = 0; i < n; i++) {
        const h = u32[b + i]!;
        const p = u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!;
        let ipSum = u32[sw + GENS_W_IP_SUM]!;
        let l4Sum = u32[sw + GENS_W_L4_SUM]!;
        let k = 0;
        if (flags & GEN_F_LEN) {
          const len = u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
          if (v4) ipSum += ((len - l3) & 0xffff) + (~(tmplLen - l3) & 0xffff);
          const d = ((len - l4) & 0xffff) + (~(tmplLen - l4) & 0xffff);
          l4Sum += flags & GEN_F_UDP ? d + d : d;
          k = 1;
        }
        for (; k < nbVars; k++) {
          const v = s + GENS_VARS + k * GEN_VAR_SIZE;
          const off = u16[(v + GENV_OFF) >>> 1]!;
          const end = off + u8[v + GENV_WIDTH]!;
          for (let w = off & ~1; w < end; w += 2) {
            const d = dv.getUint16(p + w) + (~dv.getUint16(tmpl + w) & 0xffff);
            if (w >= l3 && w < ipEnd) ipSum += d;
            if ((w >= addrFrom && w < addrTo) || (hasL4 && w >= l4)) l4Sum += d;
          }
        }
        if (v4) dv.setUint16(p + l3 + 10, ~fold(ipSum >>> 0) & 0xffff);
        if (hasL4) {
          let c = ~fold(l4Sum >>> 0) & 0xffff;
          if (c === 0 && flags & GEN_F_UDP) c = 0xffff;
          dv.setUint16(p + l4At, c);
        }
      }
      return n;
    },
  };
}
