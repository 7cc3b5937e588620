import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { startWorker } from '../../src/eal/spawn.js';
import { Heap } from '../../src/eal/heap.js';
import { backMemory, mapWindow, memfdCreate, memfdMemoryProvider, pageSize, unmapWindow } from '../../src/native/memory.js';
import { MapRefusedError, NativeError } from '../../src/native/native.js';
import { closeFd } from '../../src/native/watch.js';
import { joinWorkers } from '../helpers.js';
import { noShim, openFds, peekPoke } from './util.js';

const PAGE = 65536;
const CHILD = fileURLToPath(new URL('./peer.child.ts', import.meta.url));

function sharedMemory(pages: number, maximum = pages): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: pages, maximum, shared: true });
}

/** A memfd of `size` bytes holding `text` at `at`: a peer's region. */
function peerRegion(size: number, text = '', at = 0): number {
  const fd = memfdCreate('peer-region', size);
  if (text) writeSync(fd, Buffer.from(text), 0, text.length, at);
  return fd;
}

function fileText(fd: number, at: number, length: number): string {
  const b = Buffer.alloc(length);
  readSync(fd, b, 0, length, at);
  return b.toString('latin1');
}

function memText(memory: WebAssembly.Memory, at: number, length: number): string {
  return Buffer.from(new Uint8Array(memory.buffer, at, length)).toString('latin1');
}

describe('memfd and a memory backed by one', { skip: noShim }, () => {
  it('memfdCreate makes a file of the size asked; sealSize forbids resizing it', () => {
    const sealed = memfdCreate('sealed', 3 * 4096, { sealSize: true });
    const open = memfdCreate('open', 4096);
    assert.equal(fstatSync(sealed).size, 3 * 4096);
    assert.throws(() => ftruncateSync(sealed, 4096), { code: 'EPERM' });
    assert.throws(() => ftruncateSync(sealed, 8 * 4096), { code: 'EPERM' });
    ftruncateSync(open, 8192);
    assert.equal(fstatSync(open).size, 8192);
    closeFd(sealed);
    closeFd(open);
  });

  it('backMemory copies what the memory held into the fd, then both see every write', () => {
    const memory = sharedMemory(16);
    const u8 = new Uint8Array(memory.buffer);
    u8.set(Buffer.from('first page'), 0);
    u8.set(Buffer.from('middle'), 500_000);
    const fd = memfdCreate('backing', memory.buffer.byteLength, { sealSize: true });
    writeSync(fd, Buffer.from('stale bytes the copy must clear'), 0, 31, 200_000);
    backMemory(memory, fd);
    assert.equal(memText(memory, 0, 10), 'first page');
    assert.equal(fileText(fd, 500_000, 6), 'middle');
    assert.equal(fileText(fd, 200_000, 31), '\0'.repeat(31));
    u8.set(Buffer.from('from the heap'), 70_000);
    assert.equal(fileText(fd, 70_000, 13), 'from the heap');
    writeSync(fd, Buffer.from('from the fd'), 0, 11, 900_000);
    assert.equal(memText(memory, 900_000, 11), 'from the fd');
    assert.equal(peekPoke(memory).load(900_000), 'f'.charCodeAt(0));
    closeFd(fd);
  });

  it("a heap on a memfd is shared with a child process that maps the fd: it reads dpkit's bytes and dpkit reads its reply", () => {
    const size = 4 << 20;
    const provider = memfdMemoryProvider(size, 'dpkit-test-heap');
    const heap = Heap.create({ size, provider });
    const zone = heap.reserve(2 * 4096, pageSize(), 'peer zone');
    heap.u8.set(Buffer.from('written by dpkit'), zone);
    const job = { length: size, readAt: zone, readLength: 16, writeAt: zone + 4096, reply: 'written by the peer' };
    const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'pipe', provider.fd],
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { read: 'written by dpkit' });
    assert.equal(Buffer.from(heap.u8.subarray(zone + 4096, zone + 4096 + 19)).toString(), 'written by the peer');
    Heap.attach(heap.descriptor(), 1); // the header survived backing
    closeFd(provider.fd);
  });

  it('refuses to back a memory twice, a memory with windows, a non-shared memory, or one larger than the fd', () => {
    const before = openFds();
    const memory = sharedMemory(2);
    const fd = memfdCreate('backing', 2 * PAGE);
    const small = memfdCreate('small', PAGE);
    assert.throws(() => backMemory(memory, small), (e) => e instanceof MapRefusedError && /small|is 65536 bytes; the memory needs 131072/.test(e.message));
    assert.throws(() => backMemory(new WebAssembly.Memory({ initial: 1 }), fd), (e) => e instanceof MapRefusedError && /not shared/.test(e.message));
    assert.throws(() => backMemory(memory, 12345), (e) => e instanceof NativeError && e.code === 'EBADF' && e.syscall === 'fstat');
    mapWindow(memory, { offset: 0, length: 4096, fd: small });
    assert.throws(() => backMemory(memory, fd), (e) => e instanceof MapRefusedError && e.code === 'EBUSY' && /windows/.test(e.message));
    unmapWindow(memory, { offset: 0, length: 4096 });
    backMemory(memory, fd);
    assert.throws(() => backMemory(memory, fd), (e) => e instanceof MapRefusedError && /already backed/.test(e.message));
    closeFd(fd);
    closeFd(small);
    // The shim keeps one dup of the backing fd for the memory's life: that one is expected.
    assert.equal(openFds().length, before.length + 1);
  });
});

describe("windows: a peer's fd mapped into the memory", { skip: noShim }, () => {
  it("shows the peer's file to typed arrays and to wasm, and their writes go to the file", () => {
    const memory = sharedMemory(8);
    const fd = peerRegion(2 * PAGE, 'guest buffer', 4096 + 100);
    mapWindow(memory, { offset: 3 * PAGE, length: PAGE, fd, fdOffset: 4096 });
    assert.equal(memText(memory, 3 * PAGE + 100, 12), 'guest buffer');
    const k = peekPoke(memory);
    assert.equal(k.load(3 * PAGE + 100), 'g'.charCodeAt(0));
    k.store(3 * PAGE + 200, 'W'.charCodeAt(0));
    new Uint8Array(memory.buffer)[3 * PAGE + 201] = 'T'.charCodeAt(0);
    assert.equal(fileText(fd, 4096 + 200, 2), 'WT');
    assert.equal(fileText(fd, 200, 2), '\0\0', 'fdOffset: the window starts 4096 bytes into the file');
    unmapWindow(memory, { offset: 3 * PAGE, length: PAGE });
    closeFd(fd);
  });

  it('a worker sees the window through the same SharedArrayBuffer, and its writes reach the file', async () => {
    const memory = sharedMemory(4);
    const fd = peerRegion(PAGE, 'seen by the worker');
    mapWindow(memory, { offset: 2 * PAGE, length: PAGE, fd });
    const [seen] = await joinWorkers<{ wasm: string; typed: string }>([
      startWorker('window.worker', import.meta.url, { workerData: { memory, offset: 2 * PAGE, length: PAGE, reply: 'worker wrote' } }),
    ]);
    assert.deepEqual(seen, { wasm: 'seen by the worker', typed: 'seen by the worker' });
    assert.equal(fileText(fd, 1024, 12), 'worker wrote');
    unmapWindow(memory, { offset: 2 * PAGE, length: PAGE });
    closeFd(fd);
  });

  it('survives memory.grow (V8 mprotects only the new pages; the memory never moves), and the grown part takes windows', () => {
    const memory = sharedMemory(2, 16);
    const fd = peerRegion(2 * PAGE);
    mapWindow(memory, { offset: PAGE, length: PAGE, fd });
    assert.throws(() => mapWindow(memory, { offset: 2 * PAGE, length: PAGE, fd, fdOffset: PAGE }), MapRefusedError);
    memory.grow(6);
    new Uint8Array(memory.buffer)[PAGE + 5] = 0x5a;
    assert.equal(fileText(fd, 5, 1), 'Z');
    mapWindow(memory, { offset: 6 * PAGE, length: PAGE, fd, fdOffset: PAGE });
    writeSync(fd, Buffer.from('late'), 0, 4, PAGE + 8);
    assert.equal(memText(memory, 6 * PAGE + 8, 4), 'late');
    unmapWindow(memory, { offset: PAGE, length: PAGE });
    unmapWindow(memory, { offset: 6 * PAGE, length: PAGE });
    closeFd(fd);
  });

  it('unmapWindow leaves zero pages: anonymous ones, or the backing memfd (zeroed) when the memory is backed', () => {
    const plain = sharedMemory(2);
    const fd = peerRegion(PAGE, 'peer bytes');
    mapWindow(plain, { offset: PAGE, length: PAGE, fd });
    unmapWindow(plain, { offset: PAGE, length: PAGE });
    assert.equal(memText(plain, PAGE, 10), '\0'.repeat(10));
    assert.equal(fileText(fd, 0, 10), 'peer bytes', "the peer's file is untouched");

    const backed = sharedMemory(2);
    new Uint8Array(backed.buffer).set(Buffer.from('heap bytes'), PAGE);
    const heapFd = memfdCreate('heap', 2 * PAGE, { sealSize: true });
    backMemory(backed, heapFd);
    mapWindow(backed, { offset: PAGE, length: PAGE, fd });
    assert.equal(memText(backed, PAGE, 10), 'peer bytes');
    unmapWindow(backed, { offset: PAGE, length: PAGE });
    assert.equal(memText(backed, PAGE, 10), '\0'.repeat(10));
    new Uint8Array(backed.buffer)[PAGE] = 0x21;
    assert.equal(fileText(heapFd, PAGE, 1), '!', 'the range is the backing memfd again, so peers of the heap see it');
    closeFd(fd);
    closeFd(heapFd);
  });

  it('refuses unsafe windows with MapRefusedError, changing nothing and leaking no fd', () => {
    const memory = sharedMemory(4);
    const fd = peerRegion(2 * PAGE);
    mapWindow(memory, { offset: PAGE, length: PAGE, fd });
    new Uint8Array(memory.buffer)[3 * PAGE] = 7;
    const before = openFds();
    const refused: [string, Parameters<typeof mapWindow>[1], RegExp][] = [
      ['misaligned offset', { offset: 100, length: 4096, fd }, /multiples of 4096/],
      ['misaligned length', { offset: 0, length: 100, fd }, /multiples of 4096/],
      ['misaligned fd offset', { offset: 0, length: 4096, fd, fdOffset: 10 }, /fd offset 0xa/],
      ['empty', { offset: 0, length: 0, fd }, /length is 0/],
      ['past the memory', { offset: 3 * PAGE, length: 2 * PAGE, fd }, /past the memory's current 262144 bytes/],
      ['past 4 GiB', { offset: 2 ** 32 - 4096, length: 8192, fd }, /past wasm32's 4 GiB/],
      ['overlapping', { offset: PAGE + 4096, length: PAGE, fd }, /overlaps the mapped window \[0x10000, 0x20000\)/],
      ['larger than the fd', { offset: 2 * PAGE, length: 2 * PAGE, fd, fdOffset: 4096 }, /is 131072 bytes, the window needs 135168/],
      ['past the fd', { offset: 2 * PAGE, length: PAGE, fd, fdOffset: 2 * PAGE }, /is 131072 bytes, the window needs 196608/],
    ];
    for (const [what, w, message] of refused) {
      assert.throws(() => mapWindow(memory, w), (e) => e instanceof MapRefusedError && message.test(e.message), what);
    }
    assert.throws(() => unmapWindow(memory, { offset: PAGE, length: 4096 }), (e) => e instanceof MapRefusedError && /no window/.test(e.message));
    assert.throws(() => mapWindow(new WebAssembly.Memory({ initial: 1 }), { offset: 0, length: 4096, fd }), /not shared/);
    assert.deepEqual(openFds(), before);
    assert.equal(new Uint8Array(memory.buffer)[3 * PAGE], 7, 'the memory is as it was');
    unmapWindow(memory, { offset: PAGE, length: PAGE });
    closeFd(fd);
  });

  it('reports a bad fd or one that cannot be mapped writable as NativeError, leaving the range as it was', () => {
    const memory = sharedMemory(2);
    const fd = peerRegion(PAGE);
    const readOnly = openSync(`/proc/self/fd/${fd}`, 'r');
    new Uint8Array(memory.buffer)[PAGE + 1] = 9;
    const before = openFds();
    assert.throws(() => mapWindow(memory, { offset: PAGE, length: PAGE, fd: 987_654 }), (e) => e instanceof NativeError && e.code === 'EBADF' && e.what === 'fd 987654');
    assert.throws(() => mapWindow(memory, { offset: PAGE, length: PAGE, fd: readOnly }), (e) => e instanceof NativeError && e.code === 'EACCES' && e.syscall === 'mmap');
    assert.deepEqual(openFds(), before);
    assert.equal(new Uint8Array(memory.buffer)[PAGE + 1], 9);
    mapWindow(memory, { offset: PAGE, length: PAGE, fd }); // the failed attempts left no record behind
    unmapWindow(memory, { offset: PAGE, length: PAGE });
    closeSync(readOnly);
    closeFd(fd);
  });
});
