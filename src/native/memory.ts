/**
 * Shared memory a peer process maps, for vhost-user and memif:
 * a memfd, the heap's WebAssembly memory backed by a memfd (so a peer maps
 * dpkit's mbufs), and a peer's fd mapped into a window of that same memory (so
 * wasm kernels read and write the peer's buffers in place). Node can neither
 * create a memfd nor mmap at an address. docs/native.md has the why and the
 * address-space budget.
 *
 * What V8 does with a shared wasm memory (Node 20, x64), which makes this
 * safe: every wasm32 memory reserves 10 GiB of address space when it is made
 * (2 GiB guard, 4 GiB addressable, 4 GiB guard), whatever its maximum; only
 * the current length is readable and writable; `memory.grow` mprotects just
 * the new pages; a shared memory's backing store never moves. A mapping inside
 * the current length therefore survives growth, and every request outside it
 * is refused (it would open guard pages to out-of-bounds kernels).
 *
 * Thread-safety: any thread may call these, on any memory it holds; the shim
 * keeps one record of windows per memory, under a lock. Other threads reading
 * the range while it is remapped see the old pages or the new ones, never a hole.
 */
import { ArgError } from '../errors.js';
import { MapRefusedError, requireNative } from './native.js';

/** Where a peer's fd goes: `length` bytes from `fdOffset` of `fd`, at heap byte `offset`. */
export interface Window {
  /** Byte offset in the memory; a multiple of pageSize() (of the huge page size for hugetlbfs fds). */
  readonly offset: number;
  /** Bytes; a multiple of the page size, and offset + length within the memory's current length. */
  readonly length: number;
  /** The fd to map (a memfd, a hugetlbfs file, /dev/shm...). The caller keeps and closes it. */
  readonly fd: number;
  /** Offset in the fd; a multiple of the page size. Default 0. */
  readonly fdOffset?: number;
  /** Bytes of PROT_NONE guard pages on each side (whole pages, inside the memory, outside every other window). Default 0. */
  readonly guard?: number;
}

/** The granularity of mappings: the system page size (4096 on x86-64). */
export function pageSize(): number {
  return requireNative('mmap').pageSize;
}

/**
 * memfd_create(2): an anonymous file of `size` bytes that another process can
 * map once it has the fd (SCM_RIGHTS, or stdio inheritance). Close-on-exec.
 * With `sealSize`, the size is sealed (F_SEAL_SHRINK | F_SEAL_GROW): a peer
 * that holds the fd cannot shrink it under our mapping (which would SIGBUS).
 * @returns the fd; the caller owns it and closes it with closeFd.
 * @throws NativeError (memfd_create, ftruncate) naming `name`.
 */
export function memfdCreate(name: string, size: number, opts: { sealSize?: boolean } = {}): number {
  return requireNative(`memfd ${name}`).memfdCreate(name, size, opts.sealSize ?? false);
}

/** F_SEAL_SHRINK (fcntl(2)): the file can no longer be made smaller. */
export const F_SEAL_SHRINK = 0x0002;

/**
 * fcntl(F_GET_SEALS): the seals on `fd` (F_SEAL_SHRINK, ...), so a caller can
 * refuse a peer's file that could shrink under its mapping (SIGBUS).
 * @returns the seal bits, or -1 when the file takes no seals (not a memfd).
 * @throws NativeError when fcntl fails otherwise (EBADF).
 */
export function fdSeals(fd: number): number {
  return requireNative('memfd seals').fdSeals(fd);
}

/**
 * Backs `memory` with `fd`: copies the memory's current bytes into the fd
 * (skipping all-zero 64 KiB chunks, so untouched heap costs no pages), then
 * maps the fd MAP_SHARED|MAP_FIXED over the whole current length. From then
 * on a process that maps the fd sees the memory's bytes, and this memory sees
 * that process's writes. Made once, for the life of the memory (no undo). The
 * shim keeps its own dup of the fd to restore windows (unmapWindow); the
 * caller still owns `fd`, passes it to peers and closes it when done.
 *
 * Call it before other threads write to the memory: a write that lands
 * between the copy and the remap is lost. Growth after backing adds ordinary
 * (unshared) pages; the heap never grows.
 *
 * @throws MapRefusedError when the memory is not shared, already backed, has
 * windows, or `fd` is smaller than the memory; NativeError when fstat, mmap or mremap fails.
 */
export function backMemory(memory: WebAssembly.Memory, fd: number): void {
  requireNative('memfd-backed heap').backMemory(sharedBuffer(memory, 'backMemory'), fd);
  backing.set(memory, fd);
}

/** The memfd each memory was backed with, through backMemory (memfdMemoryProvider included). */
const backing = new WeakMap<WebAssembly.Memory, number>();

/** The fd `memory` was backed with (backMemory, memfdMemoryProvider), or undefined when it is not backed. */
export function backingFd(memory: WebAssembly.Memory): number | undefined {
  return backing.get(memory);
}

/**
 * Maps `w.length` bytes of `w.fd` (from `w.fdOffset`) MAP_SHARED|MAP_FIXED at
 * byte `w.offset` of `memory`, so every view of the memory (wasm kernels,
 * typed arrays, every worker's) reads and writes the peer's pages in place.
 * The caller reserves the range first (heap.reserve with pageSize() alignment)
 * so nothing else lives there; what was there is hidden until unmapWindow.
 * `fd` may be closed right after: the mapping keeps the file. While a window
 * is mapped the shim holds the memory's backing store, so its addresses are
 * never freed and reused under the mapping: unmap windows at teardown.
 *
 * `guard` (bytes, whole pages) makes that much of the heap on each side of
 * the window PROT_NONE until unmapWindow: a wasm kernel that strays past the
 * window traps (a RuntimeError) instead of reading or writing the heap. Only
 * wasm traps there; TypeScript touching a guard page crashes the process, so
 * TypeScript paths keep their bounds checks.
 *
 * A peer that can shrink the file under the mapping makes the next access
 * fault (SIGBUS): map only sealed fds (memfdCreate's sealSize) or peers you trust.
 *
 * @throws MapRefusedError (nothing changed) when a size or offset is not page
 * aligned, the window is empty, leaves the memory's current length or wasm32's
 * 4 GiB, overlaps a mapped window, or needs more bytes than the fd has;
 * NativeError when fstat or mmap fails (EBADF, EACCES for a read-only fd...).
 */
export function mapWindow(memory: WebAssembly.Memory, w: Window): void {
  const native = requireNative('mmap window');
  if (w.guard) native.mapWindow(sharedBuffer(memory, 'mapWindow'), w.offset, w.length, w.fd, w.fdOffset ?? 0, w.guard);
  else native.mapWindow(sharedBuffer(memory, 'mapWindow'), w.offset, w.length, w.fd, w.fdOffset ?? 0);
}

/**
 * Removes a window mapWindow made (the same offset and length): the range
 * reads as zeroes again, from the backing memfd when the memory is backed
 * (so peers see the zeroes too), else from anonymous pages.
 * @throws MapRefusedError when no such window is mapped in this memory.
 */
export function unmapWindow(memory: WebAssembly.Memory, w: Pick<Window, 'offset' | 'length'>): void {
  requireNative('mmap window').unmapWindow(sharedBuffer(memory, 'unmapWindow'), w.offset, w.length);
}

/**
 * A heap's memory backed by a memfd: what `Heap.create({ provider })` takes
 * (eal's MemoryProvider, structurally: the shim sits below EAL and names none of it),
 * plus the fd to hand a peer.
 */
export interface MemfdMemory {
  readonly buffer: SharedArrayBuffer;
  readonly memory: WebAssembly.Memory;
  /** The memfd behind the memory; the process keeps it for the heap's life. */
  readonly fd: number;
}

/**
 * The heap's memory backed by a fresh memfd (sealed size) named `name`: pass
 * it as Heap.create's `provider`, and `fd` to peers. Never grows.
 * @throws NativeUnavailableError without the shim; ArgError for a bad size.
 */
export function memfdMemoryProvider(size: number, name = 'dpkit-heap'): MemfdMemory {
  const WASM_PAGE = 65536;
  if (!(size > 0) || size > 65536 * WASM_PAGE) throw new ArgError(`memfd heap ${name}: size ${size} must be between 1 and 4 GiB`);
  const pages = Math.ceil(size / WASM_PAGE);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const fd = memfdCreate(name, pages * WASM_PAGE, { sealSize: true });
  try {
    backMemory(memory, fd);
  } catch (e) {
    requireNative(name).close(fd);
    throw e;
  }
  return { memory, buffer: memory.buffer as unknown as SharedArrayBuffer, fd };
}

function sharedBuffer(memory: WebAssembly.Memory, what: string): SharedArrayBuffer {
  const buffer = memory.buffer as ArrayBuffer | SharedArrayBuffer;
  // A non-shared memory may move when it grows, taking the mapping's address with it.
  if (!(buffer instanceof SharedArrayBuffer)) throw new MapRefusedError('EINVAL', `${what}: the memory is not shared (make it with shared: true)`);
  return buffer;
}
