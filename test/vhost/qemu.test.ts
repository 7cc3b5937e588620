/**
 * dpkit as the vhost-user backend of real VMs: QEMU boots Linux, whose
 * virtio-net driver (interrupt-driven: dpkit must signal its call eventfds)
 * sends and receives through dpkit's testpmd. First one guest against
 * icmpecho (each port answering on itself) on two NICs: dpkit the server
 * with a split ring, and QEMU the server (dpkit connects, client=1) with a
 * packed ring. Then two guests pinging each other through io forwarding, as a
 * vswitch between VMs. The commands are docs/vhost-user.md's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startTestpmd, until, type RunningTestpmd } from '../apps/testpmd/run.js';
import { noShim } from '../native/util.js';
import { GUEST_CPUS, PINGS, PING_SIZES, ROUNDS, TRANSFER, bootGuest, guestMac, guestPeer, skipQemu, type Guest } from './qemu.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-qemu-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A bound against hanging: TCG boots in 10 to 20 s here, several times that on a loaded machine. */
const VM_MS = 600_000;

/** A stat (`RX-packets`, `TX-packets`) of the block whose title contains `head` in testpmd's statistics at its exit (-1: no such block). */
function statAfter(out: string, head: string, stat: 'RX-packets' | 'TX-packets'): number {
  const at = out.lastIndexOf(head);
  const m = at < 0 ? null : new RegExp(`${stat}:\\s*(\\d+)`).exec(out.slice(at));
  return m ? Number(m[1]) : -1;
}

/** The stream from `port`'s queue `q` to itself (icmpecho on a loop topology). */
const ownStream = (port: number, q: number): string => {
  const n = (v: number) => String(v).padStart(2);
  return `Forward Stats for RX Port=${n(port)}/Queue=${n(q)} -> TX Port=${n(port)}/Queue=${n(q)}`;
};

/** dpkit's testpmd with `argv` (and no telemetry socket: the machine's default may be another's), once it forwards. */
async function startDpkit(argv: string[]): Promise<RunningTestpmd> {
  const dpkit = startTestpmd(['--no-telemetry', ...argv]);
  await until(() => dpkit.out().includes('Press enter to exit') || dpkit.child.exitCode !== null, () => `dpkit's testpmd did not start:\n${dpkit.out()}${dpkit.err()}`, VM_MS);
  assert.equal(dpkit.child.exitCode, null, `dpkit's testpmd exited at start:\n${dpkit.err()}`);
  return dpkit;
}

/** Waits for `g` to power off, and returns what its console and QEMU said with dpkit's log, for messages. */
async function poweredOff(g: Guest, dpkit: RunningTestpmd): Promise<string> {
  const ended = await Promise.race([g.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), VM_MS).unref())]);
  const context = `\nguest console:\n${g.console()}\nQEMU: ${g.command}\n${g.stderr()}\ndpkit:\n${dpkit.err()}`;
  assert.ok(ended, `the guest did not power off within ${VM_MS / 1000} s${context}`);
  assert.equal(ended.code, 0, `QEMU exited with ${ended.signal ?? ended.code}${context}`);
  assert.match(g.console(), /GUEST done/, `the guest's init ran to its end${context}`);
  assert.doesNotMatch(g.console(), /GUEST (insmod|reload)/, `every virtio module loaded, and virtio-net again${context}`);
  return context;
}

/**
 * How many ping runs to `peer` in `text` had all their PINGS answered. Not
 * that none was sent twice: a TCG guest stalled 3 s on a loaded machine sends
 * one more (ping -A -i 3), and the reply to the late one still counts.
 */
function answeredRuns(text: string, peer: string): number {
  return (text.match(new RegExp(`--- ${peer.replaceAll('.', '\\.')} ping statistics ---\\s+\\d+ packets transmitted, ${PINGS} packets received`, 'g')) ?? []).length;
}

/** How many full-size echo replies from `peer` came back (1472 bytes of payload and the ICMP header). */
function fullReplies(text: string, peer: string): number {
  return (text.match(new RegExp(`${PING_SIZES.at(-1)! + 8} bytes from ${peer.replaceAll('.', '\\.')}`, 'g')) ?? []).length;
}

/** Once the guests are gone: both links down, dpkit still up, and its SIGINT exit clean with its pools full. */
async function endClean(dpkit: RunningTestpmd): Promise<void> {
  await until(() => (dpkit.err().match(/link down/g) ?? []).length >= 2, () => `both links down after the guests left:\n${dpkit.err()}`, VM_MS);
  assert.equal(dpkit.child.exitCode, null, 'dpkit outlives its guests');
  dpkit.child.kill('SIGINT');
  assert.equal(await dpkit.exit, 0, `dpkit's testpmd ends cleanly, its pools full:\n${dpkit.out().slice(-3000)}\n${dpkit.err()}`);
}

describe('net_vhost as the backend of QEMU guests (Linux virtio-net)', { skip: skipQemu || noShim }, () => {
  it('a guest pings from both CPUs through both NICs (two queue pairs each; dpkit the server, split ring; QEMU the server, packed ring), every echo answered on its queue, again after the guest reloads its driver, both links down when it powers off, pools full', async () => {
    const sockets = [join(dir, 'vhost0.sock'), join(dir, 'vhost1.sock')];
    const dpkit = await startDpkit([
      '--vdev', `net_vhost0,iface=${sockets[0]},queues=${GUEST_CPUS},guest_mem=300`,
      '--vdev', `net_vhost1,iface=${sockets[1]},queues=${GUEST_CPUS},client=1,guest_mem=300`,
      '--', '--forward-mode=icmpecho', '--port-topology=loop', `--rxq=${GUEST_CPUS}`, `--txq=${GUEST_CPUS}`, '--stats-period=10',
    ]);
    let guest: Guest | undefined;
    try {
      guest = bootGuest(dir, [{ socket: sockets[0]! }, { socket: sockets[1]!, qemuServer: true, packed: true }], { name: 'echo' });
      const context = await poweredOff(guest, dpkit);
      const text = guest.console();
      for (const nic of [0, 1]) {
        for (let r = 1; r <= ROUNDS; r++) assert.match(text, new RegExp(`GUEST round ${r} ${guestMac(nic)} carrier 1`), `NIC ${nic}: the link came up in round ${r}${context}`);
        assert.equal(answeredRuns(text, guestPeer(nic)), PING_SIZES.length * GUEST_CPUS * ROUNDS, `NIC ${nic}: every echo of every size from every CPU in every round answered${context}`);
        assert.equal(fullReplies(text, guestPeer(nic)), PINGS * GUEST_CPUS * ROUNDS, `NIC ${nic}: the full-size echoes came back whole${context}`);
      }
      assert.match(dpkit.err(), /net_vhost0: .*link up \(split rings\)/);
      assert.match(dpkit.err(), /net_vhost1: .*link up \(packed rings\)/);
      await endClean(dpkit);
      // Each CPU's pings went out on its own queue pair, and dpkit answered on the queue they came in on.
      for (const port of [0, 1]) {
        for (let q = 0; q < GUEST_CPUS; q++) {
          const tx = statAfter(dpkit.out(), ownStream(port, q), 'TX-packets');
          assert.ok(tx >= PINGS * PING_SIZES.length * ROUNDS, `port ${port} queue ${q} answered its CPU's echoes (${tx} sent):\n${dpkit.out().slice(-3000)}`);
        }
      }
    } finally {
      if (guest && guest.child.exitCode === null) guest.child.kill('SIGKILL');
      if (dpkit.child.exitCode === null) dpkit.child.kill('SIGKILL');
    }
  });

  it('two guests ping each other through dpkit forwarding between their ports (a packed ring and a split one), then one fetches 4 MiB from the other over HTTP: every echo answered both ways, every byte intact, pools full', async () => {
    const sockets = [join(dir, 'a.sock'), join(dir, 'b.sock')];
    const dpkit = await startDpkit(['--vdev', `net_vhost0,iface=${sockets[0]},guest_mem=300`, '--vdev', `net_vhost1,iface=${sockets[1]},guest_mem=300`, '--', '--forward-mode=io', '--stats-period=10']);
    const ip = ['10.0.0.2', '10.0.0.3'];
    const guests: Guest[] = [];
    try {
      guests.push(bootGuest(dir, [{ socket: sockets[0]!, packed: true }], { name: 'a', cpus: 1, pair: { self: ip[0]!, peer: ip[1]!, send: true } }));
      guests.push(bootGuest(dir, [{ socket: sockets[1]! }], { name: 'b', cpus: 1, pair: { self: ip[1]!, peer: ip[0]! } }));
      for (const [i, g] of guests.entries()) {
        const context = await poweredOff(g, dpkit);
        const text = g.console();
        const peer = ip[1 - i]!;
        assert.match(text, new RegExp(`GUEST ${ip[i]!.replaceAll('.', '\\.')} carrier 1`), `guest ${i}: the link came up${context}`);
        assert.equal(answeredRuns(text, peer), PING_SIZES.length, `guest ${i}: every echo of every size answered by the other guest${context}`);
        assert.equal(fullReplies(text, peer), PINGS, `guest ${i}: the full-size echoes came back whole${context}`);
        assert.match(text, new RegExp(`GUEST ${peer.replaceAll('.', '\\.')} said done`), `guest ${i}: the other guest finished too${context}`);
      }
      // HTTP (TCP) from the first guest to the second: every byte, in order (md5 of what was served and what arrived).
      const sent = /GUEST sent (\d+) bytes, md5 ([0-9a-f]{32})/.exec(guests[0]!.console());
      const received = /GUEST received (\d+) bytes, md5 ([0-9a-f]{32})/.exec(guests[1]!.console());
      assert.ok(sent && received, `both guests reported the transfer:\n${guests[0]!.console().slice(-500)}\n${guests[1]!.console().slice(-500)}`);
      assert.equal(Number(sent[1]), TRANSFER);
      assert.deepEqual([Number(received[1]), received[2]], [TRANSFER, sent[2]], "the second guest received the first one's bytes intact");
      assert.match(dpkit.err(), /net_vhost0: .*link up \(packed rings\)/);
      assert.match(dpkit.err(), /net_vhost1: .*link up \(split rings\)/);
      await endClean(dpkit);
      // Each guest's requests and its replies to the other's: at least twice its pings, each way through dpkit.
      for (const port of [0, 1]) {
        const rx = statAfter(dpkit.out(), `Forward statistics for port ${port}`, 'RX-packets');
        assert.ok(rx >= 2 * PINGS * PING_SIZES.length, `port ${port} carried both guests' echoes (${rx} received):\n${dpkit.out().slice(-3000)}`);
      }
    } finally {
      for (const g of guests) if (g.child.exitCode === null) g.child.kill('SIGKILL');
      if (dpkit.child.exitCode === null) dpkit.child.kill('SIGKILL');
    }
  });
});
