/**
 * A generator stream from its typed description: the packet template
 * (Ethernet, an optional 802.1Q tag, IPv4 or IPv6, UDP or TCP, zero payload;
 * or raw bytes), its sizes and field variables, checked here once and
 * written into the stream's heap block (gen.record.ts) that genFill and
 * genCsum read every burst. Every refusal is one ArgError line naming the
 * stream and the field.
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { cksumAdd } from '../net/checksum.js';
import { ETHER_TYPE_IPV4, ETHER_TYPE_IPV6, ETHER_TYPE_VLAN, parseMac } from '../net/ether.js';
import {
  GEN_DEC,
  GEN_F_CSUM,
  GEN_F_IPV4,
  GEN_F_IPV6,
  GEN_F_LEN,
  GEN_F_TCP,
  GEN_F_UDP,
  GEN_INC,
  GEN_LEN_FIELD,
  GEN_LIST,
  GEN_MAX_VARS,
  GEN_RANDOM,
  GEN_STREAM_SIZE,
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
  GENV_KIND,
  GENV_OFF,
  GENV_W_CUR,
  GENV_W_LIST,
  GENV_W_LIST_LEN,
  GENV_W_MAX,
  GENV_W_MIN,
  GENV_W_STEP,
  GENV_WIDTH,
} from './gen-layout.js';

/** How a field variable moves from packet to packet. */
export type VaryMode = 'inc' | 'dec' | 'random' | 'list';

/** Bytes of a packet named by place: a variable over a raw template or a payload. */
export interface RawField {
  /** Byte offset in the packet. */
  offset: number;
  /** Bytes written, big-endian. */
  width: 1 | 2 | 4;
}

/** A field variable: which bytes, and how each packet's value is chosen. */
export interface FieldVarSpec {
  /**
   * The field: `eth.src`, `eth.dst` (their low 4 bytes), `vlan.tci`, `ipv4.src`, `ipv4.dst`,
   * `ipv4.tos`, `ipv4.ttl`, `ipv6.src`, `ipv6.dst` (their low 4 bytes), `udp.src`, `udp.dst`,
   * `tcp.src`, `tcp.dst`, or `{ offset, width }` for raw bytes (width 1, 2 or 4).
   */
  field: string | RawField;
  /** `inc` (default), `dec`, `random` or `list`. */
  mode?: VaryMode;
  /** Smallest value (an address in the field's notation, or a number). Default: the template's value for inc/dec, 0 for random. */
  min?: string | number;
  /** Largest value. Default: min + (count - 1) * step, else the field's largest value. */
  max?: string | number;
  /** How many values from min (inc / dec): sets max. */
  count?: number;
  /** inc / dec: the step. Default 1. */
  step?: number;
  /** list: the values in order. */
  values?: readonly (string | number)[];
}

/** A template's Ethernet header. */
export interface EthSpec {
  /** Source MAC (default: the port's). */
  src?: string;
  /** Destination MAC (default 02:00:00:00:00:02). */
  dst?: string;
  /** An 802.1Q tag with this VLAN id. */
  vlan?: number;
}

/** A template's IPv4 header (20 bytes, no options). */
export interface Ipv4Spec {
  /** Source address (default 198.18.0.1). */
  src?: string;
  /** Destination address (default 198.18.0.2). */
  dst?: string;
  /** Time to live (default 64). */
  ttl?: number;
  /** Type of service byte (default 0). */
  tos?: number;
}

/** A template's IPv6 header (40 bytes, no extension headers). */
export interface Ipv6Spec {
  /** Source address (default fd00::1). */
  src?: string;
  /** Destination address (default fd00::2). */
  dst?: string;
  /** Hop limit (default 64). */
  hopLimit?: number;
}

/** A template's UDP header. */
export interface UdpSpec {
  /** Source port (default 9). */
  src?: number;
  /** Destination port (default 9). */
  dst?: number;
}

/** A template's TCP header (20 bytes, no options). */
export interface TcpSpec {
  /** Source port (default 9). */
  src?: number;
  /** Destination port (default 9). */
  dst?: number;
  /** Flags byte (default 0x02, SYN). */
  flags?: number;
  /** Sequence number (default 0). */
  seq?: number;
}

/** A size range: stepped by one from min to max (`inc`, the default) or drawn at random. */
export interface SizeRange {
  /** Shortest packet, bytes. */
  min: number;
  /** Longest packet, bytes. */
  max: number;
  /** 'inc' or 'random'. */
  mode?: 'inc' | 'random';
}

/** Sizes: one, a range stepped or drawn at random, a list cycled, or the simple IMIX (7 × 64, 4 × 570, 1 × 1518). */
export type SizeSpec = number | 'imix' | readonly number[] | SizeRange;

/** A stream's packets: headers from their fields (or raw bytes), sizes, field variables. */
export interface StreamSpec {
  /** The stream's name in reports. Default `stream<i>`. */
  name?: string;
  /** Ethernet addresses (default: the port's MAC → 02:00:00:00:00:02) and an optional 802.1Q tag. */
  eth?: EthSpec;
  /** IPv4 header (the default: 198.18.0.1 → 198.18.0.2, TTL 64). */
  ipv4?: Ipv4Spec;
  /** IPv6 header instead of IPv4. */
  ipv6?: Ipv6Spec;
  /** UDP ports (the default L4: 9 → 9). */
  udp?: UdpSpec;
  /** TCP instead of UDP: ports, flags (default 0x02, SYN), sequence number. */
  tcp?: TcpSpec;
  /** The whole packet as hex instead of the header fields: sent as is, variables by offset, no checksum fix-up. */
  raw?: string;
  /** Packet length in bytes without the FCS (as testpmd's --txpkts). Default 64. */
  size?: SizeSpec;
  /** Field variables, at most 8 (7 with a varying size). */
  vary?: readonly FieldVarSpec[];
  /** Seed of the random variables (repeatable). Default 1. */
  seed?: number;
}

/** A field's place in the template. */
interface FieldAt {
  off: number;
  width: 1 | 2 | 4;
  /** Parses a value in the field's notation into the number written. */
  parse: (v: string | number) => number;
}

/** A stream checked and laid out: what `writeStream` puts in the heap. */
export interface BuiltStream {
  name: string;
  /** The template packet at `tmplLen` bytes, zero-padded to `maxLen`. */
  template: Uint8Array;
  tmplLen: number;
  minLen: number;
  maxLen: number;
  /** The mean packet length (what bit rates are divided by). */
  meanLen: number;
  l3: number;
  l4: number;
  flags: number;
  ipSum: number;
  l4Sum: number;
  /** Variables as written into the block: [off, width, kind, min, max, step, cur, values]. */
  vars: { off: number; width: number; kind: number; min: number; max: number; step: number; cur: number; values: number[] }[];
  seed: number;
}

const ETH_LEN = 14;
const VLAN_LEN = 4;
const IPV4_LEN = 20;
const IPV6_LEN = 40;
const UDP_LEN = 8;
const TCP_LEN = 20;
const IPPROTO_TCP = 6;
const IPPROTO_UDP = 17;
/** Ethernet's largest frame without FCS, with a VLAN tag room: beyond it a size is refused. */
export const GEN_MAX_SIZE = 9018;
/** The simple IMIX by packet count (7:4:1), interleaved so any 12 packets carry the profile. */
const IMIX = [64, 570, 64, 64, 1518, 64, 570, 64, 64, 570, 64, 570];

/** Parses dotted IPv4 into a u32. */
export function parseIpv4(text: string, what: string): number {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  const b = m ? m.slice(1).map(Number) : [];
  if (!m || b.some((x) => x > 255)) throw new ArgError(`${what}: '${text}' is not an IPv4 address`);
  return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
}

/** Parses an IPv6 address (with ::) into 16 bytes. */
export function parseIpv6(text: string, what: string): Uint8Array {
  const bad = (): never => {
    throw new ArgError(`${what}: '${text}' is not an IPv6 address`);
  };
  const halves = text.split('::');
  if (halves.length > 2) bad();
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : bad())));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if ((halves.length === 1 && fill !== 0) || fill < 0) bad();
  const all = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => ((out[2 * i] = g >>> 8), (out[2 * i + 1] = g & 0xff)));
  return out;
}

function checkInt(v: unknown, lo: number, hi: number, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new ArgError(`${what}: ${JSON.stringify(v)} must be an integer in [${lo}, ${hi}]`);
  return v;
}

function sizesOf(size: SizeSpec | undefined, where: string): { sizes: number[] | null; min: number; max: number; mode: number } {
  const check = (v: unknown): number => checkInt(v, 1, GEN_MAX_SIZE, `${where}: size`);
  if (size === undefined) return { sizes: null, min: 64, max: 64, mode: -1 };
  if (typeof size === 'number') return { sizes: null, min: check(size), max: size, mode: -1 };
  if (size === 'imix') return { sizes: IMIX, min: 64, max: 1518, mode: GEN_LIST };
  if (Array.isArray(size)) {
    if (size.length === 0) throw new ArgError(`${where}: size: an empty list`);
    const s = size.map(check);
    return { sizes: s, min: Math.min(...s), max: Math.max(...s), mode: GEN_LIST };
  }
  if (typeof size === 'object' && size !== null && !Array.isArray(size)) {
    const r = size as { min: unknown; max: unknown; mode?: unknown };
    const min = check(r.min);
    const max = check(r.max);
    if (min > max) throw new ArgError(`${where}: size: min ${min} is above max ${max}`);
    if (r.mode !== undefined && r.mode !== 'inc' && r.mode !== 'random') throw new ArgError(`${where}: size: mode ${JSON.stringify(r.mode)} must be 'inc' or 'random'`);
    return { sizes: null, min, max, mode: r.mode === 'random' ? GEN_RANDOM : GEN_INC };
  }
  throw new ArgError(`${where}: size: ${JSON.stringify(size)} is not a size, a list, {min, max} or 'imix'`);
}

const KNOWN_KEYS = new Set(['name', 'eth', 'ipv4', 'ipv6', 'udp', 'tcp', 'raw', 'size', 'vary', 'seed', 'rate', 'pattern']);

/**
 * Checks `spec` and lays out its template, sums and variables (stream `index`
 * of a run, on a port whose MAC is `portMac`).
 * @throws ArgError, one line naming the stream and the bad field.
 */
export function buildStream(spec: StreamSpec, index: number, portMac: Uint8Array): BuiltStream {
  const name = spec.name ?? `stream${index}`;
  const where = `stream '${name}'`;
  if (typeof spec !== 'object' || spec === null) throw new ArgError(`stream ${index}: not an object`);
  for (const k of Object.keys(spec)) if (!KNOWN_KEYS.has(k)) throw new ArgError(`${where}: unknown key '${k}' (known: ${[...KNOWN_KEYS].join(', ')})`);
  if (spec.ipv4 && spec.ipv6) throw new ArgError(`${where}: give ipv4 or ipv6, not both`);
  if (spec.udp && spec.tcp) throw new ArgError(`${where}: give udp or tcp, not both`);
  if (spec.raw !== undefined && (spec.eth || spec.ipv4 || spec.ipv6 || spec.udp || spec.tcp)) throw new ArgError(`${where}: raw bytes replace the header fields: give one or the other`);
  const seed = spec.seed === undefined ? 1 : checkInt(spec.seed, 1, 0xffffffff, `${where}: seed`);

  let template: Uint8Array;
  let l3 = 0;
  let l4 = 0;
  let flags = 0;
  let hdrLen: number;
  const fields = new Map<string, FieldAt>();
  const sz = sizesOf(spec.raw !== undefined ? (spec.size ?? (spec.raw.length >>> 1)) : spec.size, where);

  if (spec.raw !== undefined) {
    if (typeof spec.raw !== 'string' || !/^([0-9a-fA-F]{2})+$/.test(spec.raw)) throw new ArgError(`${where}: raw: not an even number of hex digits`);
    const bytes = Uint8Array.from(spec.raw.match(/../g)!.map((h) => parseInt(h, 16)));
    if (sz.min !== bytes.length || sz.max !== bytes.length) throw new ArgError(`${where}: size: raw bytes are sent at their own length (${bytes.length})`);
    template = bytes;
    hdrLen = bytes.length;
  } else {
    const eth = spec.eth ?? {};
    const mac = (text: string | undefined, dflt: Uint8Array, what: string): Uint8Array => {
      if (text === undefined) return dflt;
      try {
        return parseMac(text);
      } catch (e) {
        throw new ArgError(`${where}: ${what}: ${(e as Error).message}`);
      }
    };
    const dst = mac(eth.dst, Uint8Array.of(2, 0, 0, 0, 0, 2), 'eth.dst');
    const src = mac(eth.src, portMac, 'eth.src');
    const v6 = spec.ipv6 !== undefined;
    l3 = ETH_LEN + (eth.vlan !== undefined ? VLAN_LEN : 0);
    const tcp = spec.tcp !== undefined;
    l4 = l3 + (v6 ? IPV6_LEN : IPV4_LEN);
    hdrLen = l4 + (tcp ? TCP_LEN : UDP_LEN);
    if (sz.min < hdrLen) throw new ArgError(`${where}: size ${sz.min} is shorter than the ${hdrLen}-byte headers`);
    template = new Uint8Array(sz.min);
    const v = new DataView(template.buffer);
    template.set(dst, 0);
    template.set(src, 6);
    fields.set('eth.dst', { off: 2, width: 4, parse: (x) => macLow(x, `${where}: eth.dst`) });
    fields.set('eth.src', { off: 8, width: 4, parse: (x) => macLow(x, `${where}: eth.src`) });
    if (eth.vlan !== undefined) {
      v.setUint16(12, ETHER_TYPE_VLAN);
      v.setUint16(14, checkInt(eth.vlan, 0, 4095, `${where}: eth.vlan`));
      fields.set('vlan.tci', { off: 14, width: 2, parse: (x) => num(x, 0xffff, `${where}: vlan.tci`) });
    }
    v.setUint16(l3 - 2, v6 ? ETHER_TYPE_IPV6 : ETHER_TYPE_IPV4);
    const proto = tcp ? IPPROTO_TCP : IPPROTO_UDP;
    const l4Len = sz.min - l4;
    if (v6) {
      const ip = spec.ipv6!;
      v.setUint32(l3, 0x60000000);
      v.setUint16(l3 + 4, l4Len);
      v.setUint8(l3 + 6, proto);
      v.setUint8(l3 + 7, ip.hopLimit === undefined ? 64 : checkInt(ip.hopLimit, 0, 255, `${where}: ipv6.hopLimit`));
      template.set(parseIpv6(ip.src ?? 'fd00::1', `${where}: ipv6.src`), l3 + 8);
      template.set(parseIpv6(ip.dst ?? 'fd00::2', `${where}: ipv6.dst`), l3 + 24);
      fields.set('ipv6.src', { off: l3 + 20, width: 4, parse: (x) => v6Low(x, `${where}: ipv6.src`) });
      fields.set('ipv6.dst', { off: l3 + 36, width: 4, parse: (x) => v6Low(x, `${where}: ipv6.dst`) });
      flags |= GEN_F_IPV6;
    } else {
      const ip = spec.ipv4 ?? {};
      v.setUint8(l3, 0x45);
      v.setUint8(l3 + 1, ip.tos === undefined ? 0 : checkInt(ip.tos, 0, 255, `${where}: ipv4.tos`));
      v.setUint16(l3 + 2, sz.min - l3);
      v.setUint8(l3 + 8, ip.ttl === undefined ? 64 : checkInt(ip.ttl, 0, 255, `${where}: ipv4.ttl`));
      v.setUint8(l3 + 9, proto);
      v.setUint32(l3 + 12, parseIpv4(ip.src ?? '198.18.0.1', `${where}: ipv4.src`));
      v.setUint32(l3 + 16, parseIpv4(ip.dst ?? '198.18.0.2', `${where}: ipv4.dst`));
      const addr = (f: string) => (x: string | number) => (typeof x === 'number' ? num(x, 0xffffffff, `${where}: ${f}`) : parseIpv4(x, `${where}: ${f}`));
      fields.set('ipv4.tos', { off: l3 + 1, width: 1, parse: (x) => num(x, 0xff, `${where}: ipv4.tos`) });
      fields.set('ipv4.ttl', { off: l3 + 8, width: 1, parse: (x) => num(x, 0xff, `${where}: ipv4.ttl`) });
      fields.set('ipv4.src', { off: l3 + 12, width: 4, parse: addr('ipv4.src') });
      fields.set('ipv4.dst', { off: l3 + 16, width: 4, parse: addr('ipv4.dst') });
      flags |= GEN_F_IPV4;
    }
    const port = (x: number | undefined, d: number, f: string): number => (x === undefined ? d : checkInt(x, 0, 0xffff, `${where}: ${f}`));
    const l4name = tcp ? 'tcp' : 'udp';
    if (tcp) {
      const t = spec.tcp!;
      v.setUint16(l4, port(t.src, 9, 'tcp.src'));
      v.setUint16(l4 + 2, port(t.dst, 9, 'tcp.dst'));
      v.setUint32(l4 + 4, t.seq === undefined ? 0 : checkInt(t.seq, 0, 0xffffffff, `${where}: tcp.seq`));
      v.setUint8(l4 + 12, 5 << 4);
      v.setUint8(l4 + 13, t.flags === undefined ? 0x02 : checkInt(t.flags, 0, 0xff, `${where}: tcp.flags`));
      v.setUint16(l4 + 14, 0xffff);
      flags |= GEN_F_TCP;
    } else {
      const u = spec.udp ?? {};
      v.setUint16(l4, port(u.src, 9, 'udp.src'));
      v.setUint16(l4 + 2, port(u.dst, 9, 'udp.dst'));
      v.setUint16(l4 + 4, l4Len);
      flags |= GEN_F_UDP;
    }
    fields.set(`${l4name}.src`, { off: l4, width: 2, parse: (x) => num(x, 0xffff, `${where}: ${l4name}.src`) });
    fields.set(`${l4name}.dst`, { off: l4 + 2, width: 2, parse: (x) => num(x, 0xffff, `${where}: ${l4name}.dst`) });
    flags |= GEN_F_CSUM;
  }

  const vars: BuiltStream['vars'] = [];
  if (sz.mode >= 0) {
    flags |= GEN_F_LEN;
    if (sz.sizes) vars.push({ off: GEN_LEN_FIELD, width: 2, kind: GEN_LIST, min: 0, max: 0, step: 1, cur: 0, values: sz.sizes });
    else vars.push({ off: GEN_LEN_FIELD, width: 2, kind: sz.mode, min: sz.min, max: sz.max, step: 1, cur: sz.min, values: [] });
  }
  const vary = spec.vary ?? [];
  if (!Array.isArray(vary)) throw new ArgError(`${where}: vary: not a list`);
  if (vars.length + vary.length > GEN_MAX_VARS) throw new ArgError(`${where}: vary: ${vary.length} variables, at most ${GEN_MAX_VARS - vars.length}${vars.length ? ' beside a varying size' : ''}`);
  const ckOffs: number[] = [];
  if (flags & GEN_F_IPV4) ckOffs.push(l3 + 10);
  if (flags & GEN_F_CSUM) ckOffs.push(flags & GEN_F_TCP ? l4 + 16 : l4 + 6);
  vary.forEach((fv, i) => {
    const w = `${where}: vary[${i}]`;
    let at: FieldAt;
    if (typeof fv.field === 'string') {
      const f = fields.get(fv.field);
      if (!f) throw new ArgError(`${w}: field '${fv.field}' is not in this stream (it has ${[...fields.keys()].join(', ') || 'only raw offsets'})`);
      at = f;
    } else if (typeof fv.field === 'object' && fv.field !== null) {
      const width = fv.field.width;
      if (width !== 1 && width !== 2 && width !== 4) throw new ArgError(`${w}: width ${JSON.stringify(width)} must be 1, 2 or 4`);
      const max = 2 ** (8 * width) - 1;
      at = { off: checkInt(fv.field.offset, 0, 0xfffe, `${w}: offset`), width, parse: (x) => num(x, max, `${w}`) };
    } else {
      throw new ArgError(`${w}: field: a name or { offset, width }`);
    }
    if (at.off + at.width > sz.min) throw new ArgError(`${w}: bytes ${at.off}..${at.off + at.width - 1} are past the shortest packet (${sz.min} bytes)`);
    for (const c of ckOffs) if (at.off < c + 2 && at.off + at.width > c) throw new ArgError(`${w}: bytes ${at.off}..${at.off + at.width - 1} cover a checksum, which genCsum writes`);
    const mode = fv.mode ?? 'inc';
    const fieldMax = 2 ** (8 * at.width) - 1;
    const cur = readField(template, at);
    const step = fv.step === undefined ? 1 : checkInt(fv.step, 1, fieldMax, `${w}: step`);
    if (mode === 'list') {
      if (!Array.isArray(fv.values) || fv.values.length === 0) throw new ArgError(`${w}: list: values must be a non-empty list`);
      vars.push({ off: at.off, width: at.width, kind: GEN_LIST, min: 0, max: 0, step: 1, cur: 0, values: fv.values.map(at.parse) });
      return;
    }
    if (mode !== 'inc' && mode !== 'dec' && mode !== 'random') throw new ArgError(`${w}: mode ${JSON.stringify(mode)} must be inc, dec, random or list`);
    const min = fv.min !== undefined ? at.parse(fv.min) : mode === 'random' ? 0 : cur;
    let max: number;
    if (fv.max !== undefined) max = at.parse(fv.max);
    else if (fv.count !== undefined) max = min + (checkInt(fv.count, 1, fieldMax + 1, `${w}: count`) - 1) * step;
    else max = fieldMax;
    if (max > fieldMax) throw new ArgError(`${w}: min + (count - 1) * step = ${max} does not fit ${at.width} bytes`);
    if (min > max) throw new ArgError(`${w}: min ${min} is above max ${max}`);
    vars.push({ off: at.off, width: at.width, kind: mode === 'inc' ? GEN_INC : mode === 'dec' ? GEN_DEC : GEN_RANDOM, min, max, step, cur: mode === 'dec' ? max : min, values: [] });
  });

  const tmplLen = sz.min;
  const full = new Uint8Array(Math.max(sz.max, template.length));
  full.set(template);
  let ipSum = 0;
  let l4Sum = 0;
  if (flags & GEN_F_CSUM) {
    const v = new DataView(full.buffer);
    const proto = flags & GEN_F_TCP ? IPPROTO_TCP : IPPROTO_UDP;
    const l4Len = tmplLen - l4;
    const ckAt = flags & GEN_F_TCP ? l4 + 16 : l4 + 6;
    if (flags & GEN_F_IPV4) {
      ipSum = cksumAdd(full, l3, 10) + cksumAdd(full, l3 + 12, 8);
      v.setUint16(l3 + 10, ~fold(ipSum) & 0xffff);
      l4Sum = cksumAdd(full, l3 + 12, 8) + proto + l4Len;
    } else {
      l4Sum = cksumAdd(full, l3 + 8, 32) + proto + l4Len;
    }
    l4Sum = cksumAdd(full, ckAt + 2, tmplLen - ckAt - 2, cksumAdd(full, l4, ckAt - l4, l4Sum));
    let c = ~fold(l4Sum) & 0xffff;
    if (c === 0 && flags & GEN_F_UDP) c = 0xffff;
    v.setUint16(ckAt, c);
  }
  const meanLen = sz.sizes ? sz.sizes.reduce((a, b) => a + b, 0) / sz.sizes.length : (sz.min + sz.max) / 2;
  return { name, template: full, tmplLen, minLen: sz.min, maxLen: Math.max(sz.max, template.length), meanLen, l3, l4, flags, ipSum, l4Sum, vars, seed };
}

function fold(sum: number): number {
  while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000);
  return sum;
}

function num(x: string | number, max: number, what: string): number {
  const n = typeof x === 'string' && /^(0x[0-9a-fA-F]+|\d+)$/.test(x) ? Number(x) : x;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) throw new ArgError(`${what}: ${JSON.stringify(x)} must be an integer in [0, ${max}]`);
  return n;
}

/** A MAC address's low 4 bytes (what a MAC variable varies), or a number. */
function macLow(x: string | number, what: string): number {
  if (typeof x === 'number') return num(x, 0xffffffff, what);
  let m: Uint8Array;
  try {
    m = parseMac(x);
  } catch (e) {
    throw new ArgError(`${what}: ${(e as Error).message}`);
  }
  return ((m[2]! << 24) | (m[3]! << 16) | (m[4]! << 8) | m[5]!) >>> 0;
}

/** An IPv6 address's low 4 bytes, or a number. */
function v6Low(x: string | number, what: string): number {
  if (typeof x === 'number') return num(x, 0xffffffff, what);
  const a = parseIpv6(x, what);
  return ((a[12]! << 24) | (a[13]! << 16) | (a[14]! << 8) | a[15]!) >>> 0;
}

function readField(t: Uint8Array, at: FieldAt): number {
  if (at.off + at.width > t.length) return 0;
  const v = new DataView(t.buffer, t.byteOffset);
  return at.width === 4 ? v.getUint32(at.off) : at.width === 2 ? v.getUint16(at.off) : v.getUint8(at.off);
}

/** Heap bytes `writeStream` needs for `b`: the block, the template, the list values. */
export function streamFootprint(b: BuiltStream): number {
  return GEN_STREAM_SIZE + ((b.template.length + 63) & ~63) + b.vars.reduce((a, v) => a + ((v.values.length * 4 + 63) & ~63), 0) + 64;
}

/**
 * Reserves the stream's block, template and lists in the heap and writes them.
 * @returns the block's heap offset. @throws NoMemError when the heap is full.
 */
export function writeStream(heap: Heap, b: BuiltStream): number {
  const s = heap.reserve(GEN_STREAM_SIZE, 64, `gen stream ${b.name}`);
  const tmpl = heap.reserve(b.template.length, 64, `gen stream ${b.name} template`);
  heap.u8.set(b.template, tmpl);
  const u32 = heap.u32;
  const sw = s >>> 2;
  u32[sw + GENS_W_TMPL] = tmpl;
  u32[sw + GENS_W_TMPL_LEN] = b.tmplLen;
  u32[sw + GENS_W_L3] = b.l3;
  u32[sw + GENS_W_L4] = b.l4;
  u32[sw + GENS_W_FLAGS] = b.flags;
  u32[sw + GENS_W_NB_VARS] = b.vars.length;
  u32[sw + GENS_W_RNG] = b.seed;
  u32[sw + GENS_W_IP_SUM] = b.ipSum;
  u32[sw + GENS_W_L4_SUM] = b.l4Sum;
  b.vars.forEach((x, k) => {
    const v = s + GENS_VARS + k * GEN_VAR_SIZE;
    const w = v >>> 2;
    heap.u16[(v + GENV_OFF) >>> 1] = x.off;
    heap.u8[v + GENV_WIDTH] = x.width;
    heap.u8[v + GENV_KIND] = x.kind;
    u32[w + GENV_W_MIN] = x.min;
    u32[w + GENV_W_MAX] = x.max;
    u32[w + GENV_W_STEP] = x.step;
    u32[w + GENV_W_CUR] = x.cur;
    if (x.values.length > 0) {
      const list = heap.reserve(x.values.length * 4, 64, `gen stream ${b.name} list`);
      u32.set(x.values, list >>> 2);
      u32[w + GENV_W_LIST] = list;
      u32[w + GENV_W_LIST_LEN] = x.values.length;
    }
  });
  return s;
}
