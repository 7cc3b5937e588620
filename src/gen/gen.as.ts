// The traffic generator's per-burst kernels (twins: gen.twin.ts). `s` is a
// stream's block (gen.record.ts), `lc` the lcore block, `burst` a burst's
// heap offset of freshly allocated single-segment mbufs.
import { copyBytes } from '../mem/copy.as';
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_DATA_LEN, M_PKT_LEN } from '../mem/mbuf-layout.as';
import {
  GEN_DEC,
  GEN_F_CSUM,
  GEN_F_IPV4,
  GEN_F_LEN,
  GEN_F_TCP,
  GEN_F_UDP,
  GEN_INC,
  GEN_LEN_FIELD,
  GEN_LIST,
  GEN_RANDOM,
  GEN_VAR_SIZE,
  GENS_FLAGS,
  GENS_IP_SUM,
  GENS_L3,
  GENS_L4,
  GENS_L4_SUM,
  GENS_NB_VARS,
  GENS_RNG,
  GENS_TMPL,
  GENS_TMPL_LEN,
  GENS_VARS,
  GENV_CUR,
  GENV_KIND,
  GENV_LIST,
  GENV_LIST_LEN,
  GENV_MAX,
  GENV_MIN,
  GENV_OFF,
  GENV_STEP,
  GENV_WIDTH,
} from './gen-layout.as';

/** The variable at `v`'s next value; advances its state (and the stream's random state at `s`). */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function nextValue(s: u32, v: u32): u32 {
  const kind = <u32>load<u8>(v, GENV_KIND);
  const min = load<u32>(v, GENV_MIN);
  const max = load<u32>(v, GENV_MAX);
  const cur = load<u32>(v, GENV_CUR);
  if (kind == GEN_INC) {
    const step = load<u32>(v, GENV_STEP);
    store<u32>(v, max - cur < step ? min : cur + step, GENV_CUR);
    return cur;
  }
  if (kind == GEN_DEC) {
    const step = load<u32>(v, GENV_STEP);
    store<u32>(v, cur - min < step ? max : cur - step, GENV_CUR);
    return cur;
  }
  if (kind == GEN_RANDOM) {
    let x = load<u32>(s, GENS_RNG);
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    store<u32>(s, x, GENS_RNG);
    const span = max - min + 1;
    return span == 0 ? x : min + x % span;
  }
  // GEN_LIST
  const next = cur + 1;
  store<u32>(v, next == load<u32>(v, GENV_LIST_LEN) ? 0 : next, GENV_CUR);
  return load<u32>(load<u32>(v, GENV_LIST) + (cur << 2));
}

/**
 * For each mbuf of the burst: the template copied in at the packet's length
 * (the stream's length variable, else the template's), each field variable's
 * next value written big-endian, with a length variable the IPv4 total
 * length, IPv6 payload length and UDP length, and the mbuf's lengths.
 * @returns the bytes filled.
 */
export function genFill(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const tmpl = load<u32>(s, GENS_TMPL);
  const tmplLen = load<u32>(s, GENS_TMPL_LEN);
  const flags = load<u32>(s, GENS_FLAGS);
  const l3 = load<u32>(s, GENS_L3);
  const l4 = load<u32>(s, GENS_L4);
  const nbVars = load<u32>(s, GENS_NB_VARS);
  let bytes: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const p = mtod(r);
    let len = tmplLen;
    if (flags & GEN_F_LEN) {
      // The length variable comes first (gen.ts puts it there), so the copy knows its size.
      len = nextValue(s, s + GENS_VARS);
    }
    copyBytes(p, tmpl, len);
    for (let k: u32 = (flags & GEN_F_LEN) ? 1 : 0; k < nbVars; k++) {
      const v = s + GENS_VARS + k * GEN_VAR_SIZE;
      const x = nextValue(s, v);
      const at = p + <u32>load<u16>(v, GENV_OFF);
      const width = <u32>load<u8>(v, GENV_WIDTH);
      if (width == 4) store<u32>(at, bswap<u32>(x));
      else if (width == 2) store<u16>(at, bswap<u16>(<u16>x));
      else store<u8>(at, <u8>x);
    }
    if (flags & GEN_F_LEN) {
      if (l3 != 0) {
        if (flags & GEN_F_IPV4) store<u16>(p + l3, bswap<u16>(<u16>(len - l3)), 2);
        else store<u16>(p + l3, bswap<u16>(<u16>(len - l3 - 40)), 4);
      }
      if (flags & GEN_F_UDP) store<u16>(p + l4, bswap<u16>(<u16>(len - l4)), 4);
    }
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u32>(r, len, M_PKT_LEN);
    bytes += len;
  }
  return bytes;
}

/** The 16-bit big-endian word at `p`. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function word(p: u32): u32 {
  return <u32>bswap<u16>(load<u16>(p));
}

/** One's-complement fold of an unfolded sum to 16 bits. */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
function fold(sum: u32): u32 {
  sum = (sum & 0xffff) + (sum >>> 16);
  return (sum & 0xffff) + (sum >>> 16);
}

/**
 * For each packet of the burst (filled by genFill): the IPv4 header checksum
 * and the UDP / TCP checksum, from the template's sums plus, for every word
 * a variable wrote, the new word and the complement of the template's (RFC
 * 1624), and the length words when the length varies. The template's
 * payload past its headers is zeros, so a length change moves no other word.
 */
export function genCsum(s: u32, lc: u32, burst: u32, n: u32): u32 {
  const flags = load<u32>(s, GENS_FLAGS);
  if (!(flags & GEN_F_CSUM)) return n;
  const tmpl = load<u32>(s, GENS_TMPL);
  const tmplLen = load<u32>(s, GENS_TMPL_LEN);
  const l3 = load<u32>(s, GENS_L3);
  const l4 = load<u32>(s, GENS_L4);
  const nbVars = load<u32>(s, GENS_NB_VARS);
  const v4 = flags & GEN_F_IPV4;
  // The IPv4 header's words, and the pseudo-header's addresses (IPv4: 12..20, IPv6: 8..40 of the IP header).
  const ipEnd = v4 ? l3 + 20 : 0;
  const addrFrom = l3 + (v4 ? 12 : 8);
  const addrTo = l3 + (v4 ? 20 : 40);
  const l4At = flags & GEN_F_TCP ? l4 + 16 : l4 + 6;
  const hasL4 = flags & (GEN_F_UDP | GEN_F_TCP);
  const ipSum0 = load<u32>(s, GENS_IP_SUM);
  const l4Sum0 = load<u32>(s, GENS_L4_SUM);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const p = mtod(r);
    let ipSum = ipSum0;
    let l4Sum = l4Sum0;
    let k: u32 = 0;
    if (flags & GEN_F_LEN) {
      const len = <u32>load<u16>(r, M_DATA_LEN);
      if (v4) ipSum += (len - l3) + (~(tmplLen - l3) & 0xffff);
      const d = (len - l4) + (~(tmplLen - l4) & 0xffff);
      l4Sum += flags & GEN_F_UDP ? d + d : d;
      k = 1;
    }
    for (; k < nbVars; k++) {
      const v = s + GENS_VARS + k * GEN_VAR_SIZE;
      const off = <u32>load<u16>(v, GENV_OFF);
      const end = off + <u32>load<u8>(v, GENV_WIDTH);
      for (let w = off & ~1; w < end; w += 2) {
        const d = word(p + w) + (~word(tmpl + w) & 0xffff);
        if (w >= l3 && w < ipEnd) ipSum += d;
        if ((w >= addrFrom && w < addrTo) || (hasL4 && w >= l4)) l4Sum += d;
      }
    }
    if (v4) store<u16>(p + l3, bswap<u16>(<u16>(~fold(ipSum) & 0xffff)), 10);
    if (hasL4) {
      let c = ~fold(l4Sum) & 0xffff;
      if (c == 0 && (flags & GEN_F_UDP)) c = 0xffff;
      store<u16>(p + l4At, bswap<u16>(<u16>c));
    }
  }
  return n;
}
