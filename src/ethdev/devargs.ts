/**
 * DPDK devargs: `net_null0,size=64,copy=1`. The name is the driver name plus
 * an instance suffix; keys are driver-specific and checked by the driver's
 * spec, so a misspelled key fails with its name instead of being ignored.
 */
import { ArgError } from '../errors.js';

export interface Devargs {
  /** The device name, e.g. net_null0. */
  name: string;
  /** The driver it selects, e.g. net_null. */
  driver: string;
  /** key → value, in order; a repeated key keeps every value in `all`. */
  args: Map<string, string>;
  all: [string, string][];
}

export function parseDevargs(text: string, drivers: readonly string[]): Devargs {
  const parts = text.split(',');
  const name = parts[0]!.trim();
  if (!name) throw new ArgError(`--vdev '${text}': missing device name`);
  // Longest driver name that prefixes the device name (net_null0 → net_null).
  const driver = [...drivers].sort((a, b) => b.length - a.length).find((d) => name.startsWith(d));
  if (!driver) throw new ArgError(`--vdev ${name}: unknown driver (known: ${[...drivers].sort().join(', ')})`);
  const args = new Map<string, string>();
  const all: [string, string][] = [];
  for (const p of parts.slice(1)) {
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq <= 0) throw new ArgError(`--vdev ${name}: '${p}' is not key=value`);
    const k = p.slice(0, eq).trim();
    const v = p.slice(eq + 1).trim();
    args.set(k, v);
    all.push([k, v]);
  }
  return { name, driver, args, all };
}

/** Reads an integer devarg in [min, max], or `dflt` when absent. */
export function intArg(dev: string, args: Map<string, string>, key: string, dflt: number, min: number, max: number): number {
  const v = args.get(key);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (v === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new ArgError(`${dev}: ${key}=${v}: expected an integer in [${min}, ${max}]`);
  }
  return n;
}

/** Reads a 0/1 flag devarg. */
export function boolArg(dev: string, args: Map<string, string>, key: string): boolean {
  return intArg(dev, args, key, 0, 0, 1) === 1;
}
