import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packets, readCapture, writeCapture } from '../pcap/captures.js';
import { portUp } from '../helpers.js';
import { ipv4CksumVerify } from '../../src/net/checksum.js';
import { THREE_LCORES, startTestpmd } from '../apps/testpmd/run.js';
import { DpdkTestpmd, noDpdk } from './memif-dpdk.js';
import { collectLog, noShim, packet, payload, until, world } from './memif-util.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-memif-dpdk-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const skip = noShim || noDpdk;
/** The process's fds on a heap memfd (a memfd-backed heap keeps its fd and the shim's dup for its life). */
function heapFds(): number {
  return readdirSync('/proc/self/fd').filter((f) => {
    try {
      return readlinkSync(`/proc/self/fd/${f}`).startsWith('/memfd:dpkit-heap');
    } catch {
      return false; // the directory's own fd, gone by now
    }
  }).length;
}
const SIZES = [60, 64, 128, 1000, 1514, 2048, 3000, 9000];

/**
 * dpkit's port `p` against DPDK's testpmd with the memif port 0 and a pcap port
 * 1 (io forwarding, paired), `queues` queue pairs on as many forwarding lcores:
 * what DPDK reads from in<q>.pcap reaches dpkit on queue q, what dpkit sends on
 * queue q DPDK writes to out<q>.pcap. Counts and bytes are checked on both
 * sides, queue by queue.
 */
async function exchange(dpdkMemif: string, dpkitDevargs: string, n: number, queues = 1): Promise<void> {
  const { ethdev, mp, mb, burst } = world('wasm', 4096);
  const tag = (dpkitDevargs.includes('role=server') ? 'srv' : 'cli') + queues;
  const qs = Array.from({ length: queues }, (_, q) => q);
  const input = qs.map((q) => join(dir, `${tag}-in${q}.pcap`));
  const output = qs.map((q) => join(dir, `${tag}-out${q}.pcap`));
  const sizes = Array.from({ length: n }, (_, i) => SIZES[i % SIZES.length]!);
  // Each queue's packets differ from every other's (byte 12 on), so a packet on the wrong queue shows.
  const mark = (q: number, salt: number) => <P extends { bytes: Uint8Array }>(p: P, i: number): P => ({ ...p, bytes: p.bytes.map((b, k) => (k < 12 ? b : (b + i * salt + q * 31) & 0xff)) });
  const toDpkit = qs.map((q) => packets(sizes).map(mark(q, q === 0 ? 0 : 3)));
  const toDpdk = qs.map((q) => packets(sizes, 1_600_000_000).map(mark(q, 1)));
  qs.forEach((q) => writeCapture(input[q]!, toDpkit[q]!));
  let p = -1;
  if (tag.startsWith('srv')) p = portUp(ethdev, mp, ethdev.create(dpkitDevargs), queues);
  const pcap = `net_pcap0,${input.map((f) => `rx_pcap=${f}`).join(',')},${output.map((f) => `tx_pcap=${f}`).join(',')}`;
  const vdevs = [dpdkMemif, pcap];
  // Two forwarding lcores on two cpus: lcore 2 shares cpu 0 with the main lcore (PEERS.md).
  const lcores = queues > 1 ? ['--lcores', '0@0,1@1,2@0'] : undefined;
  const multi = queues > 1 ? [`--rxq=${queues}`, `--txq=${queues}`, `--nb-cores=${queues}`] : [];
  const dpdk = new DpdkTestpmd(vdevs, ['-i', '--forward-mode=io', '--no-flush-rx', ...multi], lcores);
  try {
    await dpdk.waitFor(/testpmd> /, 'the testpmd prompt');
    if (tag.startsWith('cli')) p = portUp(ethdev, mp, ethdev.create(dpkitDevargs), queues);
    await until(() => ethdev.linkUp(p), `link up with ${DpdkTestpmd.line(vdevs, multi)}`);
    dpdk.send('start');
    await dpdk.waitFor(/io packet forwarding/, 'forwarding to start');
    const got = qs.map((): Uint8Array[] => []);
    const sent = qs.map((q) => toDpdk[q]!.map((x) => packet(mb, mp, x.bytes)));
    const at = qs.map(() => 0);
    await until(() => {
      let done = true;
      for (const q of qs) {
        const todo = sent[q]!;
        if (at[q]! < todo.length) {
          const k = Math.min(32, todo.length - at[q]!);
          for (let i = 0; i < k; i++) burst[i] = todo[at[q]! + i]!;
          at[q]! += ethdev.txBurst(p, q, burst, k);
        }
        const r = ethdev.rxBurst(p, q, burst, 32);
        for (let i = 0; i < r; i++) got[q]!.push(mb.read(burst[i]!));
        mb.freeBulk(burst, r);
        done &&= got[q]!.length >= n && at[q] === todo.length;
      }
      return done;
    }, `${n} packets each way on each of ${queues} queues`);
    const total = n * queues;
    let st = await dpdk.portStats(0);
    for (let tries = 0; st.rx < total && tries < 10_000; tries++) st = await dpdk.portStats(0);
    assert.equal(st.rx, total, 'DPDK received every packet dpkit sent');
    assert.equal(st.tx, total, 'DPDK sent every packet of its captures');
    const s = ethdev.stats(p);
    assert.equal(s.opackets, total);
    assert.equal(s.ipackets, total);
    const bytes = sizes.reduce((a, b) => a + b, 0) * queues;
    assert.equal(s.obytes, bytes);
    assert.equal(s.ibytes, bytes);
    assert.equal(st.rxBytes, bytes);
    for (const q of qs) {
      assert.equal(got[q]!.length, n, `queue ${q}: every packet of in${q}.pcap, and only those`);
      got[q]!.forEach((b, i) => assert.deepEqual(b, toDpkit[q]![i]!.bytes, `queue ${q}: packet ${i} (${sizes[i]} B) from DPDK intact`));
    }
    dpdk.send('stop');
    await dpdk.quit();
    await until(() => !ethdev.linkUp(p), 'link down once DPDK quits');
    for (const q of qs) {
      const out = readCapture(output[q]!);
      assert.equal(out.length, n, `queue ${q}: out${q}.pcap holds what dpkit sent on queue ${q}`);
      out.forEach((r, i) => assert.deepEqual(r.bytes, toDpdk[q]![i]!.bytes, `queue ${q}: packet ${i} (${sizes[i]} B) to DPDK intact`));
    }
  } finally {
    if (!dpdk.exited) await dpdk.kill();
    if (p >= 0) ethdev.close(p);
  }
  mp.checkLeaks();
}

describe('net_memif against DPDK 22.11 (dpdk-testpmd)', { skip }, () => {
  let log: ReturnType<typeof collectLog>;
  before(() => (log = collectLog()));
  after(() => log.restore());
  const sock = (t: string) => join(dir, `${t}.sock`);

  it('dpkit server, DPDK client: packets of 60..9000 B both ways, counts and bytes equal on both sides', async () => {
    await exchange(`net_memif0,role=client,socket=${sock('a')}`, `net_memif0,role=server,socket=${sock('a')}`, 200);
  });

  it('dpkit client, DPDK server: packets of 60..9000 B both ways, counts and bytes equal on both sides', async () => {
    await exchange(`net_memif0,role=server,socket=${sock('b')},id=3,secret=xyz`, `net_memif0,role=client,socket=${sock('b')},id=3,secret=xyz`, 200);
  });

  it('dpkit zero-copy client, DPDK server: packets of 60..9000 B both ways in dpkit\'s own mbufs, counts and bytes equal on both sides', async () => {
    await exchange(`net_memif0,role=server,socket=${sock('z')}`, `net_memif0,role=client,socket=${sock('z')},zero-copy=yes`, 200);
  });

  it('dpkit zero-copy client, DPDK server forwarding on two lcores: two queue pairs, each its own packets, both ways, bytes intact', async () => {
    await exchange(`net_memif0,role=server,socket=${sock('zq2')}`, `net_memif0,role=client,socket=${sock('zq2')},zero-copy=yes`, 96, 2);
  });

  it('two queue pairs (DPDK forwarding on two lcores): every queue carries its own packets, both ways, bytes intact', async () => {
    await exchange(`net_memif0,role=client,socket=${sock('q2')}`, `net_memif0,role=server,socket=${sock('q2')}`, 96, 2);
  });

  it('a killed DPDK client takes the link down, leaks no fd, and traffic resumes when it comes back', async () => {
    const { ethdev, mp, mb, burst } = world();
    const path = sock('c');
    const p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path}`));
    const fds = readdirSync('/proc/self/fd').length;
    const vdevs = [`net_memif0,role=client,socket=${path}`];
    const drain = () => {
      const r = ethdev.rxBurst(p, 0, burst, 32);
      mb.freeBulk(burst, r);
      return r;
    };
    for (let round = 0; round < 2; round++) {
      const dpdk = new DpdkTestpmd(vdevs, ['--forward-mode=txonly', '--stats-period=1']);
      try {
        await until(() => ethdev.linkUp(p), `link up (round ${round})`);
        const before = ethdev.stats(p).ipackets;
        await until(() => drain() >= 0 && ethdev.stats(p).ipackets > before + 10_000, `traffic (round ${round})`);
        await dpdk.kill();
        await until(() => drain() >= 0 && !ethdev.linkUp(p), `link down after the kill (round ${round})`);
      } finally {
        if (!dpdk.exited) await dpdk.kill();
      }
      assert.equal(mp.inUse(), 0, 'every mbuf back in the pool');
      assert.equal(readdirSync('/proc/self/fd').length, fds, 'the connection left no fd open');
    }
    assert.equal(ethdev.xstats(p)['connects'], 2);
    ethdev.close(p);
    mp.checkLeaks();
  });
  for (const zc of [false, true]) {
  it(`a DPDK server killed mid-traffic${zc ? ' (dpkit client zero-copy)' : ''}: one line, link down, pools full, no fd left; the client reconnects when it returns`, async () => {
    // A zero-copy client's rx ring (1024) and tx ring (up to 1024) hold pool mbufs besides what send() allocates.
    const { ethdev, mp, mb, burst } = world('wasm', 4096);
    const path = sock(zc ? 'dz' : 'd');
    const vdevs = [`net_memif0,role=server,socket=${path}`];
    const heapFdsBefore = heapFds();
    const fds = readdirSync('/proc/self/fd').length - heapFdsBefore;
    let p = -1;
    for (let round = 0; round < 2; round++) {
      const seen = log.lines.length;
      const dpdk = new DpdkTestpmd(vdevs, ['-i', '--forward-mode=rxonly']);
      try {
        await dpdk.waitFor(/testpmd> /, `the server's prompt (round ${round})`);
        // Round 0 starts the client; in round 1 it is the same port, reconnecting by itself.
        if (p < 0) p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=client,socket=${path}${zc ? ',zero-copy=yes' : ''}`));
        await until(() => ethdev.linkUp(p), `link up (round ${round})`);
        // Forwarding starts once connected: DPDK's memif server must not poll during the handshake (DpdkTestpmd's note).
        dpdk.send('start');
        await dpdk.waitFor(/rxonly packet forwarding/, 'forwarding to start');
        const before = ethdev.stats(p).opackets;
        const send = () => {
          for (let i = 0; i < 32; i++) burst[i] = packet(mb, mp, payload(i, 64));
          const sent = ethdev.txBurst(p, 0, burst, 32);
          mb.freeBulk(burst, 32 - sent, sent);
          return sent;
        };
        // More than the ring holds (1024 slots): DPDK is reading.
        const state = (): string => {
          const x = ethdev.xstats(p);
          return `link ${ethdev.linkUp(p) ? 'up' : 'down'}, ${ethdev.stats(p).opackets - before} sent, connects ${x['connects']}, log: ${log.lines.slice(seen).join(' | ') || 'nothing'}; dpdk-testpmd ${dpdk.status}, its last output:\n${dpdk.out.slice(-1500)}`;
        };
        await until(() => send() >= 0 && ethdev.stats(p).opackets > before + 4096, `traffic to DPDK (round ${round})`, undefined, state);
        const from = log.lines.length;
        await dpdk.kill();
        await until(() => send() >= 0 && !ethdev.linkUp(p), `link down after the kill (round ${round})`);
        // The reconnect attempts report themselves apart ("waiting for a server ...", once per reason).
        const lines = log.lines.slice(from).filter((l) => l.startsWith('net_memif0') && !l.includes('waiting for a server'));
        assert.deepEqual(lines, ['net_memif0: peer closed the control socket'], 'one line says why the link went down');
      } finally {
        if (!dpdk.exited) await dpdk.kill();
      }
      assert.equal(mp.inUse(), 0, 'every mbuf back in the pool');
      assert.equal(ethdev.isStarted(p), true, 'the port stays started, waiting for its server');
    }
    assert.equal(ethdev.xstats(p)['connects'], 2, 'the client reconnected to the restarted server');
    ethdev.close(p);
    // A zero-copy client backed its heap with a memfd (the shim keeps a dup): those live as long as the
    // heap, as do those of earlier tests' heaps in this process.
    const heapFdsAfter = heapFds();
    assert.equal(heapFdsAfter - heapFdsBefore, zc ? 2 : 0, "the heap's memfd and the shim's dup of it, and no other");
    assert.equal(readdirSync('/proc/self/fd').length - heapFdsAfter, fds, 'no fd left');
    mp.checkLeaks();
  });
  }
  it("dpkit's testpmd on two forwarding lcores, two queue pairs into DPDK: both queues carry traffic, every frame intact", async () => {
    const path = sock('lc2');
    const empty = [0, 1].map((q) => join(dir, `lc2-empty${q}.pcap`));
    const out = [0, 1].map((q) => join(dir, `lc2-out${q}.pcap`));
    empty.forEach((f) => writeCapture(f, []));
    const pcap = `net_pcap0,${empty.map((f) => `rx_pcap=${f}`).join(',')},${out.map((f) => `tx_pcap=${f}`).join(',')}`;
    const multi = ['--rxq=2', '--txq=2', '--nb-cores=2'];
    const dpdk = new DpdkTestpmd([`net_memif0,role=server,socket=${path}`, pcap], ['-i', '--forward-mode=io', ...multi], ['--lcores', '0@0,1@1,2@0']);
    let dpkit: ReturnType<typeof startTestpmd> | undefined;
    try {
      await dpdk.waitFor(/testpmd> /, 'the testpmd prompt');
      dpkit = startTestpmd([...THREE_LCORES, '--vdev', `net_memif0,role=client,socket=${path}`, '--', '--forward-mode=txonly', '--txpkts=128', '--stats-period=1', ...multi]);
      // Forwarding starts once connected, and stops before dpkit leaves (DpdkTestpmd's note).
      await until(async () => {
        if (dpkit!.child.exitCode !== null) throw new Error(`dpkit's testpmd exited (${dpkit!.child.exitCode}) before DPDK's link came up:\n${dpkit!.out().slice(-2000)}`);
        return dpdk.linkUp(0);
      }, "DPDK's link up with dpkit's testpmd");
      dpdk.send('start');
      await dpdk.waitFor(/io packet forwarding/, 'forwarding to start');
      let st = await dpdk.portStats(0);
      for (let tries = 0; st.rx < 100_000 && tries < 100_000; tries++) st = await dpdk.portStats(0);
      // Per-queue counts while the link is up (DPDK's memif zeroes them when its client goes).
      const from = dpdk.out.length;
      dpdk.send('show port xstats 0');
      const q = await dpdk.waitFor(/rx_q0_packets:\s*(\d+)[\s\S]*?rx_q1_packets:\s*(\d+)/, 'per-queue xstats', from);
      assert.ok(Number(q[1]) > 0 && Number(q[2]) > 0, `both queues received from dpkit's two lcores (q0 ${q[1]}, q1 ${q[2]})`);
      const stopped = dpdk.out.length;
      dpdk.send('stop');
      await dpdk.waitFor(/Done\./, 'forwarding to stop', stopped);
      dpkit.child.kill('SIGINT');
      assert.equal(await dpkit.exit, 0, `dpkit's testpmd ends cleanly on SIGINT:\n${dpkit.out().slice(-2000)}`);
      await dpdk.quit();
      const frames = out.map((f) => readCapture(f));
      frames.forEach((fs, i) => assert.ok(fs.length > 0, `out${i}.pcap: queue ${i}'s frames`));
      // txonly sends one template (no multi-flow): every frame on either queue is the same 128 bytes, IPv4 checksum good.
      const first = frames[0]![0]!.bytes;
      assert.equal(first.length, 128);
      assert.ok(ipv4CksumVerify(first, 14), 'the IPv4 header checksum holds');
      for (const fs of frames) for (const f of fs) assert.deepEqual(f.bytes, first);
    } finally {
      if (dpkit && dpkit.child.exitCode === null) dpkit.child.kill('SIGKILL');
      if (!dpdk.exited) await dpdk.kill();
    }
  });
});

