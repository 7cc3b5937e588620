/**
 * The heap as memory a vhost-user backend in another process can map: what
 * virtio_user sends as its one region of SET_MEM_TABLE (the rings and every
 * mbuf are in it, at the guest-physical address GPA_BASE + heap offset).
 *
 * Why back the heap here, when the port first connects, and not by a flag
 * read before Heap.create: it needs no change to whoever creates the heap
 * (testpmd, a test, a user program), and it is just as safe. backMemory
 * copies the heap into a memfd and remaps it in place, which is correct
 * while no other thread writes; a port is configured before lcores forward on
 * it. A heap made with memfdMemoryProvider is already backed and is used as is.
 * The fd lives as long as the heap: peers that reconnect get it again.
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { backMemory, backingFd, memfdCreate } from '../native/memory.js';
import { closeFd } from '../native/watch.js';

/** The memfd behind `heap`'s memory, backing it first when it is not yet. @throws NativeUnavailableError without the shim. */
export function sharedHeapFd(heap: Heap, who: string): number {
  const memory = heap.memory;
  if (!memory) throw new ArgError(`${who}: the heap has no WebAssembly memory to share with a vhost-user backend`);
  const have = backingFd(memory);
  if (have !== undefined) return have;
  const fd = memfdCreate('dpkit-heap', heap.size, { sealSize: true });
  try {
    backMemory(memory, fd);
  } catch (e) {
    closeFd(fd);
    throw e;
  }
  return fd;
}
