/**
 * Turns a heap notifier into eventfd writes. The data path notifies the way
 * the in-process pair does (Atomics.add + Atomics.notify on a u32 in the
 * heap, vhost-queue.ts's call, virtio-rxtx.ts's kick); over a socket the peer
 * waits on an eventfd instead, so the control thread waits on the counter
 * (Atomics.waitAsync: no timer, nothing on the lcores) and writes the eventfd
 * once per wake-up. Only peers that asked to be notified pay anything: a
 * polling peer suppresses notifications in its ring and the counter never moves.
 */
import type { Heap } from '../eal/heap.js';
import { eventfdWrite } from '../native/eventfd.js';

export class NotifyRelay {
  private stopped = false;
  private readonly index: number;

  /** Relays notifications of the u32 at heap byte `counter` to `fd` (which the caller keeps owning). */
  constructor(
    private readonly heap: Heap,
    counter: number,
    private readonly fd: number,
  ) {
    this.index = counter >>> 2;
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    const i32 = this.heap.i32;
    const w = Atomics.waitAsync(i32, this.index, Atomics.load(i32, this.index));
    if (w.async) void w.value.then(() => this.fire());
    else queueMicrotask(() => this.fire());
  }

  private fire(): void {
    if (this.stopped) return;
    eventfdWrite(this.fd);
    this.arm();
  }

  /** Stops relaying (the caller may close the fd right after). */
  stop(): void {
    this.stopped = true;
    Atomics.notify(this.heap.i32, this.index);
  }
}
