// A worker for memory.test.ts: reads a window of the shared memory it was
// given (no mapping of its own) with wasm and a typed array, then writes to it.
import { parentPort, workerData } from 'node:worker_threads';
import { peekPoke } from './util.js';

const { memory, offset, length, reply } = workerData as { memory: WebAssembly.Memory; offset: number; length: number; reply: string };
const k = peekPoke(memory);
const u8 = new Uint8Array(memory.buffer, offset, length);
let wasm = '';
let typed = '';
for (let i = 0; i < length && u8[i] !== 0; i++) {
  wasm += String.fromCharCode(k.load(offset + i));
  typed += String.fromCharCode(u8[i]!);
}
for (let i = 0; i < reply.length; i++) k.store(offset + 1024 + i, reply.charCodeAt(i));
parentPort!.postMessage({ wasm, typed });
