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

  /**
   * Relays notifications of the u32 at heap byte `counter` to `fd` (which
   * the caller keeps owning); `write` writes the eventfd (a test's stand-in).
   */
  constructor(
    private readonly heap: Heap,
    counter: number,
    private readonly fd: number,
    private readonly write: (fd: number) => void = eventfdWrite,
  ) {
    this.index = counter >>> 2;
    this.arm(Atomics.load(heap.i32, this.index));
  }

  /** Waits for the counter to leave `seen`: at once when it already has. */
  private arm(seen: number): void {
    if (this.stopped) return;
    const w = Atomics.waitAsync(this.heap.i32, this.index, seen);
    if (w.async) void w.value.then(() => this.fire());
    else queueMicrotask(() => this.fire());
  }

  /**
   * One eventfd write for every notification up to the counter as read
   * before the write. Read after it, a notification that came while it was
   * written would be taken as relayed and lost: its used entries published
   * after the peer had handled the write, and no interrupt to find them (a
   * Linux guest's ping then waited a second for the next packet's).
   */
  private fire(): void {
    if (this.stopped) return;
    const seen = Atomics.load(this.heap.i32, this.index);
    this.write(this.fd);
    this.arm(seen);
  }

  /** Stops relaying (the caller may close the fd right after). */
  stop(): void {
    this.stopped = true;
    Atomics.notify(this.heap.i32, this.index);
  }
}
