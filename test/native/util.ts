// What the native shim's tests share: the skip reason, an fd count, and a
// tiny wasm module that loads and stores bytes of a shared memory, standing in
// for a kernel reading a peer's buffers in place.
import { readdirSync } from 'node:fs';
import { nativeUnavailable } from '../../src/native/native.js';

/** false when the shim is loaded, else why the test is skipped. */
export const noShim: string | false = nativeUnavailable() ? `native shim ${nativeUnavailable()}` : false;

/** This process's open fds, by number. Synchronous, so nothing else opens or closes one meanwhile. */
export function openFds(): string[] {
  return readdirSync('/proc/self/fd').sort();
}

export interface PeekPoke {
  load(offset: number): number;
  store(offset: number, byte: number): void;
}

// (module (import "m" "mem" (memory 0 65536 shared))
//   (func (export "load") (param i32) (result i32) local.get 0 i32.load8_u)
//   (func (export "store") (param i32 i32) local.get 0 local.get 1 i32.store8))
const PEEK_POKE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x0b, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00,
  0x02, 0x0d, 0x01, 0x01, 0x6d, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x03, 0x00, 0x80, 0x80, 0x04,
  0x03, 0x03, 0x02, 0x00, 0x01,
  0x07, 0x10, 0x02, 0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x00, 0x05, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x00, 0x01,
  0x0a, 0x13, 0x02, 0x07, 0x00, 0x20, 0x00, 0x2d, 0x00, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x3a, 0x00, 0x00, 0x0b,
]);

/** Byte loads and stores in wasm over `memory`: what a kernel sees. */
export function peekPoke(memory: WebAssembly.Memory): PeekPoke {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(PEEK_POKE), { m: { mem: memory } });
  return instance.exports as unknown as PeekPoke;
}
