#!/usr/bin/env node
// Prints the x86-64 code V8's optimizing compiler (TurboFan) makes of one
// kernel of build/kernels/dpkit.wasm: what a lcore runs per burst. Reading it
// is how the macswap kernels' per-packet tests and rebuilt constants were found
// (docs/macswap-study.md, "The loop as V8 compiles it"): V8 moves no test or
// constant out of a loop, so what a kernel leaves in one it pays per packet.
//
//   node scripts/kernel-code.js NAME      the code of the exported kernel NAME
//   node scripts/kernel-code.js --list    the exported kernels
//
// Node's release build carries V8's disassembler: the child compiles the module
// with --no-liftoff and --no-wasm-lazy-compilation (every function straight
// to TurboFan, at once) and --print-wasm-code.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { exportedFunctions } from './wasm-exports.js';

const WASM = 'build/kernels/dpkit.wasm';

const arg = process.argv[2];
if (arg === undefined || arg === '-h' || arg === '--help') {
  console.log('usage: node scripts/kernel-code.js NAME | --list   (after npm run build)');
  process.exit(arg === undefined ? 2 : 0);
}
let bytes;
try {
  bytes = readFileSync(WASM);
} catch {
  console.error(`kernel-code: no ${WASM}: run npm run build first`);
  process.exit(1);
}
const fns = exportedFunctions(bytes);
if (arg === '--list') {
  console.log([...fns.keys()].sort().join('\n'));
  process.exit(0);
}
if (process.argv[3] === '--child') {
  // The child: compile and instantiate; V8 prints every function as it compiles it.
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true });
  new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
  process.exit(0);
}
const index = fns.get(arg);
if (index === undefined) {
  console.error(`kernel-code: ${WASM} exports no kernel ${arg} (--list names them)`);
  process.exit(1);
}
const out = execFileSync(process.execPath, ['--no-liftoff', '--no-wasm-lazy-compilation', '--print-wasm-code', fileURLToPath(import.meta.url), arg, '--child'], {
  encoding: 'utf8',
  maxBuffer: 1 << 30,
});
// Blocks run from "--- WebAssembly code ---" to "--- End code ---"; ours names wasm-function[index].
const blocks = out.split('--- WebAssembly code ---');
const mine = blocks.find((blk) => blk.includes(`name: wasm-function[${index}]\n`) && blk.includes('compiler: TurboFan'));
if (mine === undefined) {
  console.error(`kernel-code: V8 printed no TurboFan code for ${arg} (wasm-function[${index}])`);
  process.exit(1);
}
process.stdout.write(`${arg} (wasm-function[${index}])\n` + mine.slice(0, mine.indexOf('--- End code ---')));
