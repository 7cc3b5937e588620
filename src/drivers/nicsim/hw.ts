/**
 * net_nicsim's hardware: one thread per heap that plays the NIC's DMA engine
 * for every started nicsim port, as a multi-port adapter has one engine. It
 * walks each tx queue's posted descriptors, copies each packet into the next
 * rx buffer of the port at the cable's other end and writes the status bits
 * back (nicsimXmit in nicsim.as.ts, a wasm kernel; its twin in nicsim.twin.ts).
 *
 * The control plane and the thread talk through a device block in the heap:
 *   word 0 run (1 while the thread should run)   1 state (see ST_*)
 *        2 generation of the port table (bumped by the control plane)
 *        3 generation the thread has applied     4 sleeping  5 doorbell
 *        6 failed (the thread's loop threw)
 *   from word 16, per ethdev port: state, peer port, nb txq, nb rxq, then
 *        the tx and rx queue block offsets.
 * A port is stopped only once the thread has applied a table without it
 * (`detach` waits for that), so the driver may then free what its rings hold.
 * Idle, the thread sleeps on the doorbell; a driver rings it after posting
 * only when the thread said it sleeps (one load per burst otherwise).
 */
import { ArgError, DpkitError } from '../../errors.js';
import type { Datapath } from '../../eal/kernels.js';
import { startWorker } from '../../eal/spawn.js';
import { Heap, MAX_LCORES } from '../../eal/heap.js';
import { NICTXQ_W_HEAD, NICTXQ_W_PEER_RXQ, NICTXQ_W_TAIL } from './nicsim-layout.js';
import { nicsimOps } from './nicsim.twin.js';

/** Ports and queues per port the model serves (MAX_ETHPORTS; queues as a small NIC's VF). */
export const HW_MAX_PORTS = 32;
export const HW_MAX_QUEUES = 16;
/** The hardware thread's lcore id for its heap view: it never touches a mempool, so no cache is ever used. */
export const HW_LCORE = MAX_LCORES - 1;
/** Descriptors one queue may consume per pass, so one busy queue does not starve the others. */
export const HW_BUDGET = 256;

const D_RUN = 0;
const D_STATE = 1;
const D_GEN = 2;
const D_SEEN = 3;
const D_SLEEP = 4;
const D_BELL = 5;
const D_FAIL = 6;
const D_PORTS = 16;
const P_STATE = 0;
const P_PEER = 1;
const P_NB_TXQ = 2;
const P_NB_RXQ = 3;
const P_TXQ = 4;
const P_RXQ = P_TXQ + HW_MAX_QUEUES;
const PORT_WORDS = 48;
const DEVICE_BYTES = (D_PORTS + HW_MAX_PORTS * PORT_WORDS) * 4;

/** Thread states (0: none yet): started but not polling, polling, left its loop, told not to start. */
const ST_BOOTING = 1;
const ST_RUNNING = 2;
const ST_EXITED = 3;
const ST_CANCELLED = 4;

/** Empty passes before the thread sleeps on the doorbell, and how long one sleep lasts at most (ms). */
const IDLE_PASSES = 4096;
const SLEEP_MS = 1;
/** How long the control plane waits for the thread to let go of a port (ms). */
const QUIESCE_MS = 10_000;

/** The hardware thread died or did not answer: the model, not the caller, is broken. */
export class NicsimHwError extends DpkitError {
  constructor(message: string) {
    super('ENICSIM', message);
  }
}

/** What a started port hands the hardware: its cable's other end and its queue blocks. */
export interface HwPort {
  peer: number;
  txq: readonly number[];
  rxq: readonly number[];
}

const devices = new WeakMap<Heap, NicsimHw>();

/** The control plane's handle on the model's hardware thread for one heap. */
export class NicsimHw {
  private readonly i32: Int32Array;
  private readonly w: number;
  private failure: string | undefined;
  private cpu: number | undefined;
  private cpuBy = '';
  private readonly active = new Set<number>();

  private constructor(
    private readonly heap: Heap,
    readonly offset: number,
  ) {
    this.i32 = heap.i32;
    this.w = offset >>> 2;
  }

  /** The device of `heap`, made on first use. */
  static of(heap: Heap): NicsimHw {
    let hw = devices.get(heap);
    if (!hw) devices.set(heap, (hw = new NicsimHw(heap, heap.reserve(DEVICE_BYTES, 64, 'net_nicsim hardware'))));
    return hw;
  }

  /** Word index of the doorbell's sleeping flag and of the doorbell (drivers ring it from any thread). */
  get sleepWord(): number {
    return this.w + D_SLEEP;
  }

  /** Pins the hardware thread to `cpu` (hw_cpu=); every port that names one must name the same. */
  setCpu(dev: string, cpu: number): void {
    if (this.cpu !== undefined && this.cpu !== cpu) throw new ArgError(`${dev}: hw_cpu=${cpu}, but ${this.cpuBy} already put the model's hardware on CPU ${this.cpu} (one hardware thread serves every nicsim port)`);
    this.cpu = cpu;
    this.cpuBy = dev;
  }

  /** Where the hardware thread is: for diagnostics and tests. */
  get threadState(): 'none' | 'booting' | 'running' | 'exited' | 'cancelled' {
    return (['none', 'booting', 'running', 'exited', 'cancelled'] as const)[Atomics.load(this.i32, this.w + D_STATE)]!;
  }

  /** Hands a started port's queues to the hardware, starting its thread if it is not running. */
  attach(port: number, p: HwPort): void {
    if (port < 0 || port >= HW_MAX_PORTS) throw new ArgError(`net_nicsim: port ${port}: the model serves ports 0..${HW_MAX_PORTS - 1}`);
    const i32 = this.i32;
    const e = this.w + D_PORTS + port * PORT_WORDS;
    i32[e + P_PEER] = p.peer;
    i32[e + P_NB_TXQ] = p.txq.length;
    i32[e + P_NB_RXQ] = p.rxq.length;
    p.txq.forEach((b, q) => (i32[e + P_TXQ + q] = b));
    p.rxq.forEach((b, q) => (i32[e + P_RXQ + q] = b));
    Atomics.store(i32, e + P_STATE, 1);
    this.active.add(port);
    this.bump();
    this.ensureThread();
  }

  /**
   * Takes a port away from the hardware and returns once the thread no
   * longer touches its rings (or has exited); stops the thread when no port
   * is left. Throws NicsimHwError when the thread failed or did not answer.
   */
  detach(port: number): void {
    const i32 = this.i32;
    Atomics.store(i32, this.w + D_PORTS + port * PORT_WORDS + P_STATE, 0);
    this.active.delete(port);
    const gen = this.bump();
    if (Atomics.load(i32, this.w + D_STATE) === ST_RUNNING) {
      this.waitFor(() => Atomics.load(i32, this.w + D_SEEN) - gen >= 0, D_SEEN, `to let go of port ${port}`);
    }
    if (this.active.size === 0) this.stopThread();
    this.checkFailed();
  }

  private bump(): number {
    const gen = Atomics.add(this.i32, this.w + D_GEN, 1) + 1;
    this.ringBell();
    return gen;
  }

  private ringBell(): void {
    Atomics.add(this.i32, this.w + D_BELL, 1);
    Atomics.notify(this.i32, this.w + D_BELL);
  }

  private ensureThread(): void {
    const i32 = this.i32;
    const st = Atomics.load(i32, this.w + D_STATE);
    if (st === ST_BOOTING || st === ST_RUNNING) return;
    Atomics.store(i32, this.w + D_RUN, 1);
    Atomics.store(i32, this.w + D_FAIL, 0);
    Atomics.store(i32, this.w + D_STATE, ST_BOOTING);
    this.failure = undefined;
    const w = startWorker('hw-worker', import.meta.url, {
      workerData: { heap: this.heap.descriptor(), datapath: this.heap.datapath, device: this.offset, cpus: this.cpu === undefined ? undefined : [this.cpu] } satisfies HwJob,
    });
    w.on('error', (e: Error) => {
      this.failure ??= e.message;
      Atomics.store(i32, this.w + D_FAIL, 1);
      Atomics.store(i32, this.w + D_STATE, ST_EXITED);
      Atomics.notify(i32, this.w + D_STATE);
    });
    // The model must never keep a process alive: stopping the ports ends it, exiting the process too.
    w.unref();
  }

  private stopThread(): void {
    const i32 = this.i32;
    Atomics.store(i32, this.w + D_RUN, 0);
    this.ringBell();
    // Not polling yet: tell it never to start (it checks with the same compare-and-swap).
    if (Atomics.compareExchange(i32, this.w + D_STATE, ST_BOOTING, ST_CANCELLED) === ST_BOOTING) return;
    if (Atomics.load(i32, this.w + D_STATE) === ST_RUNNING) {
      this.waitFor(() => Atomics.load(i32, this.w + D_STATE) !== ST_RUNNING, D_STATE, 'to stop');
    }
  }

  /** Waits (blocking: a port stop is synchronous, as in DPDK) until `done`, bounded. */
  private waitFor(done: () => boolean, word: number, what: string): void {
    const i32 = this.i32;
    const until = performance.now() + QUIESCE_MS;
    while (!done()) {
      const st = Atomics.load(i32, this.w + D_STATE);
      if (st === ST_EXITED || st === ST_CANCELLED) return; // nothing polls any more
      if (performance.now() > until) throw new NicsimHwError(`net_nicsim: the hardware thread did not answer within ${QUIESCE_MS} ms ${what}`);
      Atomics.wait(i32, this.w + word, Atomics.load(i32, this.w + word), 5);
    }
  }

  private checkFailed(): void {
    if (Atomics.load(this.i32, this.w + D_FAIL) !== 0) {
      throw new NicsimHwError(`net_nicsim: the hardware thread failed${this.failure ? `: ${this.failure}` : ''}`);
    }
  }
}

/** What the hardware thread is started with. */
export interface HwJob {
  heap: ReturnType<Heap['descriptor']>;
  datapath: Datapath;
  device: number;
  cpus: number[] | undefined;
}

/**
 * The hardware thread's loop (run by hw-worker.ts): polls every tx queue of
 * every attached port until told to stop. Re-reads the port table when its
 * generation changes and acknowledges it.
 */
export function runHardware(heap: Heap, device: number): void {
  const i32 = heap.i32;
  const w = device >>> 2;
  if (Atomics.compareExchange(i32, w + D_STATE, ST_BOOTING, ST_RUNNING) !== ST_BOOTING) return; // cancelled before it began
  const ops = nicsimOps(heap);
  let txqs: number[] = [];
  let seen = -1;
  let idle = 0;
  try {
    for (;;) {
      if (Atomics.load(i32, w + D_RUN) === 0) break;
      const gen = Atomics.load(i32, w + D_GEN);
      if (gen !== seen) {
        txqs = readTable(i32, w);
        seen = gen;
        Atomics.store(i32, w + D_SEEN, gen);
        Atomics.notify(i32, w + D_SEEN);
      }
      let work = 0;
      for (let i = 0; i < txqs.length; i++) work += ops.xmit(txqs[i]!, HW_BUDGET);
      if (work !== 0) {
        idle = 0;
      } else if (++idle > IDLE_PASSES) {
        // Sleep until a driver rings; the bell's value is read before the last look for work, so no ring is lost.
        Atomics.store(i32, w + D_SLEEP, 1);
        const bell = Atomics.load(i32, w + D_BELL);
        let posted = false;
        for (let i = 0; i < txqs.length && !posted; i++) posted = Atomics.load(i32, (txqs[i]! >>> 2) + NICTXQ_W_TAIL) !== Atomics.load(i32, (txqs[i]! >>> 2) + NICTXQ_W_HEAD);
        if (!posted && Atomics.load(i32, w + D_GEN) === seen && Atomics.load(i32, w + D_RUN) !== 0) Atomics.wait(i32, w + D_BELL, bell, SLEEP_MS);
        Atomics.store(i32, w + D_SLEEP, 0);
        idle = 0;
      }
    }
  } catch (e) {
    Atomics.store(i32, w + D_FAIL, 1);
    throw e;
  } finally {
    Atomics.store(i32, w + D_STATE, ST_EXITED);
    Atomics.notify(i32, w + D_STATE);
  }
}

/**
 * Tx queue blocks of attached ports. Each block is told the rx queue block its
 * packets land in (its peer rx queue; 0: the other end is down), which only
 * this thread reads.
 */
function readTable(i32: Int32Array, w: number): number[] {
  const txqs: number[] = [];
  for (let p = 0; p < HW_MAX_PORTS; p++) {
    const e = w + D_PORTS + p * PORT_WORDS;
    if (Atomics.load(i32, e + P_STATE) === 0) continue;
    const peer = i32[e + P_PEER]!;
    const pe = w + D_PORTS + peer * PORT_WORDS;
    const peerUp = Atomics.load(i32, pe + P_STATE) !== 0 && i32[pe + P_NB_RXQ]! > 0;
    for (let q = 0; q < i32[e + P_NB_TXQ]!; q++) {
      const txq = i32[e + P_TXQ + q]! >>> 0;
      // Tx queue q of one end lands in rx queue q of the other (modulo its queue count).
      i32[(txq >>> 2) + NICTXQ_W_PEER_RXQ] = peerUp ? i32[pe + P_RXQ + (q % i32[pe + P_NB_RXQ]!)]! : 0;
      txqs.push(txq);
    }
  }
  return txqs;
}
