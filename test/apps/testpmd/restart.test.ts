// Stop and start under one another: every soak pair (null, ring, pcap,
// in-process vhost/virtio, nicsim, memif) forwards in this process while two
// of them at a time stop and start again, in a seeded order, some with
// tx_first bursts added to what already circulates. A stop that leaves a
// worker's burst behind, a start that frees what a port still holds, or a
// close that frees twice shows here as a log line, a pool not full, a
// worker's fds left open or a socket file left behind.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from '../../../src/apps/bench/stats.js';
import { closePairs, pairs } from '../../../src/apps/soak/pairs.js';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { fdCount, until } from '../../drivers/netns.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-restart-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('testpmd stop and start under one another', () => {
  it('every pair restarts while the others forward; each forwards again, and closing leaves pools full, no fd and no socket', async () => {
    process.stdout.write(''); // libuv opens /dev/null on the first write to a pipe: no pair's fd
    const fdsBefore = fdCount();
    const lines: string[] = [];
    const runs = pairs(dir, () => {}).map((p) => ({ ...p, pmd: new Testpmd(parseTestpmdArgs(p.argv, [0, 1]), (l) => lines.push(`${p.name}: ${l}`)) }));
    const rx = (r: (typeof runs)[number]) => r.pmd.fwdStats().total.rxPackets;
    try {
      for (const r of runs) {
        await until(() => r.pmd.ports.every((p) => r.pmd.ethdev.linkUp(p)), `${r.name}'s links up`);
        await r.pmd.start(r.txFirst);
      }
      const random = seededRandom(23);
      const restart = async (r: (typeof runs)[number]) => {
        await r.pmd.stop();
        await sleep(random(50));
        // Half the restarts add tx_first bursts to the packets still circulating.
        await r.pmd.start(random(2) === 0 ? r.txFirst : 0);
        const from = rx(r);
        await until(() => rx(r) > from, `${r.name} forwarding again after its restart`);
      };
      // Every pair restarts, each time beside another pair's restart (b is never a).
      for (let k = 0; k < runs.length; k++) {
        const b = runs[(k + 1 + random(runs.length - 1)) % runs.length]!;
        await Promise.all([restart(runs[k]!), restart(b)]);
      }
    } finally {
      assert.deepEqual(await closePairs(runs), []); // pools full, socket files gone
    }
    assert.deepEqual(lines.filter((l) => /refcnt|double free|error|died|leak/i.test(l)), []);
    // Workers' eventfds and pipes close as their threads exit, a moment after stop resolves.
    await until(() => fdCount() <= fdsBefore, `open fds back to ${fdsBefore}`);
  });
});
