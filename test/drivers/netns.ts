/**
 * Network namespaces for the Linux interface drivers' tests: two namespaces
 * A and B, each with one end of a veth pair whose other end stays in this
 * process's namespace for dpkit to attach to, and the real tools (ping,
 * python3's http.server and urllib) run inside them with `ip netns exec`.
 * Everything made is removed by `remove()`, which a test calls in `finally`.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Testpmd } from '../../src/apps/testpmd/testpmd.js';
import { parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { drivers } from '../../src/drivers/index.js';
import { Heap } from '../../src/eal/heap.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, captureStderr, portUp } from '../helpers.js';

const exec = promisify(execFile);

/** Why these tests cannot run here, or undefined when they can (root, ip, ping, python3). */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, veth pairs)';
  for (const tool of ['ip', 'ping', 'python3']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `needs ${tool}`;
  }
  return undefined;
}

/** `ip ...`, throwing with its stderr when it fails. */
export function ip(...args: string[]): string {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

export interface Side {
  /** The namespace's name. */
  readonly ns: string;
  /** The veth end inside the namespace. */
  readonly inner: string;
  /** Its peer in this process's namespace: what dpkit attaches to (`outer` = '' when the side has none). */
  readonly outer: string;
  readonly addr: string;
}

/** A tag for names made in this run: interface names have at most 15 bytes. */
export function runTag(): string {
  return `d${(process.pid % 46656).toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

export class Netns {
  readonly a: Side;
  readonly b: Side;
  private readonly children: ChildProcess[] = [];
  private dir: string | undefined;

  /**
   * Namespaces `${tag}A` and `${tag}B` on 10.99.<subnet>.0/24, with veths when `veths` (else the caller links them),
   * each end with `queues` rx and tx queues (a veth's sender picks the peer's rx queue by flow hash).
   */
  constructor(
    readonly tag: string,
    subnet: number,
    veths = true,
    queues = 1,
  ) {
    this.a = { ns: `${tag}A`, inner: `${tag}a0`, outer: veths ? `${tag}a1` : '', addr: `10.99.${subnet}.1` };
    this.b = { ns: `${tag}B`, inner: `${tag}b0`, outer: veths ? `${tag}b1` : '', addr: `10.99.${subnet}.2` };
    try {
      for (const s of [this.a, this.b]) {
        ip('netns', 'add', s.ns);
        ip('-n', s.ns, 'link', 'set', 'lo', 'up');
        if (!veths) continue;
        const q = queues > 1 ? ['numtxqueues', String(queues), 'numrxqueues', String(queues)] : [];
        ip('link', 'add', s.outer, ...q, 'type', 'veth', 'peer', 'name', s.inner, ...q);
        ip('link', 'set', s.inner, 'netns', s.ns);
        ip('-n', s.ns, 'addr', 'add', `${s.addr}/24`, 'dev', s.inner);
        // No TCP segmentation offload towards dpkit: a packet socket would get 64 KiB super-frames
        // that no frame holds (docs/interfaces.md; `ethtool -K tso off gso off` does the same).
        ip('-n', s.ns, 'link', 'set', s.inner, 'gso_max_segs', '1', 'up');
        // The outer end carries only what dpkit sends: no addresses, no IPv6 chatter of its own.
        spawnSync('sysctl', ['-qw', `net.ipv6.conf.${s.outer}.disable_ipv6=1`]);
        ip('link', 'set', s.outer, 'up');
      }
    } catch (e) {
      this.remove();
      throw e;
    }
  }

  /**
   * Moves interface `side.inner` (made here, e.g. a tap dpkit created) into the
   * side's namespace and gives it the side's address, up, with no segmentation
   * offload towards dpkit. A tap keeps working there: its fd stays bound.
   */
  adopt(side: Side): void {
    ip('link', 'set', side.inner, 'netns', side.ns);
    ip('-n', side.ns, 'addr', 'add', `${side.addr}/24`, 'dev', side.inner);
    ip('-n', side.ns, 'link', 'set', side.inner, 'gso_max_segs', '1', 'up');
  }

  /** Sets the MTU of both ends of both veths. */
  mtu(bytes: number): void {
    for (const s of [this.a, this.b]) {
      ip('-n', s.ns, 'link', 'set', s.inner, 'mtu', String(bytes));
      if (s.outer) ip('link', 'set', s.outer, 'mtu', String(bytes));
    }
  }

  /**
   * Turns off tx checksum offload on the veth ends inside the namespaces, so
   * what they send carries its TCP/UDP checksums: AF_XDP hands over frames
   * with no "checksum not ready" status to complete them by.
   */
  txChecksumOff(): void {
    for (const s of [this.a, this.b]) {
      const r = spawnSync('ip', ['netns', 'exec', s.ns, 'ethtool', '-K', s.inner, 'tx', 'off'], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`ethtool -K ${s.inner} tx off: ${r.stderr.trim()}`);
    }
  }

  /** Runs `cmd` in `side`'s namespace. @returns its stdout; throws with its output when it fails or outlives `ms`. */
  async run(side: Side, cmd: string[], ms = 60_000): Promise<string> {
    try {
      const { stdout } = await exec('ip', ['netns', 'exec', side.ns, ...cmd], { timeout: ms, maxBuffer: 64 << 20 });
      return stdout;
    } catch (e) {
      const x = e as Error & { stdout?: string; stderr?: string; code?: number | string; signal?: string };
      throw new Error(`${side.ns}: ${cmd.join(' ')}: exit ${x.code ?? '?'}${x.signal ? ` (${x.signal})` : ''}\n${x.stdout ?? ''}${x.stderr ?? ''}`);
    }
  }

  /** `ping -c count` from a to b's address; resolves with ping's output when every echo was answered. */
  ping(from: Side, to: Side, count = 3, extra: string[] = []): Promise<string> {
    return this.run(from, ['ping', '-c', String(count), '-i', '0.2', '-W', '5', ...extra, to.addr]);
  }

  /**
   * Serves `bytes` random bytes over HTTP from `server` (python3 -m http.server)
   * and fetches them from `client` over `connections` connections, one after
   * the other. @returns whether every fetch brought the same bytes.
   */
  async httpTransfer(client: Side, server: Side, bytes: number, connections = 1): Promise<boolean> {
    this.dir ??= mkdtempSync(join(tmpdir(), 'dpkit-netns-'));
    const body = randomBytes(bytes);
    writeFileSync(join(this.dir, 'blob'), body);
    const port = 8000 + (process.pid % 1000);
    const httpd = spawn('ip', ['netns', 'exec', server.ns, 'python3', '-m', 'http.server', '--bind', server.addr, '--directory', this.dir, String(port)], { stdio: 'ignore' });
    this.children.push(httpd);
    // Retries while the server starts; each fetch is a new connection (a new source port: a new flow).
    const script = `
import hashlib, sys, time, urllib.request
url = 'http://${server.addr}:${port}/blob'
for i in range(${connections}):
    for attempt in range(600):
        try:
            data = urllib.request.urlopen(url, timeout=30).read()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit('no answer from ' + url)
    print(hashlib.sha256(data).hexdigest(), len(data))
`;
    try {
      const out = await this.run(client, ['python3', '-c', script], 180_000);
      const want = `${createHash('sha256').update(body).digest('hex')} ${bytes}`;
      const lines = out.trim().split('\n');
      return lines.length === connections && lines.every((l) => l === want);
    } finally {
      httpd.kill();
    }
  }

  /**
   * tcpdump on `side.inner` in its namespace for `filter`, from when it is
   * listening until `stop()`, which resolves with one line per frame seen.
   */
  async capture(side: Side, filter: string): Promise<{ stop(): Promise<string[]> }> {
    const td = spawn('ip', ['netns', 'exec', side.ns, 'tcpdump', '--immediate-mode', '-l', '-n', '-e', '-i', side.inner, filter], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(td);
    let out = '';
    td.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    await new Promise<void>((resolve, reject) => {
      let err = '';
      td.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        if (err.includes('listening on')) resolve();
      });
      td.on('exit', () => reject(new Error(`tcpdump on ${side.ns}/${side.inner} ended: ${err}`)));
    });
    return {
      stop: async () => {
        // tcpdump flushes its line-buffered output before it exits on SIGINT.
        const exited = new Promise((r) => td.once('exit', r));
        td.kill('SIGINT');
        await exited;
        return out.split('\n').filter((l) => l.trim() !== '');
      },
    };
  }

  /**
   * Pings `to` from `from` `count` times with tcpdump on both sides' inner
   * interfaces. @returns per side, how many ICMP echo requests and replies
   * tcpdump saw, and its lines (for the failure message).
   */
  async pingCaptured(from: Side, to: Side, count: number): Promise<{ requests: number[]; replies: number[]; lines: string }> {
    await this.ping(from, to, 1); // ARP settled: the counted pings are all the ICMP there is
    const caps = [await this.capture(from, 'icmp'), await this.capture(to, 'icmp')];
    await this.ping(from, to, count);
    const seen = [await caps[0]!.stop(), await caps[1]!.stop()];
    const n = (lines: string[], what: string) => lines.filter((l) => l.includes(what)).length;
    return { requests: seen.map((l) => n(l, 'echo request')), replies: seen.map((l) => n(l, 'echo reply')), lines: seen.flat().join('\n') };
  }

  /**
   * Sends `perFlow` UDP datagrams on each of `flows` flows (one source port
   * each, interleaved) from `from` to `to`, each carrying its sequence number.
   * @returns per flow, the sequence numbers in the order `to` received them.
   */
  async udpFlows(from: Side, to: Side, flows: number, perFlow: number): Promise<number[][]> {
    const port = 9000 + (process.pid % 1000);
    const recv = `
import json, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(('${to.addr}', ${port}))
print('ready', flush=True)
# The first datagram may wait for the sender's start-up on a loaded machine (a hang guard, not a
# window); after it, 3 s of silence means the sender is done.
s.settimeout(120)
got = {}
try:
    while sum(len(v) for v in got.values()) < ${flows * perFlow}:
        data, (_, sport) = s.recvfrom(2048)
        got.setdefault(sport, []).append(int(data.split(b' ')[0]))
        s.settimeout(3)
except socket.timeout:
    pass
print(json.dumps(list(got.values())))
`;
    const rx = spawn('ip', ['netns', 'exec', to.ns, 'python3', '-c', recv], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.children.push(rx);
    let out = '';
    rx.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    await until(() => out.startsWith('ready'), 'the UDP receiver to bind');
    const send = `
import socket, time
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(${flows})]
for i in range(${perFlow}):
    for s in socks:
        s.sendto(b'%d ' % i + b'x' * 100, ('${to.addr}', ${port}))
    if i % 16 == 15:
        time.sleep(0.001)
`;
    const done = new Promise((r) => rx.once('exit', r));
    await this.run(from, ['python3', '-c', send]);
    await done;
    return JSON.parse(out.split('\n')[1] ?? '[]') as number[][];
  }

  /** Kills what it started, deletes the namespaces (their veth ends go with them) and the veths left here. */
  remove(): void {
    for (const c of this.children) c.kill('SIGKILL');
    for (const s of [this.a, this.b]) {
      spawnSync('ip', ['netns', 'del', s.ns]);
      if (s.outer) spawnSync('ip', ['link', 'del', s.outer], { stdio: 'ignore' });
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Open fds of this process now. */
export function fdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Resolves once `cond()` holds; rejects with `what` after `ms` (a hang guard, not a timing assertion). */
export async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * testpmd in this process on ports of `driver` (net_af_packet, net_af_xdp...) over the outer veth
 * ends of `ports`, `devargs` appended to each port's, with an 8192-mbuf pool.
 */
export function testpmdOn(driver: string, ns: Netns, args: string[], devargs = '', ports = [ns.a, ns.b], eal: string[] = []): Testpmd {
  const vdevs = ports.flatMap((s, i) => ['--vdev', `${driver}${i},iface=${s.outer}${devargs}`]);
  return new Testpmd(parseTestpmdArgs([...eal, ...vdevs, '--', '--total-num-mbufs=8192', ...args]), () => {});
}

/**
 * Runs `body` with namespaces on subnet 10.99.`subnet`.0/24 (veths with `queues` queue pairs,
 * then `prepare`d) and testpmd made by `make` on them, then closes testpmd (which checks the pool
 * is full) and removes the namespaces, whatever happened.
 */
export async function onNamespaces(
  subnet: number,
  make: (ns: Netns) => Testpmd,
  body: (ns: Netns, pmd: Testpmd) => Promise<void>,
  opts: { queues?: number; prepare?: (ns: Netns) => void } = {},
): Promise<void> {
  const ns = new Netns(runTag(), subnet, true, opts.queues ?? 1);
  try {
    opts.prepare?.(ns);
    const pmd = make(ns);
    try {
      await body(ns, pmd);
    } finally {
      pmd.close();
    }
  } finally {
    ns.remove();
  }
}

/**
 * With `pmd` running macswap on A's port alone (loop topology), A pings an address on
 * 10.99.`subnet`.0/24 whose MAC it is told: tcpdump in A must see each request go out to that MAC
 * and come back from it, and the port must send what it received.
 */
export async function assertMacswapReflects(ns: Netns, pmd: Testpmd, subnet: number): Promise<void> {
  await pmd.start();
  ip('-n', ns.a.ns, 'neigh', 'replace', `10.99.${subnet}.9`, 'lladdr', '02:00:00:00:00:09', 'dev', ns.a.inner);
  const seen = await ns.run(ns.a, ['sh', '-c', `timeout 20 tcpdump -i ${ns.a.inner} -c 6 -e -n icmp 2>/dev/null & sleep 1; ping -c 3 -i 0.2 -W 1 10.99.${subnet}.9 >/dev/null; wait`]).catch((e: Error) => e.message);
  await pmd.stop();
  const requests = seen.split('\n').filter((l) => l.includes('ICMP echo request'));
  assert.equal(requests.filter((l) => l.includes('> 02:00:00:00:00:09')).length, 3, seen);
  assert.equal(requests.filter((l) => l.includes(' 02:00:00:00:00:09 > ')).length, 3, seen);
  assert.equal(pmd.ethdev.stats(0).opackets, pmd.ethdev.stats(0).ipackets);
}

/** With `pmd` forwarding io between A and B, deletes A's outer veth under a ping flood: port 0 goes down, port 1 stays up. */
export async function assertDownWhenDeleted(ns: Netns, pmd: Testpmd): Promise<void> {
  await pmd.start();
  const flood = ns.run(ns.a, ['ping', '-i', '0.002', '-w', '30', '-q', ns.b.addr]).catch(() => '');
  await until(() => pmd.ethdev.stats(1).opackets > 50, 'traffic through port 1');
  ip('link', 'del', ns.a.outer);
  await until(() => !pmd.ethdev.linkUp(0), 'port 0 down');
  assert.ok(pmd.ethdev.linkUp(1), 'port 1 still up');
  await pmd.stop();
  await flood;
}

/**
 * Port 0, opened from `devargs` on the interface `iface` and brought up, hears of the interface's
 * deletion unasked: nothing here asks the port, so its driver's one line must come from the
 * thread's link events alone. Then its link is down, and closing it leaves its pool full and as
 * many fds open as before it opened (its own and the netlink socket closed).
 */
export async function assertGoneUnasked(devargs: string, iface: string): Promise<void> {
  const heap = Heap.create({ size: 32 << 20 });
  const eth = new Ethdev(heap, drivers);
  const pool = Mempool.create(heap, { name: 'gone', n: 1023, cacheSize: 0 });
  const fds = fdCount();
  const port = portUp(eth, pool, eth.create(devargs));
  const stderr = captureStderr();
  try {
    ip('link', 'del', iface);
    await until(() => stderr.lines.length > 0, `the line saying ${iface} has gone`);
  } finally {
    stderr.restore();
  }
  assert.deepEqual(stderr.lines, [`${devargs.split(',')[0]}: iface=${iface} has gone; port 0 is down\n`]);
  assert.equal(eth.linkUp(port), false);
  eth.close(port);
  assertFull(pool);
  assert.equal(fdCount(), fds, "the port's fds and the netlink socket closed");
}

/** With `pmd` forwarding io between A and B at MTU 9000: 9000-byte pings come back intact and a TCP transfer brings its bytes. */
export async function assertJumboForwarded(ns: Netns, pmd: Testpmd): Promise<void> {
  await pmd.start();
  // 8972 bytes of ICMP payload, not fragmented: 9000-byte IP packets; ping checks the echoed bytes.
  const out = await ns.ping(ns.a, ns.b, 3, ['-s', '8972', '-M', 'do']);
  assert.match(out, /3 received/);
  assert.doesNotMatch(out, /wrong data byte/);
  assert.ok(await ns.httpTransfer(ns.a, ns.b, 2 << 20), 'TCP at MTU 9000 brought the bytes');
  await pmd.stop();
  assert.ok(pmd.ethdev.stats(0).ibytes > 3 * 9000, 'the jumbo frames went through port 0');
}

/** With `pmd` forwarding io on 2 queues per port: 24 HTTP fetches (24 flows) bring their bytes and both ports receive on both queues. */
export async function assertFlowsSpread(ns: Netns, pmd: Testpmd): Promise<void> {
  await pmd.start();
  assert.ok(await ns.httpTransfer(ns.a, ns.b, 64 << 10, 24), 'every fetch brought the bytes');
  await pmd.stop();
  for (const p of [0, 1]) {
    const s = pmd.ethdev.stats(p);
    assert.ok(s.qIpackets[0]! > 0 && s.qIpackets[1]! > 0, `port ${p} received on both queues: ${s.qIpackets.join(', ')}`);
  }
}
