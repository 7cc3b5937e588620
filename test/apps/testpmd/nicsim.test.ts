import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { testpmd } from './run.js';

const quiet = () => {};
const CABLE = ['--vdev', 'net_nicsim0,peer=net_nicsim1,tx_free_mode=bulkall', '--vdev', 'net_nicsim1,tx_free_mode=bulkall'];

describe('testpmd on two cabled net_nicsim ports', () => {
  it('passes --txd --rxd --txrst --txfreet --rxfreet --tx-offloads to the driver, forwards io on a worker lcore, and ends with the pool full', async () => {
    const opts = parseTestpmdArgs([
      '-l',
      '0-1',
      ...CABLE,
      '--',
      '--forward-mode=io',
      '--total-num-mbufs=8192',
      '--txd=512',
      '--rxd=512',
      '--txrst=64',
      '--txfreet=128',
      '--rxfreet=64',
      '--tx-offloads=0x10000',
      '--tx-first-bursts=8',
    ]);
    assert.equal(opts.txFirstBursts, 8);
    assert.ok(opts.txFirst, '--tx-first-bursts implies --tx-first');
    const pmd = new Testpmd(opts, quiet);
    for (const p of pmd.ports) {
      const tx = pmd.ethdev.txQueue(p, 0).descriptor();
      const rx = pmd.ethdev.rxQueue(p, 0).descriptor();
      assert.deepEqual([tx['nbDesc'], tx['txRsThresh'], tx['txFreeThresh'], tx['fastFree'], tx['mode']], [512, 64, 128, true, 'bulkall']);
      assert.deepEqual([rx['nbDesc'], rx['rxFreeThresh']], [512, 64]);
    }
    assert.match(pmd.fwdParamsText(), /RX desc=512 - RX free threshold=64/);
    assert.match(pmd.fwdParamsText(), /TX offloads=0x10000 - TX RS bit threshold=64/);
    // 8 bursts of 32 per stream go round the loop: port 0 -> cable -> port 1 -> io -> port 0 ...
    await pmd.start(opts.txFirstBursts);
    const until = performance.now() + 20_000;
    while (pmd.fwdStats().total.rxPackets < 20_000) {
      if (performance.now() > until) assert.fail(`only ${pmd.fwdStats().total.rxPackets} packets forwarded`);
      await sleep(20);
    }
    const text = await pmd.stop();
    assert.match(text, /Accumulated forward statistics/);
    const { total } = pmd.fwdStats();
    // Every packet that came back was sent again or dropped by testpmd; none appears from nowhere.
    assert.ok(total.rxPackets <= total.txPackets + total.txDropped + 2 * 8 * 32);
    for (const p of pmd.ports) assert.ok(Number(pmd.ethdev.xstats(p)['tx_q0_reclaims']) > 0);
    pmd.close(); // stops the ports: the hardware lets go, the rings are emptied; a leak throws here
    assert.equal(pmd.pool.inUse(), 0);
  });

  it('runs from the command line with the hardware pinned (hw_cpu), as the seed-txfree bench does', () => {
    const r = testpmd(['--lcores', '0@0,1@1', '--vdev', 'net_nicsim0,peer=net_nicsim1,hw_cpu=0', '--vdev', 'net_nicsim1', '--', '--forward-mode=io', '--total-num-mbufs=8192', '--tx-first-bursts=4', '--duration=1', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { total: { rxPackets: number }; ports: { nic: { imissed: number } }[] };
    assert.ok(j.total.rxPackets > 0, 'the loop forwarded');
  });
});
