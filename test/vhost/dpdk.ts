// Real DPDK as the peer: Debian's dpdk-testpmd in a child process, and the
// waiting helpers the interop tests need (they wait for states, never for time).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readlinkSync, rmSync } from 'node:fs';

export const HAVE_DPDK = spawnSync('sh', ['-c', 'command -v dpdk-testpmd'], { encoding: 'utf8' }).status === 0;
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
/** The reason interop tests skip, or false when they run (CI sets DPKIT_REQUIRE_TOOLS=1: never skip there). */
export const skipDpdk = !HAVE_DPDK && !REQUIRED && 'dpdk-testpmd not installed (Debian package dpdk; .ci/run installs it)';

/** How long a state may take to come on a loaded 2-core box: DPDK's start alone takes seconds. A bound for failing, not a wait. */
export const STATE_TIMEOUT_MS = 180_000;

/** One port's counters from testpmd's "Forward statistics" block. */
export interface FwdStats {
  rx: number;
  tx: number;
  txDropped: number;
}

const noPump = (): void => {};

/** Every testpmd still running: a failing test must not leave one behind (killTestpmds, in an after hook). */
const live = new Set<InteractiveTestpmd>();

export async function killTestpmds(): Promise<void> {
  for (const t of [...live]) await t.kill();
}

/**
 * A dpdk-testpmd in interactive mode (`-i`, commands on stdin), `--no-huge`,
 * its own file prefix: the test starts and stops forwarding, and reads port
 * counters, while the connection stays up (so nothing in flight is lost to an exit).
 */
export class InteractiveTestpmd {
  /**
   * What testpmd printed on stdout: prompts, command answers, statistics.
   * Matched alone: DPDK logs on stderr, and the two pipes are read in no set
   * order, so in one buffer a log chunk read late could land right after a
   * prompt and hide it from a match at the end of a line.
   */
  out = '';
  /** stdout and stderr as they were read, for failure messages. */
  log = '';
  private readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly command_: string;
  private pendingAt = -1;
  private lastQuery = 0;
  private readonly rxSeen = new Map<number, number>();

  constructor(
    readonly prefix: string,
    vdevs: string[],
    fwdArgs: string[],
    lcores = '0@1,1@1',
    /** The testpmd to run: DPDK's, or dpkit's (`[process.execPath, 'bin/dpkit.js', 'testpmd']`, the same command line and answers). */
    command: string[] = ['dpdk-testpmd'],
  ) {
    const args = ['--lcores', lcores, '--no-huge', '-m', '1024', '--no-pci', '--file-prefix', prefix, ...vdevs.flatMap((v) => ['--vdev', v]), '--', '-i', ...fwdArgs];
    this.command_ = `${command.join(' ')} ${args.join(' ')}`;
    // stdbuf: testpmd's printf output to a pipe would sit in stdio's buffer until exit.
    this.child = spawn('stdbuf', ['-oL', '-eL', ...command, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this);
    this.child.on('close', () => live.delete(this));
    this.child.stdout!.on('data', (d: Buffer) => {
      this.out += d.toString();
      this.log += d.toString();
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.log += d.toString()));
    this.child.stdin!.on('error', () => {}); // a killed testpmd closes its end
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for the first prompt: the ports are started. */
  async ready(pump: () => void = noPump): Promise<void> {
    await waitFor('testpmd to start (its first prompt)', () => this.out.includes('testpmd> '), pump, this);
  }

  /** Types `text`, and waits until what testpmd prints after it matches `until`. @returns that output. */
  async command(text: string, until: RegExp, pump: () => void = noPump): Promise<string> {
    const at = this.out.length;
    this.child.stdin!.write(text + '\n');
    await waitFor(`testpmd's answer to "${text}"`, () => until.test(this.out.slice(at)), pump, this);
    return this.out.slice(at);
  }

  /** Asks for port `port`'s counters now and then (never waits): lastRx follows. */
  pollStats(port: number): void {
    if (this.pendingAt >= 0) {
      const m = /RX-packets:\s+(\d+)[\s\S]*?Tx-bps/.exec(this.out.slice(this.pendingAt));
      if (!m) return;
      this.rxSeen.set(port, Number(m[1]));
      this.pendingAt = -1;
    }
    if (Date.now() - this.lastQuery < 200) return;
    this.lastQuery = Date.now();
    this.pendingAt = this.out.length;
    this.child.stdin!.write(`show port stats ${port}\n`);
  }

  /** RX-packets of `port` at the last answered pollStats (0 before). */
  lastRx(port: number): number {
    return this.rxSeen.get(port) ?? 0;
  }

  /** `stop`: forwarding ends (the ports stay up); each port's forward statistics. */
  async stopForwarding(pump: () => void = noPump): Promise<Map<number, FwdStats>> {
    await waitFor('the last stats query to be answered', () => this.pendingAt < 0 || /Tx-bps/.test(this.out.slice(this.pendingAt)), pump, this);
    this.pendingAt = -1;
    const text = await this.command('stop', /Done\./, pump);
    const stats = new Map<number, FwdStats>();
    const re = /Forward statistics for port (\d+)\s+-+\s+RX-packets:\s+(\d+)\s+RX-dropped:\s+(\d+)\s+RX-total:\s+\d+\s+TX-packets:\s+(\d+)\s+TX-dropped:\s+(\d+)/g;
    for (const m of text.matchAll(re)) stats.set(Number(m[1]), { rx: Number(m[2]), tx: Number(m[4]), txDropped: Number(m[5]) });
    assert.ok(stats.size > 0, `no forward statistics from ${this.command_}:\n${text}\n${this.log.slice(-3000)}`);
    return stats;
  }

  /** `quit`, and waits for the exit (capture files are complete then). */
  async quit(): Promise<void> {
    this.child.stdin!.end('quit\n');
    await this.exited;
    this.cleanup();
  }

  /** SIGKILL: the peer dies mid-traffic, as a crashed VM or switch does. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
    this.child.stdin!.destroy();
    this.cleanup();
  }

  private cleanup(): void {
    rmSync(`/var/run/dpdk/${this.prefix}`, { recursive: true, force: true });
  }
}

/**
 * Calls `pump` (the dpkit side's polling) until `done()`, yielding to the
 * event loop between rounds so sockets are serviced; fails naming `what` after
 * STATE_TIMEOUT_MS, with the peer's output.
 */
export async function waitFor(what: string, done: () => boolean, pump: () => void = () => {}, peer?: InteractiveTestpmd): Promise<void> {
  const deadline = Date.now() + STATE_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${peer ? `\n${peer.command_}:\n${peer.log.slice(-3000)}` : ''}`);
    if (peer && !peer.running) assert.fail(`dpdk-testpmd exited while waiting for ${what}:\n${peer.log.slice(-3000)}`);
    pump();
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Open fds of this process (the fd-leak check). */
export function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** This process's open fds, each with what it refers to (`socket:[...]`, `anon_inode:[eventfd]`, a path). */
export function openFds(): Map<number, string> {
  const fds = new Map<number, string>();
  for (const f of readdirSync('/proc/self/fd')) {
    try {
      fds.set(Number(f), readlinkSync(`/proc/self/fd/${f}`));
    } catch {
      // closed while listed (the listing's own fd)
    }
  }
  return fds;
}

/**
 * The fds open now that were not in `before` (as `fd -> target`): what a
 * leak would leave. Unlike a count, an fd some other part of the process
 * (node itself, the test runner) closed meanwhile does not hide one.
 */
export function leakedFds(before: Map<number, string>): string[] {
  return [...openFds()].filter(([fd, what]) => before.get(fd) !== what).map(([fd, what]) => `${fd} -> ${what}`);
}

/**
 * Test frames: Ethernet to a locally administered MAC, IPv4 ethertype, the
 * sequence number at bytes 14..17 and a pattern after it, so every received
 * frame says which one it is and whether a byte changed.
 */
export function seqFrame(seq: number, len: number): Uint8Array {
  const b = new Uint8Array(len);
  b.set([0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00]);
  new DataView(b.buffer).setUint32(14, seq);
  for (let i = 18; i < len; i++) b[i] = (seq * 13 + i * 7) & 0xff;
  return b;
}

/** The sequence number a seqFrame carries. */
export function seqOf(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset).getUint32(14);
}
