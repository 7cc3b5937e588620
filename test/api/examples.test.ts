// The examples run to completion with a bounded count and check their own counts. They import
// dpkit only through its public entry ('dpkit'); this test imports the examples themselves.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ArgError } from 'dpkit';
import { skeleton } from '../../examples/skeleton/main.js';
import { l2fwd, type L2fwdReport } from '../../examples/l2fwd/main.js';

const NULL_PORTS = ['--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64'];
/** Three lcores floating over this machine's two CPUs. */
const THREE_LCORES = ['--lcores', '(0-2)@(0,1)'];

function assertPairs(r: L2fwdReport, count: number): void {
  const by = new Map(r.ports.map((p) => [p.port, p]));
  for (const [src, dst] of [[0, 1], [1, 0]] as const) {
    const s = by.get(src)!;
    const d = by.get(dst)!;
    assert.ok(s.rx >= count, `port ${src} received ${s.rx} of at least ${count}`);
    assert.equal(s.rx, d.tx + d.dropped, `port ${src} rx = port ${dst} tx + drops`);
  }
  assert.ok(r.poolFull, 'every mbuf back in the pool');
}

it('skeleton forwards port 0 <-> port 1 on one lcore: rx = tx + drops, pool full', async () => {
  const r = await skeleton(['-l', '0-1', ...NULL_PORTS, '--', '--count', '5000']);
  assert.ok(r.rx >= 5000);
  assert.equal(r.rx, r.tx + r.dropped);
  assert.ok(r.poolFull);
});

it('l2fwd forwards the pairs of -p 0x3 on two lcores with the MAC rewrite in TypeScript', async () => {
  const r = await l2fwd([...THREE_LCORES, ...NULL_PORTS, '--', '-p', '0x3', '-q', '1', '-T', '0', '--count', '5000']);
  assertPairs(r, 5000);
});

it('l2fwd with -q 2 polls both ports on one lcore, and --kernel rewrites with one kernel call per burst', async () => {
  const r = await l2fwd(['-l', '0-1', ...NULL_PORTS, '--', '-p', '3', '-q', '2', '-T', '0', '--kernel', '--count', '5000']);
  assertPairs(r, 2500);
});

it('l2fwd names a portmask with no port and more ports than lcores can take', async () => {
  await assert.rejects(l2fwd(['-l', '0-1', ...NULL_PORTS, '--', '-p', '0x4']), (e: unknown) => e instanceof ArgError && /portmask 0x4 names ports 2/.test(e.message));
  await assert.rejects(l2fwd(['-l', '0-1', ...NULL_PORTS, '--', '-p', '0x3', '-q', '1']), (e: unknown) => e instanceof ArgError && /Not enough cores/.test(e.message));
});
