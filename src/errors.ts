/**
 * Typed errors. Every error names what was wrong and where, so a caller can
 * tell a bad argument (fix the command line) from a broken invariant (a bug)
 * from a misbehaving peer (log and go on).
 */

/** Base class: `code` is stable for scripts, `message` is for people. */
export class DpkitError extends Error {
  constructor(
    /** Stable for scripts, errno-like: `EINVAL`, `ENOMEM`, `EMBUF`, `ELEAK`, `EPROTO`, … */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A bad option, devarg or parameter value: the caller asked for something impossible. */
export class ArgError extends DpkitError {
  constructor(message: string) {
    super('EINVAL', message);
  }
}

/** Out of memory in the shared heap: a memzone did not fit. */
export class NoMemError extends DpkitError {
  constructor(message: string) {
    super('ENOMEM', message);
  }
}

/** An mbuf invariant broke: double free, refcnt underflow, foreign handle. Always a bug. */
export class MbufError extends DpkitError {
  constructor(
    /** The mbuf the invariant broke on. */
    readonly handle: number,
    message: string,
  ) {
    super('EMBUF', message);
  }
}

/** A pool that is not full at a point where every mbuf must have come back. */
export class LeakError extends DpkitError {
  constructor(
    /** The pool's name. */
    readonly pool: string,
    /** Mbufs not back in the pool. */
    readonly missing: number,
    message: string,
  ) {
    super('ELEAK', message);
  }
}

/** A vhost-user peer sent something the protocol does not allow: refused, and named. */
export class VhostError extends DpkitError {
  constructor(
    /** The port or socket the peer spoke on. */
    readonly device: string,
    message: string,
  ) {
    super('EPROTO', `${device}: ${message}`);
  }
}

/**
 * One benchmark run that did not measure: a testpmd (dpkit's or DPDK's) that
 * failed to start, exited early or printed no throughput. Costs its cell one
 * run, never the whole matrix; `log` keeps what the process printed.
 */
export class BenchRunError extends DpkitError {
  constructor(
    message: string,
    /** Where the run's output was kept, when it was. */
    readonly log?: string,
  ) {
    super('EBENCH', log ? `${message} (log: ${log})` : message);
  }
}

/** Formats a handle as DPDK users read pointers: hex, fixed width. */
export function fmtHandle(h: number): string {
  return '0x' + (h >>> 0).toString(16).padStart(7, '0');
}

/** A table (LPM rules or tbl8 groups, hash buckets) has no room for one more entry: nothing was changed. */
export class NoSpaceError extends DpkitError {
  constructor(message: string) {
    super('ENOSPC', message);
  }
}
