// An API program watched from outside as testpmd is: init's telemetry option serves DPDK's
// telemetry socket (read by Debian's dpdk-telemetry.py and by a client speaking the protocol),
// metricsListen serves Prometheus' /metrics; both read the ports' own counters.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { ArgError, DpkitError, init, type Eal } from 'dpkit';
import { recvMsg, sendMsg, unixConnect } from '../../src/native/unix.js';
import { closeFd } from '../../src/native/watch.js';
import { runtimeDir, TELEMETRY_SOCKET } from '../../src/telemetry/server.js';
import { until } from '../apps/testpmd/run.js';

const hasTelemetryPy = existsSync('/usr/bin/dpdk-telemetry.py');

/** Moves `n` packets through net_ring port 0 (tx loops back to its rx) and frees them. */
function traffic(eal: Eal, n: number): void {
  eal.ethdev.configure(0, 1, 1);
  eal.ethdev.rxQueueSetup(0, 0, 0, eal.pool);
  eal.ethdev.txQueueSetup(0, 0, 0);
  eal.ethdev.start(0);
  const burst = eal.burst(n);
  assert.equal(eal.pool.allocBulk(burst, n), n);
  for (let i = 0; i < n; i++) eal.mbufs.append(burst[i]!, 100);
  assert.equal(eal.ethdev.txBurst(0, 0, burst, n), n);
  assert.equal(eal.ethdev.rxBurst(0, 0, burst, n), n);
  eal.mbufs.freeBulk(burst, n);
}

/** Pipes `commands` to dpdk-telemetry.py without blocking this event loop (the socket is served on it). */
async function telemetryPy(prefix: string, commands: string[]): Promise<Record<string, unknown>[]> {
  const child = spawn('/usr/bin/dpdk-telemetry.py', ['-f', prefix], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(commands.join('\n') + '\n');
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  assert.equal(code, 0, err);
  return out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('init({ telemetry })', () => {
  it('serves the telemetry protocol from the program: handshake, ethdev and mempool commands with its counters; close removes the socket', async () => {
    const prefix = `dpkit-api-tel-${process.pid}`;
    const eal = init({ lcores: [0, 1], vdevs: ['net_ring0'], mbufs: 1023, memory: 4 << 20, telemetry: true, filePrefix: prefix });
    const path = eal.telemetryPath!;
    assert.equal(path, `${runtimeDir(prefix)}/${TELEMETRY_SOCKET}`);
    traffic(eal, 20);
    const fd = unixConnect(path, 'seqpacket');
    const buf = new Uint8Array(16384);
    const next = async (): Promise<Record<string, unknown>> => {
      let got: string | undefined;
      await until(() => {
        const m = recvMsg(fd, buf);
        if (m) got = Buffer.from(buf.subarray(0, m.bytes)).toString();
        return got !== undefined;
      }, () => 'no telemetry reply');
      return JSON.parse(got!) as Record<string, unknown>;
    };
    try {
      assert.deepEqual(await next(), { version: 'DPDK 22.11.0 (dpkit)', pid: process.pid, max_output_len: 16384 });
      sendMsg(fd, Buffer.from('/ethdev/list'));
      assert.deepEqual(await next(), { '/ethdev/list': [0] });
      sendMsg(fd, Buffer.from('/ethdev/stats,0'));
      const stats = (await next())['/ethdev/stats'] as Record<string, number>;
      assert.equal(stats['ipackets'], 20);
      assert.equal(stats['opackets'], 20);
      assert.equal(stats['ibytes'], 2000);
      sendMsg(fd, Buffer.from('/mempool/list'));
      assert.deepEqual(await next(), { '/mempool/list': ['mb_pool_0'] });
      sendMsg(fd, Buffer.from('/eal/params'));
      assert.deepEqual((await next())['/eal/params'], [process.argv[1]!.split('/').pop(), '-l', '0,1', '--vdev', 'net_ring0']);
      if (hasTelemetryPy) {
        const [list, st] = (await telemetryPy(prefix, ['/ethdev/list', '/ethdev/stats,0'])) as [Record<string, number[]>, Record<string, Record<string, number>>];
        assert.deepEqual(list['/ethdev/list'], [0]);
        assert.equal(st['/ethdev/stats']!['opackets'], 20);
      }
    } finally {
      closeFd(fd);
      await eal.close();
    }
    assert.equal(existsSync(path), false, 'socket removed at close');
    rmSync(dirname(path), { recursive: true, force: true });
  });

  it('argv: --telemetry turns it on with --file-prefix; without it, or with a later --no-telemetry, there is no socket', async () => {
    const prefix = `dpkit-api-argv-${process.pid}`;
    const on = init(['-l', '0', '--vdev', 'net_null0', '--file-prefix', prefix, '--telemetry'], { mbufs: 0, memory: 1 << 20 });
    assert.equal(on.telemetryPath, `${runtimeDir(prefix)}/${TELEMETRY_SOCKET}`);
    assert.ok(existsSync(on.telemetryPath!));
    await on.close();
    for (const argv of [['-l', '0', '--file-prefix', prefix], ['-l', '0', '--file-prefix', prefix, '--telemetry', '--no-telemetry']]) {
      const off = init(argv, { mbufs: 0, memory: 1 << 20 });
      assert.equal(off.telemetryPath, undefined);
      await off.close();
    }
    rmSync(runtimeDir(prefix), { recursive: true, force: true });
  });

  it('fails init with one line when the socket is in use or the prefix is bad, closing the ports it made', async () => {
    const prefix = `dpkit-api-busy-${process.pid}`;
    const first = init({ lcores: [0], vdevs: ['net_null0'], mbufs: 0, memory: 1 << 20, telemetry: true, filePrefix: prefix });
    try {
      assert.throws(
        () => init({ lcores: [0], vdevs: ['net_null0'], mbufs: 0, memory: 1 << 20, telemetry: true, filePrefix: prefix }),
        (e: unknown) => e instanceof DpkitError && e.code === 'ETELEMETRY' && /^init: telemetry: .*dpdk_telemetry\.v2 is in use by another process$/.test(e.message),
      );
      assert.throws(() => init({ lcores: [0], mbufs: 0, memory: 1 << 20, telemetry: true, filePrefix: '../x' }), ArgError);
    } finally {
      await first.close();
    }
    rmSync(runtimeDir(prefix), { recursive: true, force: true });
  });
});

describe('Eal.metricsListen', () => {
  it("serves the ports' counters, queues, links and pools in Prometheus' format; close stops it", async () => {
    const eal = init({ lcores: [0], vdevs: ['net_ring0'], mbufs: 1023, memory: 4 << 20 });
    const m = await eal.metricsListen(0);
    traffic(eal, 7);
    const page = await (await fetch(`http://127.0.0.1:${m.port}/metrics`)).text();
    assert.match(page, /^dpkit_port_rx_packets_total\{port="0",name="net_ring0"\} 7$/m);
    assert.match(page, /^dpkit_queue_tx_bytes_total\{port="0",queue="0"\} 700$/m);
    assert.match(page, /^dpkit_port_link_up\{port="0",name="net_ring0"\} 1$/m);
    assert.match(page, /^dpkit_mempool_in_use\{pool="mb_pool_0"\} 0$/m);
    await assert.rejects(eal.metricsListen(m.port), (e: unknown) => e instanceof ArgError && /^metricsListen=127\.0\.0\.1:\d+: cannot listen: .*EADDRINUSE/.test(e.message));
    await eal.close();
    await assert.rejects(fetch(`http://127.0.0.1:${m.port}/metrics`));
  });
});
