import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { STOP_SIGNALS, StopSignals } from '../../../src/apps/testpmd/signals.js';
import { startTestpmd } from './run.js';

const SMALL = '--total-num-mbufs=8192';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-signals-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('testpmd and signals', () => {
  for (const [sig, n, code] of [['SIGTERM', 15, 0], ['SIGHUP', 1, 129]] as const) {
    it(`${sig} while forwarding: the final statistics, every resource released, exit ${code} as DPDK's`, async () => {
      // A vhost-user server port: its socket file must be gone after the signal.
      const sock = join(dir, `${sig}.sock`);
      const t = startTestpmd(['--vdev', `net_vhost0,iface=${sock}`, '--vdev', 'net_null0', '--', SMALL, '--stats-period=1']);
      await t.waitFor('Port statistics ====');
      assert.ok(existsSync(sock), 'the server listens');
      t.child.kill(sig);
      assert.equal(await t.exit, code, t.out());
      assert.match(t.out(), new RegExp(`Signal ${n} received, preparing to exit\\.\\.\\.[\\s\\S]*Accumulated forward statistics for all ports[\\s\\S]*Bye\\.\\.\\.`));
      assert.ok(!existsSync(sock), 'socket file removed');
    });
  }

  it('a signal during start-up stops the run once started, with the final statistics', async () => {
    const t = startTestpmd(['--', SMALL]);
    // Sent as soon as testpmd says it starts forwarding: its lcores are still being launched.
    await t.waitFor('No commandline core given');
    t.child.kill('SIGINT');
    assert.equal(await t.exit, 0);
    assert.match(t.out(), /Signal 2 received, preparing to exit\.\.\.[\s\S]*Accumulated forward statistics for all ports[\s\S]*Bye\.\.\./);
  });

  // Stdout is a pipe: testpmd's lines come in order, so the signal lands after "Telling cores to
  // stop..." was written, while the lcores, ports and pool are being shut down.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} during the shutdown (forwarding stopping, ports closing): the statistics, the pool full, exit 0`, async () => {
      const sock = join(dir, `stop-${sig}.sock`);
      const t = startTestpmd(['--vdev', `net_vhost0,iface=${sock}`, '--vdev', 'net_ring0', '--', SMALL, '--tx-first']);
      await t.waitFor('Press enter to exit');
      t.child.stdin.write('\n');
      await t.waitFor('Telling cores to stop');
      t.child.kill(sig);
      // Exit 0: close() found the pool full (a leak exits 1 with the LeakError).
      assert.equal(await t.exit, 0, t.out());
      assert.match(t.out(), /Accumulated forward statistics for all ports[\s\S]*Bye\.\.\./);
      assert.ok(!existsSync(sock), 'socket file removed');
    });
  }

  it('after release a stop signal is ignored, never left to Node\'s default (which would kill a run that ended cleanly)', () => {
    const before = STOP_SIGNALS.map((sig) => process.listenerCount(sig));
    const exits: number[] = [];
    const s = new StopSignals((code) => exits.push(code));
    s.release();
    for (const [i, sig] of STOP_SIGNALS.entries()) assert.ok(process.listenerCount(sig) > before[i]!, `${sig} still has a listener`);
    process.emit('SIGINT', 'SIGINT');
    assert.equal(s.received, null, 'the released catcher saw nothing');
    assert.deepEqual(exits, []);
  });

  it('a second signal while stopping exits at once with 128 + N', () => {
    const exits: number[] = [];
    const s = new StopSignals((code) => exits.push(code));
    try {
      const first = s.next();
      process.emit('SIGINT', 'SIGINT');
      assert.equal(s.received, 'SIGINT');
      assert.deepEqual(exits, [], 'the first one only asks to stop');
      process.emit('SIGTERM', 'SIGTERM');
      assert.deepEqual(exits, [143], 'the second: 128 + 15');
      return first.then((line) => assert.equal(line, '\nSignal 2 received, preparing to exit...'));
    } finally {
      s.release();
    }
  });
});
