/**
 * l3fwd's IPv4 routes: DPDK's default tables (l3fwd_lpm.c's and
 * l3fwd_em.c's, also shipped as lpm_default_v4.cfg / em_default_v4.cfg) and
 * its route files (lpm_route_parse.c, em_route_parse.c):
 *   # comment            blank lines too
 *   R198.18.0.0/24 0     LPM: prefix, then the output port
 *   R198.18.0.0 198.18.0.1 9 9 0x11 0
 *                        EM: destination, source, destination port, source
 *                        port, protocol, output port (numbers decimal or 0x hex)
 * A bad line is one ArgError naming the file and the line.
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
