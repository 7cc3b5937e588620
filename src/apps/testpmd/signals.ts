/**
 * The signals that end a non-interactive testpmd, as DPDK's do, caught from
 * the moment testpmd starts so that none falls between start-up and forwarding:
 *
 * - SIGINT and SIGTERM: "Signal N received, preparing to exit...", forwarding
 *   stops, the final statistics print, every resource is released, exit 0
 *   (DPDK's testpmd exits 0 on both).
 * - SIGHUP (a closed terminal): DPDK's testpmd dies of it (status 129) and
 *   prints nothing; dpkit stops the same way as for SIGINT, so the statistics
 *   and the cleanup happen, and then exits 129, the status a script expects.
 * - A second signal while stopping: the stop is not waited for; exit at once
 *   with 128 + N.
 */
import { constants } from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** A stop signal after the run has ended: its status is already decided. */
const ignore = (): void => {};

export class StopSignals {
  /** The first signal received, or null. */
  received: StopSignal | null = null;
  private waiters: ((line: string) => void)[] = [];
  private readonly handler = (sig: StopSignal) => this.onSignal(sig);

  /** @param exit what a second signal calls (process.exit; a test passes its own). */
  constructor(private readonly exit: (code: number) => void = (code) => process.exit(code)) {
    for (const s of STOP_SIGNALS) process.on(s, this.handler);
  }

  /** DPDK's line for the first signal. */
  get line(): string {
    return this.received === null ? '' : `\nSignal ${constants.signals[this.received]} received, preparing to exit...`;
  }

  /** Resolves with DPDK's line once a signal has come (at once if one already has). */
  next(): Promise<string> {
    return new Promise((resolve) => (this.received !== null ? resolve(this.line) : this.waiters.push(resolve)));
  }

  /** The exit status the run ends with: 0 unless SIGHUP stopped it (129, as DPDK's testpmd dies of it). */
  exitCode(normal = 0): number {
    return this.received === 'SIGHUP' ? 128 + constants.signals.SIGHUP : normal;
  }

  /**
   * Stops acting on signals: the run is over and its caller exits with its status next
   * (cli/main.ts). One that comes after is ignored rather than left to Node's default, which
   * would kill a run that finished cleanly: removing the last listener gives the signal its
   * default disposition at once, so the ignoring listener goes on before this one comes off.
   */
  release(): void {
    for (const s of STOP_SIGNALS) {
      process.on(s, ignore);
      process.off(s, this.handler);
    }
    this.waiters = [];
  }

  private onSignal(sig: StopSignal): void {
    const n = constants.signals[sig];
    if (this.received !== null) {
      process.stderr.write(`\nSignal ${n} received while stopping; exiting now\n`);
      this.exit(128 + n);
      return;
    }
    this.received = sig;
    for (const w of this.waiters.splice(0)) w(this.line);
  }
}
