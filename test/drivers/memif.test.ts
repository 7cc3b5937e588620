import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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

  it('refuses zero-copy=yes with one clear line', { skip: noShim }, () => {
    const { ethdev } = world('wasm', 64, 100);
    assert.throws(() => ethdev.create('net_memif0,zero-copy=yes'), /net_memif0: zero-copy=yes is not supported/);
  });
});
