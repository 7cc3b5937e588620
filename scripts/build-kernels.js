#!/usr/bin/env node
// Writes the layout constants every record declares (scripts/gen-layouts.ts),
// then compiles the WebAssembly kernels (src/kernels/as/*.ts, AssemblyScript)
// to build/kernels/*.wasm. Kernels import the heap's shared memory, so they must
// carry no data segment: every instance (one per worker) would write it into
// the shared heap again. The build fails if one appears.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, readdirSync } from 'node:fs';

const SRC = 'src/kernels/as';
const OUT = 'build/kernels';
// Entry points: one wasm module each. layout.ts is shared by all.
const KERNELS = ['mbuf', 'fwd', 'vhost', 'nicsim'];
const FLAGS = ['-O3', '--noAssert', '--runtime', 'stub', '--importMemory', '--sharedMemory', '--initialMemory', '1', '--maximumMemory', '65536', '--enable', 'threads,simd'];

function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

/** Ids of the sections of a wasm binary; 11 is the data section. */
function sections(bytes) {
  const ids = [];
  let p = 8;
  while (p < bytes.length) {
    const id = bytes[p++];
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[p++];
      size |= (b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    ids.push(id);
    p += size;
  }
  return ids;
}

// Layout constants from every *.record.ts (rewritten only when they change).
execFileSync(process.execPath, ['--import', 'tsx', 'scripts/gen-layouts.ts'], { stdio: 'inherit' });
mkdirSync(OUT, { recursive: true });
const newestSource = Math.max(...readdirSync(SRC).map((f) => mtime(`${SRC}/${f}`)), mtime('scripts/build-kernels.js'));
const force = process.argv.includes('--force');
for (const k of KERNELS) {
  const out = `${OUT}/${k}.wasm`;
  if (!force && mtime(out) > newestSource) continue;
  execFileSync(process.execPath, ['node_modules/assemblyscript/bin/asc.js', `${SRC}/${k}.ts`, '--outFile', out, ...FLAGS], { stdio: 'inherit' });
  if (sections(readFileSync(out)).includes(11)) {
    console.error(`build-kernels: ${out} has a data section; a kernel must not write static data into the shared heap`);
    process.exit(1);
  }
  console.log(`build-kernels: ${out}`);
}
