/**
 * The in-process vhost-user transport: a backend "listens" on a socket path
 * within one heap (one dpkit process) and a frontend connects to it by that
 * path; a request is a function call. The unix-socket transport will
 * implement the same Channel over the wire.
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import type { Backend, Channel, VhostUserMsg, VhostUserReply } from './protocol.js';

const listening = new WeakMap<Heap, Map<string, Backend>>();

/** Makes `backend` reachable at `path` (net_vhost's iface). */
export function listen(heap: Heap, path: string, backend: Backend, who: string): void {
  let byPath = listening.get(heap);
  if (!byPath) listening.set(heap, (byPath = new Map()));
  if (byPath.has(path)) throw new ArgError(`${who}: iface=${path}: another vhost device already listens there`);
  byPath.set(path, backend);
}

export function unlisten(heap: Heap, path: string): void {
  listening.get(heap)?.delete(path);
}

/** Connects to the backend at `path`, or null when none listens there. */
export function connect(heap: Heap, path: string): Channel | null {
  const backend = listening.get(heap)?.get(path);
  if (!backend) return null;
  let open = true;
  return {
    request(msg: VhostUserMsg): VhostUserReply {
      if (!open) throw new ArgError(`vhost-user ${path}: channel closed`);
      return backend.handle(msg);
    },
    close(): void {
      if (open) backend.disconnect();
      open = false;
    },
  };
}
