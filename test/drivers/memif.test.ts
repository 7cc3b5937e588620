import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Mempool } from '../../src/mem/mempool.js';
import { portUp } from '../helpers.js';
import { collectLog, noShim, packet, payload, sendAll, until, world } from './memif-util.js';

const sock = (tag: string) => `/tmp/dpkit-memif-${process.pid}-${tag}.sock`;

for (const datapath of ['wasm', 'ts'] as const) {
  describe(`net_memif, a dpkit server and a dpkit client in one process (${datapath} datapath)`, { skip: noShim }, () => {
    let log: ReturnType<typeof collectLog>;
    before(() => (log = collectLog()));
    after(() => log.restore());

    it('connects, carries packets both ways byte for byte, chains what is larger than bsize', async () => {
      const { ethdev, mp, mb, burst } = world(datapath);
      const path = sock(`pair-${datapath}`);
      const srv = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path},id=7,secret=s3,bsize=1024`));
      const cli = portUp(ethdev, mp, ethdev.create(`net_memif1,role=client,socket=${path},id=7,secret=s3,bsize=1024,rsize=8`));
      await until(() => ethdev.linkUp(srv) && ethdev.linkUp(cli), 'link up on both ports');
      const sizes = [60, 64, 1000, 1024, 1025, 1518, 3000, 9000];
      for (const [from, to] of [
        [cli, srv],
        [srv, cli],
      ] as const) {
        const pkts = sizes.map((len, i) => packet(mb, mp, payload(i + from * 100, len), 700));
        await sendAll(ethdev, from, burst, pkts);
        const got: Uint8Array[] = [];
        await until(() => {
          const n = ethdev.rxBurst(to, 0, burst, 64);
          for (let i = 0; i < n; i++) {
            got.push(mb.read(burst[i]!));
            assert.equal(mb.port(burst[i]!), to);
          }
          mb.freeBulk(burst, n);
          return got.length >= sizes.length;
        }, `${sizes.length} packets on port ${to}`);
        assert.deepEqual(
          got.map((b) => b.length),
          sizes,
        );
        got.forEach((b, i) => assert.deepEqual(b, payload(i + from * 100, sizes[i]!), `packet ${i} (${sizes[i]} B) intact`));
      }
      const s = ethdev.stats(cli);
      assert.equal(s.opackets, sizes.length);
      assert.equal(s.ipackets, sizes.length);
      ethdev.close(cli);
      await until(() => !ethdev.linkUp(srv), 'the server to see the client go');
      ethdev.close(srv);
      mp.checkLeaks();
      assert.ok(log.lines.some((l) => l.includes('net_memif0: connected')), log.lines.join('\n'));
    });
  });
}

for (const datapath of ['wasm', 'ts'] as const) {
  describe(`net_memif zero-copy: a dpkit zero-copy client and a dpkit server, two heaps in one process (${datapath} datapath)`, { skip: noShim }, () => {
    let log: ReturnType<typeof collectLog>;
    before(() => (log = collectLog()));
    after(() => log.restore());

    /** Sends `sizes` from `from` and reads them on `to`, byte for byte. */
    async function exchange(a: ReturnType<typeof world>, from: number, b: ReturnType<typeof world>, to: number, sizes: number[], tag: number): Promise<void> {
      const pkts = sizes.map((len, i) => packet(a.mb, a.mp, payload(i + tag, len), 700));
      await sendAll(a.ethdev, from, a.burst, pkts);
      const got: Uint8Array[] = [];
      await until(() => {
        // The sender's tx also runs, so a zero-copy client frees what the server consumed.
        a.ethdev.txBurst(from, 0, a.burst, 0);
        const n = b.ethdev.rxBurst(to, 0, b.burst, 64);
        for (let i = 0; i < n; i++) got.push(b.mb.read(b.burst[i]!));
        b.mb.freeBulk(b.burst, n);
        return got.length >= sizes.length;
      }, `${sizes.length} packets on port ${to}`);
      assert.deepEqual(got.map((x) => x.length), sizes);
      got.forEach((x, i) => assert.deepEqual(x, payload(i + tag, sizes[i]!), `packet ${i} (${sizes[i]} B) intact`));
    }

    it('carries 60..9000 B both ways byte for byte in the mbufs themselves; pools full after the server goes, and again after it comes back', async () => {
      const s = world(datapath);
      const c = world(datapath, 2048, 64);
      const path = sock(`zc-${datapath}`);
      const srv = portUp(s.ethdev, s.mp, s.ethdev.create(`net_memif0,role=server,socket=${path},id=2`));
      const cli = portUp(c.ethdev, c.mp, c.ethdev.create(`net_memif1,role=client,socket=${path},id=2,rsize=8,zero-copy=yes`));
      await until(() => s.ethdev.linkUp(srv) && c.ethdev.linkUp(cli), 'link up on both ports');
      // The client posted its whole S2C ring: 256 of its mbufs are the server's to fill.
      assert.equal(c.mp.inUse(), 256);
      const sizes = [60, 64, 1000, 2048, 2049, 1518, 3000, 9000];
      await exchange(c, cli, s, srv, sizes, 0);
      await exchange(s, srv, c, cli, sizes, 100);
      assert.equal(c.ethdev.stats(cli).opackets, sizes.length);
      assert.equal(c.ethdev.stats(cli).ipackets, sizes.length);
      // The server goes: the client's link drops and every mbuf in its rings comes back.
      s.ethdev.close(srv);
      await until(() => !c.ethdev.linkUp(cli), 'the client to see the server go');
      c.mp.checkLeaks();
      assert.ok(log.lines.some((l) => l.includes('net_memif1: connected (client')), log.lines.join('\n'));
      // A new server on the same socket: the client reconnects by itself.
      const srv2 = portUp(s.ethdev, s.mp, s.ethdev.create(`net_memif2,role=server,socket=${path},id=2`));
      await until(() => s.ethdev.linkUp(srv2) && c.ethdev.linkUp(cli), 'the client to reconnect');
      await exchange(c, cli, s, srv2, sizes, 200);
      await exchange(s, srv2, c, cli, sizes, 300);
      c.ethdev.close(cli);
      await until(() => !s.ethdev.linkUp(srv2), 'the server to see the client go');
      s.ethdev.close(srv2);
      c.mp.checkLeaks();
      s.mp.checkLeaks();
    });
  });
}

describe('net_memif rx queues set up twice (the second pool is the one used)', { skip: noShim }, () => {
  let log: ReturnType<typeof collectLog>;
  before(() => (log = collectLog()));
  after(() => log.restore());

  it('a server and a zero-copy client each allocate from the pool of the last rxQueueSetup', async () => {
    const s = world('wasm', 1024);
    const c = world('wasm', 1024, 64);
    const sPool = Mempool.create(s.heap, { name: 'server_second', n: 1024, cacheSize: 32 });
    const cPool = Mempool.create(c.heap, { name: 'client_second', n: 1024, cacheSize: 32 });
    const path = sock('resetup');
    const up = (w: ReturnType<typeof world>, second: Mempool, devargs: string): number => {
      const p = w.ethdev.create(devargs);
      w.ethdev.configure(p, 1, 1);
      w.ethdev.rxQueueSetup(p, 0, 0, w.mp);
      w.ethdev.rxQueueSetup(p, 0, 0, second);
      w.ethdev.txQueueSetup(p, 0, 0);
      w.ethdev.start(p);
      return p;
    };
    const srv = up(s, sPool, `net_memif0,role=server,socket=${path},id=4`);
    const cli = up(c, cPool, `net_memif1,role=client,socket=${path},id=4,rsize=8,zero-copy=yes`);
    try {
      await until(() => s.ethdev.linkUp(srv) && c.ethdev.linkUp(cli), 'link up on both ports');
      // The zero-copy client posted its S2C ring from the second pool.
      assert.equal(cPool.inUse(), 256);
      assert.equal(c.mp.inUse(), 0);
      const sizes = [60, 1518, 3000];
      await sendAll(c.ethdev, cli, c.burst, sizes.map((len, i) => packet(c.mb, c.mp, payload(i, len))));
      const got: Uint8Array[] = [];
      await until(() => {
        c.ethdev.txBurst(cli, 0, c.burst, 0);
        const n = s.ethdev.rxBurst(srv, 0, s.burst, 64);
        if (n > 0) assert.equal(s.mp.inUse(), 0, 'the server received into its first pool');
        for (let i = 0; i < n; i++) got.push(s.mb.read(s.burst[i]!));
        s.mb.freeBulk(s.burst, n);
        return got.length >= sizes.length;
      }, `${sizes.length} packets on the server`);
      got.forEach((b, i) => assert.deepEqual(b, payload(i, sizes[i]!), `packet ${i} intact`));
    } finally {
      // Closed whatever failed above: open sockets would keep the file's process waiting.
      c.ethdev.close(cli);
      try {
        await until(() => !s.ethdev.linkUp(srv), 'the server to see the client go');
      } finally {
        s.ethdev.close(srv);
      }
    }
    for (const mp of [s.mp, c.mp, sPool, cPool]) mp.checkLeaks();
  });
});

describe('net_memif without the native shim', () => {
  it('fails at start with one line that says why', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['bin/dpkit.js', 'testpmd', '--vdev', 'net_memif0,role=server', '--', '--forward-mode=io'], {
      encoding: 'utf8',
      env: { ...process.env, DPKIT_NO_NATIVE: '1' },
    });
    assert.notEqual(r.status, 0);
    const lines = r.stderr.trim().split('\n').filter((l) => l.includes('net_memif0'));
    assert.deepEqual(lines, ['dpkit: net_memif0: needs the native shim (native/), which is disabled (DPKIT_NO_NATIVE is set)']);
  });

  it('refuses zero-copy=yes on a server with one clear line (as DPDK, only a client shares its buffers)', { skip: noShim }, () => {
    const { ethdev } = world('wasm', 64, 100);
    assert.throws(() => ethdev.create('net_memif0,role=server,zero-copy=yes'), /^ArgError: net_memif0: zero-copy=yes is for role=client/);
    assert.throws(() => ethdev.create('net_memif0,zero-copy=maybe'), /net_memif0: zero-copy=maybe: expected yes or no/);
  });
});
