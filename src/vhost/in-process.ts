/**
 * The in-process vhost-user transport: a backend "listens" on a socket path
 * within one heap (one dpkit process) and a frontend connects to it by that
 * path; a request is a function call. A path with both ends in one heap pairs
 * here, with no socket (and no native shim); any other goes over the unix
 * socket (socket-backend.ts, socket-frontend.ts).
 */
import { ArgError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import type { Backend, Channel, VhostUserMsg, VhostUserReply } from './protocol.js';

const listening = new WeakMap<Heap, Map<string, Backend>>();
/** Paths a frontend of this heap will connect to (virtio_user's path): their backend needs no socket. */
const wanted = new WeakMap<Heap, Set<string>>();

/** A frontend in this heap will connect to `path` (called when the port is created). */
export function claimPath(heap: Heap, path: string): void {
  let paths = wanted.get(heap);
  if (!paths) wanted.set(heap, (paths = new Set()));
  paths.add(path);
}

export function unclaimPath(heap: Heap, path: string): void {
  wanted.get(heap)?.delete(path);
}

/** Whether a frontend of this heap connects to `path`: its backend pairs in process. */
export function pathClaimed(heap: Heap, path: string): boolean {
  return wanted.get(heap)?.has(path) ?? false;
}

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
