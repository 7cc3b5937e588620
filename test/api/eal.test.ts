import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgError, DpkitError, LaunchError, LcoreError, PortStateError, init, type Burst, type Eal } from 'dpkit';
import type { ForwardArgs } from './forward.lcore.js';

const FORWARDER = new URL('./forward.lcore.js', import.meta.url);

/** Gives `port` one rx and one tx queue over the default pool and starts it (DPDK's port_init). */
function portInit(eal: Eal, port: number): void {
  eal.ethdev.configure(port, 1, 1);
  eal.ethdev.rxQueueSetup(port, 0, 0, eal.pool);
  eal.ethdev.txQueueSetup(port, 0, 0);
  eal.ethdev.start(port);
}

/** Sends `n` fresh 64-byte packets on `port` (a net_ring port loops them back to its own rx). */
function inject(eal: Eal, port: number, n: number): void {
  const burst = eal.burst(n);
  assert.equal(eal.pool.allocBulk(burst, n), n);
  for (let i = 0; i < n; i++) eal.mbufs.append(burst[i]!, 64);
  assert.equal(eal.ethdev.txBurst(port, 0, burst, n), n);
}

/** Two net_ring ports, each looping back, set up and started. */
function twoRingPorts(): Eal {
  const eal = init({ lcores: [0, 1, 2], vdevs: ['net_ring0', 'net_ring1'], mbufs: 2047, memory: 8 << 20 });
  portInit(eal, 0);
  portInit(eal, 1);
  return eal;
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('init', () => {
  it('takes EAL arguments and leaves what follows -- to the application', async () => {
    const eal = init(['-l', '0-1', '--vdev', 'net_ring0', '--vdev', 'net_null0,size=64', '--no-huge', '--', '-p', '0x3'], { mbufs: 511 });
    assert.deepEqual(eal.lcores, [0, 1]);
    assert.deepEqual(eal.ethdev.portIds(), [0, 1]);
    assert.equal(eal.ethdev.name(1), 'net_null0');
    assert.deepEqual(eal.args, ['-p', '0x3']);
    assert.ok(eal.notes.some((n) => /no-huge accepted and ignored/.test(n)));
    assert.equal(eal.pool.size, 511);
    await eal.close();
  });

  it('refuses an unknown EAL option and a main lcore outside the lcores, naming them', () => {
    assert.throws(() => init(['--vdevs', 'net_ring0']), (e: unknown) => e instanceof ArgError && /unknown EAL option '--vdevs'/.test(e.message));
    assert.throws(() => init({ lcores: [0, 1], mainLcore: 3 }), (e: unknown) => e instanceof ArgError && /main lcore 3 is not one of the lcores 0,1/.test(e.message));
  });
});

describe('ports from the main thread', () => {
  it('forwards through two net_ring ports with rx = tx + drops, and close leaves the pool full', async () => {
    const eal = twoRingPorts();
    inject(eal, 0, 100);
    const rx = eal.rxQueue(0, 0);
    const tx = eal.txQueue(1, 0);
    const burst = eal.burst(32);
    let fwd = 0;
    for (let n; (n = rx.rxBurst(burst, 32)) > 0; ) fwd += tx.txBurst(burst, n);
    assert.equal(fwd, 100);
    const s0 = eal.ethdev.stats(0);
    const s1 = eal.ethdev.stats(1);
    assert.equal(s0.ipackets, 100);
    assert.equal(s1.opackets, 100);
    assert.equal(s0.ipackets, s1.opackets + s1.oerrors);
    assert.equal(eal.ethdev.xstats(1)['tx_good_packets'], 100);
    assert.equal(eal.ethdev.macAddr(0).length, 6);
    assert.equal(eal.ethdev.linkUp(0), true);
    eal.ethdev.promiscuousDisable(0);
    assert.equal(eal.ethdev.promiscuousGet(0), false);
    assert.equal(eal.pool.inUse(), 100, 'the packets sit in port 1 ring until close');
    await eal.close();
    assert.ok(eal.pool.full());
  });

  it('names a wrong port id, a queue set up after start, and a burst not from the heap', async () => {
    const eal = twoRingPorts();
    assert.throws(() => eal.ethdev.configure(7, 1, 1), (e: unknown) => e instanceof ArgError && /port 7: no such port/.test(e.message));
    assert.throws(() => eal.rxQueue(7, 0), (e: unknown) => e instanceof ArgError && /port 7: no such port/.test(e.message));
    assert.throws(() => eal.ethdev.rxBurst(7, 0, eal.burst(1), 1), (e: unknown) => e instanceof ArgError && /port 7: no such port/.test(e.message));
    assert.throws(() => eal.ethdev.rxQueueSetup(0, 0, 0, eal.pool), (e: unknown) => e instanceof PortStateError && /port 0: rx queue 0 setup needs the port stopped/.test(e.message));
    assert.throws(() => eal.ethdev.txQueueSetup(1, 0, 0), (e: unknown) => e instanceof PortStateError && /port 1: tx queue 0 setup needs the port stopped/.test(e.message));
    const plain = new Uint32Array(32) as Burst; // what the Burst type exists to prevent: a cast
    assert.throws(() => eal.rxQueue(0, 0).rxBurst(plain, 32), (e: unknown) => e instanceof ArgError && /port 0 rxq 0: burst is not in the heap/.test(e.message));
    assert.throws(() => eal.ethdev.txBurst(1, 0, plain, 1), (e: unknown) => e instanceof ArgError && /port 1 txq 0: burst is not in the heap/.test(e.message));
    // A subarray lies in the heap but carries no heapOffset for the kernels: refused, not read at offset 0.
    const whole = eal.burst(8);
    assert.equal(whole.heapOffset, whole.byteOffset);
    assert.throws(() => eal.txQueue(1, 0).txBurst(whole.subarray(2) as Burst, 1), (e: unknown) => e instanceof ArgError && /burst is not in the heap \(a plain Uint32Array, or a subarray of a burst\?\)/.test(e.message));
    assert.throws(() => eal.txQueue(1, 0).txBurst(eal.burst(4), 8), (e: unknown) => e instanceof ArgError && /n=8 does not fit a burst of 4/.test(e.message));
    await eal.close();
  });
});

describe('launch', () => {
  it('runs a module on two lcores forwarding port 0 <-> port 1; stop() collects results and close() leaves pools full', async () => {
    const eal = twoRingPorts();
    inject(eal, 0, 256);
    const run = await eal.launch<{ fwd: number; dropped: number }, ForwardArgs>(FORWARDER, { lcores: [1, 2], args: { pairs: [[0, 1], [1, 0]] } });
    assert.deepEqual(run.lcores, [1, 2]);
    await until(() => eal.ethdev.stats(1).opackets >= 1000 && eal.ethdev.stats(0).opackets >= 1000);
    const results = await run.stop();
    assert.deepEqual(results.map((r) => r.lcoreId), [1, 2]);
    const rx = eal.ethdev.stats(0).ipackets + eal.ethdev.stats(1).ipackets;
    const fwd = results.reduce((a, r) => a + r.value.fwd, 0);
    const dropped = results.reduce((a, r) => a + r.value.dropped, 0);
    assert.equal(rx, fwd + dropped, 'rx = tx + drops');
    assert.equal(eal.ethdev.stats(0).opackets + eal.ethdev.stats(1).opackets, 256 + fwd);
    await eal.close();
    assert.ok(eal.pool.full());
  });

  it('refuses a missing lcore, the main lcore, and a second launch while one runs, naming each', async () => {
    const eal = twoRingPorts();
    await assert.rejects(eal.launch(FORWARDER, { lcores: [5] }), (e: unknown) => e instanceof ArgError && /launch: lcore 5 is not enabled \(lcores 0,1,2\)/.test(e.message));
    await assert.rejects(eal.launch(FORWARDER, { lcores: [0] }), (e: unknown) => e instanceof ArgError && /lcore 0 is the main lcore/.test(e.message));
    await assert.rejects(eal.launch(new URL('./missing.lcore.js', import.meta.url)), (e: unknown) => e instanceof ArgError && /missing\.lcore\.js: no such file/.test(e.message));
    const run = await eal.launch(FORWARDER, { lcores: [1, 2], args: { pairs: [[0, 1], [1, 0]] } });
    await assert.rejects(eal.launch(FORWARDER, { lcores: [1] }), (e: unknown) => e instanceof DpkitError && e.code === 'EBUSY' && /lcores 1,2 still run a launch/.test(e.message));
    await run.stop();
    await eal.close();
  });

  it('fails the launch naming the lcore and the file when the module exports no main', async () => {
    const eal = twoRingPorts();
    await assert.rejects(eal.launch(new URL('./no-main.lcore.js', import.meta.url), { lcores: [1] }), (e: unknown) => e instanceof LcoreError && e.lcoreId === 1 && /no-main\.lcore\.ts: exports no function main/.test(e.message));
    await eal.close();
  });

  it('turns a throwing main into a LaunchError naming its lcore, stops the others, and leaves the pools full', async () => {
    const eal = twoRingPorts();
    inject(eal, 0, 64);
    const run = await eal.launch(FORWARDER, { lcores: [1, 2], args: { pairs: [[0, 1], [1, 0]], throwOn: 2 } });
    // Nobody asks it to stop: lcore 2's failure stops lcore 1.
    await assert.rejects(run.wait(), (e: unknown) => {
      assert.ok(e instanceof LaunchError);
      assert.equal(e.errors.length, 1);
      assert.equal(e.errors[0]!.lcoreId, 2);
      assert.match(e.message, /lcore 2: main threw TypeError: engine exploded/);
      assert.ok(e.errors[0]!.cause instanceof Error && /forward\.lcore\.ts/.test(e.errors[0]!.cause.stack ?? ''));
      return true;
    });
    await eal.close();
    assert.ok(eal.pool.full());
  });
});
