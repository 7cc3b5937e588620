/**
 * Generator streams as the command lines write them: `--size` and JSON
 * stream files, shared by `dpkit gen` and testpmd's gen forward mode.
 */
import { readFileSync } from 'node:fs';
import { ArgError } from '../errors.js';
import type { GenStreamSpec } from './generate.js';
import type { SizeSpec } from './stream.js';

/** `--size`: N, MIN-MAX or imix. @throws ArgError */
export function sizeOf(v: string | undefined, what = 'gen: --size'): SizeSpec | undefined {
  if (v === undefined) return undefined;
  if (v === 'imix') return 'imix';
  const m = /^(\d+)(?:-(\d+))?$/.exec(v);
  if (!m) throw new ArgError(`${what} ${v}: expected N, MIN-MAX or imix`);
  return m[2] === undefined ? Number(m[1]) : { min: Number(m[1]), max: Number(m[2]) };
}

/** The streams of a JSON file (an object or a list). @throws ArgError naming the file */
export function readStreams(file: string, what = 'gen: --stream'): GenStreamSpec[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ArgError(`${what} ${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ArgError(`${what} ${file}: not JSON: ${(e as Error).message}`);
  }
  const list = Array.isArray(v) ? v : [v];
  if (list.some((s) => typeof s !== 'object' || s === null || Array.isArray(s))) throw new ArgError(`${what} ${file}: a stream is an object`);
  return list as GenStreamSpec[];
}
