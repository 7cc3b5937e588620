// dpkit testpmd's telemetry socket read by Debian's dpdk-telemetry.py, side by side with a real
// dpdk-testpmd on the same vdevs: every command answers with DPDK's keys, and the numbers are
// dpkit's own statistics.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { runtimeDir, TELEMETRY_SOCKET } from '../../../src/telemetry/server.js';
import { DpdkTestpmd, noDpdk } from '../../drivers/memif-dpdk.js';
import { startTestpmd } from './run.js';

/** Pipes `commands` to `dpdk-telemetry.py -f prefix`; @returns each reply parsed. */
function telemetry(prefix: string, commands: string[]): Record<string, unknown>[] {
  const r = spawnSync('dpdk-telemetry.py', ['-f', prefix], { input: commands.join('\n') + '\n', encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A value's shape: key names (recursively), array-ness, JSON types; not the values. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return ['array', ...new Set(v.map(shape).map((s) => JSON.stringify(s)))];
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]));
  return typeof v === 'number' ? 'number' : v === null ? null : typeof v;
}

const SAME_SHAPE = ['/info', '/help,/ethdev/stats', '/eal/params', '/eal/app_params', '/ethdev/list', '/ethdev/info,0', '/ethdev/stats,0', '/ethdev/xstats,0', '/ethdev/link_status,0', '/mempool/list', '/mempool/info,mb_pool_0', '/mempool/info,nope', '/nonexist', '/ethdev/stats,9', '/ethdev/stats,x', '/help,/nope'];

describe('testpmd telemetry', { skip: noDpdk }, () => {
  const prefix = `dpkit-tel-${process.pid}`;
  const dpkit = startTestpmd(['-l', '0-1', '--vdev', 'net_null0', '--vdev', 'net_null1', '--file-prefix', prefix, '--', '-i', '--total-num-mbufs=8192']);
  const dpdk = new DpdkTestpmd(['net_null0', 'net_null1'], ['-i']);
  after(async () => {
    dpkit.child.kill('SIGKILL');
    await dpdk.kill();
  });

  it("answers every DPDK command with DPDK 22.11's keys and types", async () => {
    await dpkit.waitFor('testpmd> ');
    await dpdk.waitFor(/testpmd> /, 'the prompt');
    const ours = telemetry(prefix, ['/', ...SAME_SHAPE]);
    const theirs = telemetry(dpdk.prefix, ['/', ...SAME_SHAPE]);
    const dpdkList = theirs[0]!['/'] as string[];
    for (const cmd of ours[0]!['/'] as string[]) {
      if (!cmd.startsWith('/dpkit/') && !cmd.startsWith('/ring/')) assert.ok(dpdkList.includes(cmd), `${cmd} is DPDK's`);
    }
    SAME_SHAPE.forEach((cmd, i) => assert.deepEqual(shape(ours[i + 1]), shape(theirs[i + 1]), cmd));
  });

  it("reports dpkit's own counters, and removes its socket at exit", async () => {
    const from = dpkit.out().length;
    dpkit.child.stdin.write('start\nstop\n');
    await dpkit.waitFor('Done.');
    const [stats, streams, ring] = telemetry(prefix, ['/ethdev/stats,0', '/dpkit/streams', '/ring/info,mb_pool_0.ring']) as [Record<string, Record<string, number>>, Record<string, Record<string, number>[]>, Record<string, Record<string, number | string>>];
    const rx = Number(/RX-packets: (\d+)/.exec(dpkit.out().slice(from))![1]);
    assert.ok(rx > 0);
    dpkit.child.stdin.write('show port stats 0\n');
    await dpkit.waitFor('Rx-pps');
    const shown = dpkit.out().slice(dpkit.out().lastIndexOf('NIC statistics for port 0'));
    assert.equal(stats['/ethdev/stats']!['ipackets'], Number(/RX-packets:\s+(\d+)/.exec(shown)![1]));
    assert.equal(stats['/ethdev/stats']!['opackets'], Number(/TX-packets:\s+(\d+)/.exec(shown)![1]));
    const s0 = streams['/dpkit/streams']!.find((s) => s['rx_port'] === 0)!;
    assert.equal(s0['rx_packets'], stats['/ethdev/stats']!['ipackets'], 'the stream from port 0 received what port 0 did');
    assert.equal(ring['/ring/info']!['capacity'], 8192);
    const path = `${runtimeDir(prefix)}/${TELEMETRY_SOCKET}`;
    assert.ok(existsSync(path));
    dpkit.child.stdin.write('quit\n');
    assert.equal(await dpkit.exit, 0);
    assert.equal(existsSync(path), false, 'socket file removed at exit');
  });
});
