import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { LeakError } from '../../../src/errors.js';

const quiet = () => {};

it('reports a leaked mbuf at close as an error naming the pool and the count', () => {
  const pmd = new Testpmd(parseTestpmdArgs(['--', '--total-num-mbufs=4096']), quiet);
  const h = pmd.pool.alloc();
  assert.notEqual(h, 0);
  assert.throws(() => pmd.close(), (e: unknown) => e instanceof LeakError && e.missing === 1 && /mempool mb_pool_0: 1 of 4096 mbufs not returned/.test(e.message));
});

it('closes with the pool full when everything came back, after forwarding on a worker lcore', async () => {
  const pmd = new Testpmd(parseTestpmdArgs(['--vdev', 'net_ring0', '--vdev', 'net_ring1', '--', '--total-num-mbufs=4096']), quiet);
  await pmd.start(1); // tx_first: packets circulate in the rings
  await new Promise((r) => setTimeout(r, 300));
  const text = await pmd.stop();
  assert.match(text, /Accumulated forward statistics/);
  assert.ok(pmd.fwdStats().total.rxPackets > 0);
  pmd.close(); // drains the rings: no LeakError
  assert.equal(pmd.pool.inUse(), 0);
});

it("prints `show config fwd` as testpmd does: chained topology, 3 streams over 2 lcores", () => {
  const pmd = new Testpmd(
    parseTestpmdArgs(['-l', '0-2', '--vdev', 'net_null0', '--vdev', 'net_null1', '--vdev', 'net_null2', '--', '--port-topology=chained', '--nb-cores=2', '--total-num-mbufs=4096'], [0, 1, 2, 3]),
    quiet,
  );
  assert.equal(
    pmd.fwdConfigText(),
    [
      'io packet forwarding - ports=3 - cores=2 - streams=3 - NUMA support enabled, MP allocation mode: native',
      'Logical Core 1 (socket 0) forwards packets on 1 streams:',
      '  RX P=0/Q=0 (socket 0) -> TX P=1/Q=0 (socket 0) peer=02:00:00:00:00:01',
      'Logical Core 2 (socket 0) forwards packets on 2 streams:',
      '  RX P=1/Q=0 (socket 0) -> TX P=2/Q=0 (socket 0) peer=02:00:00:00:00:02',
      '  RX P=2/Q=0 (socket 0) -> TX P=0/Q=0 (socket 0) peer=02:00:00:00:00:00',
    ].join('\n'),
  );
  pmd.close();
});
