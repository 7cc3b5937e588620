/**
 * dpkit as the vhost-user backend of a real VM: QEMU boots Linux, whose
 * virtio-net driver (interrupt-driven: dpkit must signal its call eventfds)
 * pings through dpkit's testpmd answering ARP and ICMP echo (icmpecho,
 * each port replying on itself). One VM, two NICs: on the first dpkit is the
 * server and the ring split; on the second QEMU is the server (dpkit connects
 * with client=1) and the ring packed. The commands are docs/vhost-user.md's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startTestpmd, until } from '../apps/testpmd/run.js';
import { noShim } from '../native/util.js';
import { GUEST_CPUS, PINGS, PING_SIZES, ROUNDS, bootGuest, guestMac, guestPeer, skipQemu } from './qemu.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-qemu-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A bound against hanging: TCG boots in 10 to 20 s here, several times that on a loaded machine. */
const VM_MS = 600_000;

/** The TX-packets of the stream from `port`'s queue `q` to itself in testpmd's statistics at its exit (-1: no such block). */
function streamTx(out: string, port: number, q: number): number {
  const head = `Forward Stats for RX Port=${String(port).padStart(2)}/Queue=${String(q).padStart(2)} -> TX Port=${String(port).padStart(2)}/Queue=${String(q).padStart(2)}`;
  const at = out.lastIndexOf(head);
  const m = at < 0 ? null : /TX-packets:\s*(\d+)/.exec(out.slice(at));
  return m ? Number(m[1]) : -1;
}

describe('net_vhost as the backend of a QEMU guest (Linux virtio-net)', { skip: skipQemu || noShim }, () => {
  it('the guest pings from both CPUs through both NICs (two queue pairs each; dpkit the server, split ring; QEMU the server, packed ring), every echo answered on its queue, again after the guest reloads its driver, both links down when it powers off, pools full', async () => {
    const sockets = [join(dir, 'vhost0.sock'), join(dir, 'vhost1.sock')];
    const dpkit = startTestpmd([
      '--vdev', `net_vhost0,iface=${sockets[0]},queues=${GUEST_CPUS},guest_mem=300`,
      '--vdev', `net_vhost1,iface=${sockets[1]},queues=${GUEST_CPUS},client=1,guest_mem=300`,
      '--', '--forward-mode=icmpecho', '--port-topology=loop', `--rxq=${GUEST_CPUS}`, `--txq=${GUEST_CPUS}`, '--stats-period=10',
    ]);
    let guest: ReturnType<typeof bootGuest> | undefined;
    try {
      await until(() => dpkit.out().includes('Press enter to exit') || dpkit.child.exitCode !== null, () => `dpkit's testpmd did not start:\n${dpkit.out()}${dpkit.err()}`, VM_MS);
      assert.equal(dpkit.child.exitCode, null, `dpkit's testpmd exited at start:\n${dpkit.err()}`);
      guest = bootGuest(dir, [{ socket: sockets[0]! }, { socket: sockets[1]!, qemuServer: true, packed: true }]);
      const g = guest;
      const ended = await Promise.race([g.exit, new Promise<undefined>((r) => setTimeout(() => r(undefined), VM_MS).unref())]);
      const context = `\nguest console:\n${g.console()}\nQEMU: ${g.command}\n${g.stderr()}\ndpkit:\n${dpkit.err()}`;
      assert.ok(ended, `the guest did not power off within ${VM_MS / 1000} s${context}`);
      assert.equal(ended.code, 0, `QEMU exited with ${ended.signal ?? ended.code}${context}`);
      const text = g.console();
      assert.match(text, /GUEST done/, `the guest's init ran to its end${context}`);
      assert.doesNotMatch(text, /GUEST (insmod|reload)/, `every virtio module loaded, and virtio-net again${context}`);
      for (const nic of [0, 1]) {
        const peer = guestPeer(nic).replaceAll('.', '\\.');
        for (let r = 1; r <= ROUNDS; r++) assert.match(text, new RegExp(`GUEST round ${r} ${guestMac(nic)} carrier 1`), `NIC ${nic}: the link came up in round ${r}${context}`);
        const answered = text.match(new RegExp(`--- ${peer} ping statistics ---\\s+${PINGS} packets transmitted, ${PINGS} packets received`, 'g')) ?? [];
        assert.equal(answered.length, PING_SIZES.length * GUEST_CPUS * ROUNDS, `NIC ${nic}: every echo of every size from every CPU in every round answered${context}`);
        const full = text.match(new RegExp(`${PING_SIZES.at(-1)! + 8} bytes from ${peer}`, 'g')) ?? [];
        assert.equal(full.length, PINGS * GUEST_CPUS * ROUNDS, `NIC ${nic}: the full-size echoes came back whole${context}`);
      }
      // QEMU gone: dpkit saw both frontends leave, and stays up.
      await until(() => (dpkit.err().match(/link down/g) ?? []).length >= 2, () => `both links down after the guest left:\n${dpkit.err()}`, VM_MS);
      assert.match(dpkit.err(), /net_vhost0: .*link up \(split rings\)/);
      assert.match(dpkit.err(), /net_vhost1: .*link up \(packed rings\)/);
      assert.equal(dpkit.child.exitCode, null, 'dpkit outlives its guest');
      dpkit.child.kill('SIGINT');
      assert.equal(await dpkit.exit, 0, `dpkit's testpmd ends cleanly, its pools full:\n${dpkit.out().slice(-3000)}\n${dpkit.err()}`);
      // Each CPU's pings went out on its own queue pair, and dpkit answered on the queue they came in on.
      for (const port of [0, 1]) {
        for (let q = 0; q < GUEST_CPUS; q++) {
          const tx = streamTx(dpkit.out(), port, q);
          assert.ok(tx >= PINGS * PING_SIZES.length * ROUNDS, `port ${port} queue ${q} answered its CPU's echoes (${tx} sent):\n${dpkit.out().slice(-3000)}`);
        }
      }
    } finally {
      if (guest && guest.child.exitCode === null) guest.child.kill('SIGKILL');
      if (dpkit.child.exitCode === null) dpkit.child.kill('SIGKILL');
    }
  });
});
