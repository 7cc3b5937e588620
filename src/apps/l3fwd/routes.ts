/**
 * l3fwd's routes: DPDK's default tables (l3fwd_lpm.c's and l3fwd_em.c's,
 * also shipped as lpm_default_v4.cfg / em_default_v4.cfg and their _v6
 * twins) and its route files (lpm_route_parse.c, em_route_parse.c):
 *   # comment            blank lines too
 *   R198.18.0.0/24 0     LPM: prefix, then the output port
 *   R198.18.0.0 198.18.0.1 9 9 0x11 0
 *                        EM: destination, source, destination port, source
 *                        port, protocol, output port (numbers decimal or 0x hex)
 * IPv6 files are the same with IPv6 addresses (R2001:200::/64 0). A bad line
 * is one ArgError naming the file and the line. DPDK <= 21.08's generated EM
 * flows (--hash-entry-num) are here too.
 */
import { readFileSync } from 'node:fs';
import { ArgError } from '../../errors.js';

export interface LpmRoute {
  ip: number;
  depth: number;
  port: number;
}

export interface EmRoute {
  dst: number;
  src: number;
  dport: number;
  sport: number;
  proto: number;
  port: number;
}

/** l3fwd's ipv4_l3fwd_route_array: 198.18.X.0/24 to port X, X = 0..15. */
export const DEFAULT_LPM_ROUTES: readonly LpmRoute[] = Array.from({ length: 16 }, (_, x) => ({ ip: ((198 << 24) | (18 << 16) | (x << 8)) >>> 0, depth: 24, port: x }));

/** l3fwd's ipv4_l3fwd_em_route_array: 198.18.X.1 → 198.18.X.0, UDP 9 → 9, to port X. */
export const DEFAULT_EM_ROUTES: readonly EmRoute[] = Array.from({ length: 16 }, (_, x) => ({
  dst: ((198 << 24) | (18 << 16) | (x << 8)) >>> 0,
  src: ((198 << 24) | (18 << 16) | (x << 8) | 1) >>> 0,
  dport: 9,
  sport: 9,
  proto: 17,
  port: x,
}));

export interface Lpm6Route {
  ip: Uint8Array;
  depth: number;
  port: number;
}

export interface Em6Route {
  dst: Uint8Array;
  src: Uint8Array;
  dport: number;
  sport: number;
  proto: number;
  port: number;
}

/** 2001:200:0:X:: (RFC 5180's benchmarking range), X = 0..15, last byte `last`. */
const bench6 = (x: number, last = 0): Uint8Array => Uint8Array.of(0x20, 0x01, 0x02, 0, 0, 0, 0, x, 0, 0, 0, 0, 0, 0, 0, last);

/** l3fwd's ipv6_l3fwd_route_array: 2001:200:0:X::/64 to port X, X = 0..15. */
export const DEFAULT_LPM6_ROUTES: readonly Lpm6Route[] = Array.from({ length: 16 }, (_, x) => ({ ip: bench6(x), depth: 64, port: x }));

/** l3fwd's ipv6_l3fwd_em_route_array: 2001:200:0:X::1 → 2001:200:0:X::, UDP 9 → 9, to port X. */
export const DEFAULT_EM6_ROUTES: readonly Em6Route[] = Array.from({ length: 16 }, (_, x) => ({ dst: bench6(x), src: bench6(x, 1), dport: 9, sport: 9, proto: 17, port: x }));

/** DPDK <= 21.08's four EM flows that --hash-entry-num varied (its ipv4_l3fwd_em_route_array then): TCP, to ports 0..3. */
const MANY_FLOW_V4 = [
  { dst: 101, src: [100, 10, 0, 1], dport: 101, sport: 11 },
  { dst: 201, src: [200, 20, 0, 1], dport: 102, sport: 12 },
  { dst: 111, src: [100, 30, 0, 1], dport: 101, sport: 11 },
  { dst: 211, src: [200, 40, 0, 1], dport: 102, sport: 12 },
];

/** DPDK <= 21.08's NUMBER_PORT_USED: flow i goes to port i % 4. */
const NUMBER_PORT_USED = 4;

/**
 * DPDK <= 21.08's populate_ipv4_many_flow_into_table: flow i is its old
 * route i % 4 with destination <first>.c.b.a, where a.b.c count i / 4 in
 * base 256 (first: 101, 201, 111, 211), TCP, to port i % 4.
 */
export function manyFlowsV4(n: number): EmRoute[] {
  return Array.from({ length: n }, (_, i) => {
    const k = Math.floor(i / NUMBER_PORT_USED);
    const f = MANY_FLOW_V4[i & (NUMBER_PORT_USED - 1)]!;
    const [a, b, c] = [k & 0xff, (k >>> 8) & 0xff, (k >>> 16) & 0xff];
    const src = ((f.src[0]! << 24) | (f.src[1]! << 16) | (f.src[2]! << 8) | f.src[3]!) >>> 0;
    return { dst: ((f.dst << 24) | (c << 16) | (b << 8) | a) >>> 0, src, dport: f.dport, sport: f.sport, proto: 6, port: i & (NUMBER_PORT_USED - 1) };
  });
}

/**
 * DPDK <= 21.08's populate_ipv6_many_flow_into_table: flow i is its old
 * IPv6 route i % 4 (fe80::21e:67ff:fe00:0 → fe80::21b:21ff:fe91:3805 with
 * the second byte 0x80, 0x90, 0xa0, 0xb0) with the destination's last three
 * bytes c, b, a counting i / 4, TCP, to port i % 4.
 */
export function manyFlowsV6(n: number): Em6Route[] {
  return Array.from({ length: n }, (_, i) => {
    const k = Math.floor(i / NUMBER_PORT_USED);
    const r = i & (NUMBER_PORT_USED - 1);
    const b1 = 0x80 + 0x10 * r;
    const dst = Uint8Array.of(0xfe, b1, 0, 0, 0, 0, 0, 0, 0x02, 0x1e, 0x67, 0xff, 0xfe, (k >>> 16) & 0xff, (k >>> 8) & 0xff, k & 0xff);
    const src = Uint8Array.of(0xfe, b1, 0, 0, 0, 0, 0, 0, 0x02, 0x1b, 0x21, 0xff, 0xfe, 0x91, 0x38, 0x05);
    return { dst, src, dport: MANY_FLOW_V4[r]!.dport, sport: MANY_FLOW_V4[r]!.sport, proto: 6, port: r };
  });
}

/** inet_pton(AF_INET): a dotted quad, host order. @returns the address, or NaN */
export function parseIpv4(text: string): number {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return NaN;
  const b = m.slice(1).map(Number);
  if (b.some((x) => x > 255)) return NaN;
  return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
}

/** a.b.c.d */
export function fmtIpv4(ip: number): string {
  return `${ip >>> 24}.${(ip >>> 16) & 0xff}.${(ip >>> 8) & 0xff}.${ip & 0xff}`;
}

/** inet_pton(AF_INET6): eight hex groups, one `::`, an IPv4 tail. @returns the 16 bytes, or null */
export function parseIpv6(text: string): Uint8Array | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): number[] | null => {
    if (h === '') return [];
    const parts = h.split(':');
    const out: number[] = [];
    for (const [i, g] of parts.entries()) {
      if (i === parts.length - 1 && g.includes('.')) {
        const v4 = parseIpv4(g);
        if (Number.isNaN(v4)) return null;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else if (/^[0-9a-f]{1,4}$/i.test(g)) out.push(parseInt(g, 16));
      else return null;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  const all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >>> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** inet_ntop(AF_INET6): the shortest form (RFC 5952). */
export function fmtIpv6(ip: Uint8Array): string {
  const g = Array.from({ length: 8 }, (_, i) => (ip[2 * i]! << 8) | ip[2 * i + 1]!);
  let [best, bestLen] = [-1, 1];
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (a: number[]) => a.map((x) => x.toString(16)).join(':');
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** GET_CB_FIELD: an integer in [0, max], decimal or 0x hex. @returns it, or NaN */
function field(text: string, max: number): number {
  const n = /^0x[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : /^\d+$/.test(text) ? Number(text) : NaN;
  return n <= max ? n : NaN;
}

/** Each route line of `file` through `parse` (null: the line is bad, with why). */
function readRules<T>(file: string, parse: (fields: string[]) => T | string): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ArgError(`l3fwd: ${file}: cannot read the route file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const out: T[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('#') || line.trim() === '') continue;
    if (line[0] !== 'R') throw new ArgError(`l3fwd: ${file} Line ${i + 1}: should start with leading char R`);
    const r = parse(line.slice(1).trim().split(/[ \t]+/));
    if (typeof r === 'string') throw new ArgError(`l3fwd: ${file} Line ${i + 1}: parse rules error: ${r}`);
    out.push(r);
  }
  if (out.length === 0) throw new ArgError(`l3fwd: ${file}: no route (lines starting with R)`);
  return out;
}

/** The routes of an LPM route file. @throws ArgError naming the file and line of a bad one */
export function readLpmRules(file: string): LpmRoute[] {
  return readRules(file, (f) => {
    if (f.length < 2) return `expected R<ip>/<depth> <port>, got ${f.length} field(s)`;
    const m = /^([^/]+)\/(\d+)$/.exec(f[0]!);
    const ip = m ? parseIpv4(m[1]!) : NaN;
    if (Number.isNaN(ip)) return `'${f[0]}' is not an IPv4 prefix a.b.c.d/depth`;
    const depth = Number(m![2]);
    if (depth > 32) return `depth ${depth} is past 32`;
    const port = field(f[1]!, 255);
    if (Number.isNaN(port)) return `port '${f[1]}' is not an integer in [0, 255]`;
    return { ip, depth, port };
  });
}

/** The routes of an IPv6 LPM route file. @throws ArgError naming the file and line of a bad one */
export function readLpm6Rules(file: string): Lpm6Route[] {
  return readRules(file, (f) => {
    if (f.length < 2) return `expected R<ip6>/<depth> <port>, got ${f.length} field(s)`;
    const m = /^([^/]+)\/(\d+)$/.exec(f[0]!);
    const ip = m ? parseIpv6(m[1]!) : null;
    if (!ip) return `'${f[0]}' is not an IPv6 prefix addr/depth`;
    const depth = Number(m![2]);
    if (depth > 128) return `depth ${depth} is past 128`;
    const port = field(f[1]!, 255);
    if (Number.isNaN(port)) return `port '${f[1]}' is not an integer in [0, 255]`;
    return { ip, depth, port };
  });
}

/** The routes of an IPv6 EM route file. @throws ArgError naming the file and line of a bad one */
export function readEm6Rules(file: string): Em6Route[] {
  return readRules(file, (f) => {
    if (f.length < 6) return `expected R<dst6> <src6> <dport> <sport> <proto> <port>, got ${f.length} field(s)`;
    const [dst, src] = [parseIpv6(f[0]!), parseIpv6(f[1]!)];
    if (!dst || !src) return `'${!dst ? f[0] : f[1]}' is not an IPv6 address`;
    const [dport, sport, proto, port] = [field(f[2]!, 65535), field(f[3]!, 65535), field(f[4]!, 255), field(f[5]!, 255)];
    const bad = [dport, sport, proto, port].findIndex(Number.isNaN);
    if (bad >= 0) return `'${f[2 + bad]}' is not a ${['destination port', 'source port', 'protocol', 'port'][bad]} in range`;
    return { dst, src, dport, sport, proto, port };
  });
}

/** The routes of an EM route file. @throws ArgError naming the file and line of a bad one */
export function readEmRules(file: string): EmRoute[] {
  return readRules(file, (f) => {
    if (f.length < 6) return `expected R<dst> <src> <dport> <sport> <proto> <port>, got ${f.length} field(s)`;
    const [dst, src] = [parseIpv4(f[0]!), parseIpv4(f[1]!)];
    if (Number.isNaN(dst) || Number.isNaN(src)) return `'${Number.isNaN(dst) ? f[0] : f[1]}' is not an IPv4 address`;
    const [dport, sport, proto, port] = [field(f[2]!, 65535), field(f[3]!, 65535), field(f[4]!, 255), field(f[5]!, 255)];
    const bad = [dport, sport, proto, port].findIndex(Number.isNaN);
    if (bad >= 0) return `'${f[2 + bad]}' is not a ${['destination port', 'source port', 'protocol', 'port'][bad]} in range`;
    return { dst, src, dport, sport, proto, port };
  });
}

/** ipv4_5tuple_host as the kernel builds it from a packet: 0, proto, 0, 0, src, dst, sport, dport (network order). */
export function emKey(r: EmRoute): Uint8Array {
  const k = new Uint8Array(16);
  const v = new DataView(k.buffer);
  v.setUint8(1, r.proto);
  v.setUint32(4, r.src);
  v.setUint32(8, r.dst);
  v.setUint16(12, r.sport);
  v.setUint16(14, r.dport);
  return k;
}

/** The IPv6 EM key's length: DPDK's union ipv6_5tuple_host, 48 bytes. */
export const EM6_KEY_LEN = 48;

/**
 * ipv6_5tuple_host as the kernel builds it from a packet: 0, 0, proto, 0,
 * src (16), dst (16), sport, dport, then 8 zero bytes: the 40 bytes from the
 * IPv6 header's payload length, all but the protocol of the first four
 * masked, the last 8 zero.
 */
export function em6Key(r: Em6Route): Uint8Array {
  const k = new Uint8Array(EM6_KEY_LEN);
  k[2] = r.proto;
  k.set(r.src, 4);
  k.set(r.dst, 20);
  k[36] = r.sport >>> 8;
  k[37] = r.sport & 0xff;
  k[38] = r.dport >>> 8;
  k[39] = r.dport & 0xff;
  return k;
}
