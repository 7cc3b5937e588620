// A peer process for memory.test.ts, as a vhost-user or memif peer would be:
// it maps the memfd it inherited as fd 3 into a window of its own wasm memory
// (at another offset than the parent's), prints what its wasm reads there and
// writes a reply with wasm stores.
import { mapWindow, unmapWindow } from '../../src/native/memory.js';
import { closeFd } from '../../src/native/watch.js';
import { peekPoke } from './util.js';

const { length, readAt, readLength, writeAt, reply } = JSON.parse(process.argv[2]!) as {
  length: number;
  readAt: number;
  readLength: number;
  writeAt: number;
  reply: string;
};
const WINDOW = 3 * 65536;
const pages = WINDOW / 65536 + Math.ceil(length / 65536);
const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
mapWindow(memory, { offset: WINDOW, length, fd: 3 });
closeFd(3); // the mapping keeps the file
const k = peekPoke(memory);
let read = '';
for (let i = 0; i < readLength; i++) read += String.fromCharCode(k.load(WINDOW + readAt + i));
for (let i = 0; i < reply.length; i++) k.store(WINDOW + writeAt + i, reply.charCodeAt(i));
unmapWindow(memory, { offset: WINDOW, length });
process.stdout.write(JSON.stringify({ read }));
