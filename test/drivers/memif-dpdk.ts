// Debian's dpdk-testpmd as net_memif's peer: started, driven through its
// interactive prompt, its port statistics read back, and killed. Every run
// gets its own --file-prefix, removed afterwards.
//
// DPDK's memif server must not be forwarding while a client connects or
// leaves: its rx computes the ring's address before it checks that it is
// connected (22.11 and 25.11 alike), so a worker preempted between the two
// while the handshake maps the region reads the ring at its offset from
// address 0 (SIGSEGV; seen under load), and a disconnect frees the regions
// under a polling worker. Tests start forwarding once the link is up and stop
// it before dpkit goes.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { until } from './memif-util.js';

const found = spawnSync('sh', ['-c', 'command -v dpdk-testpmd'], { encoding: 'utf8' }).stdout.trim();
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
if (REQUIRED && !found) throw new Error('DPKIT_REQUIRE_TOOLS=1 but dpdk-testpmd is not installed (apt-get install dpdk dpdk-dev; .ci/run does)');
/** false when dpdk-testpmd is here, else why the DPDK tests are skipped. */
export const noDpdk: string | false = found ? false : 'dpdk-testpmd not installed (apt-get install dpdk dpdk-dev; .ci/run does)';

let runs = 0;

export class DpdkTestpmd {
  readonly child: ChildProcess;
  out = '';
  readonly prefix: string;
  exited = false;
  /** How it ended (`code 0`, `signal SIGSEGV`), for failure messages. */
  status = 'running';

  /** `dpdk-testpmd <lcores> --no-huge -m 512 --no-pci --file-prefix=… <vdevs> -- <args>`; `lcores` is `-l 0-1` unless given. */
  constructor(vdevs: string[], args: string[], lcores: string[] = ['-l', '0-1']) {
    this.prefix = `dpkit-memif-${process.pid}-${runs++}`;
    const argv = [...lcores, '--no-huge', '-m', '512', '--no-pci', `--file-prefix=${this.prefix}`, ...vdevs.flatMap((v) => ['--vdev', v]), '--', '--total-num-mbufs=8192', ...args];
    // Line-buffered: testpmd's stdout to a pipe is otherwise flushed only when its buffer fills.
    this.child = spawn('stdbuf', ['-oL', 'dpdk-testpmd', ...argv], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      this.status = signal ? `signal ${signal}` : `code ${code}`;
      rmSync(`/var/run/dpdk/${this.prefix}`, { recursive: true, force: true });
    });
  }

  /** The command line, for failure messages. */
  static line(vdevs: string[], args: string[]): string {
    return `dpdk-testpmd -l 0-1 --no-huge -m 512 --no-pci ${vdevs.map((v) => `--vdev ${v}`).join(' ')} -- --total-num-mbufs=8192 ${args.join(' ')}`;
  }

  send(cmd: string): void {
    this.child.stdin!.write(cmd + '\n');
  }

  async waitFor(re: RegExp, what: string, from = 0): Promise<RegExpMatchArray> {
    let m: RegExpMatchArray | null = null;
    await until(() => (m = this.out.slice(from).match(re)) !== null || this.exited, what);
    if (!m) throw new Error(`dpdk-testpmd exited before ${what}:\n${this.out.slice(-3000)}`);
    return m;
  }

  /** `show port stats N`: its RX and TX packet counts. */
  async portStats(port: number): Promise<{ rx: number; tx: number; rxBytes: number; txBytes: number }> {
    const from = this.out.length;
    this.send(`show port stats ${port}`);
    const m = await this.waitFor(/RX-packets:\s*(\d+)\s+RX-missed:\s*\d+\s+RX-bytes:\s*(\d+)[\s\S]*?TX-packets:\s*(\d+)\s+TX-errors:\s*\d+\s+TX-bytes:\s*(\d+)/, `port ${port} statistics`, from);
    return { rx: Number(m[1]), rxBytes: Number(m[2]), tx: Number(m[3]), txBytes: Number(m[4]) };
  }

  /** `show port info N`: whether its link is up. */
  async linkUp(port: number): Promise<boolean> {
    const from = this.out.length;
    this.send(`show port info ${port}`);
    const m = await this.waitFor(/Link status:\s*(up|down)/, `port ${port} information`, from);
    return m[1] === 'up';
  }

  /** `quit`, and waits for the process to end. */
  async quit(): Promise<void> {
    if (!this.exited) this.send('quit');
    await until(() => this.exited, 'dpdk-testpmd to exit');
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await until(() => this.exited, 'dpdk-testpmd to die');
  }
}
