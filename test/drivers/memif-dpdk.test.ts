import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packets, readCapture, writeCapture } from '../pcap/captures.js';
import { portUp } from '../helpers.js';
import { DpdkTestpmd, noDpdk } from './memif-dpdk.js';
import { collectLog, noShim, packet, until, world } from './memif-util.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-memif-dpdk-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const skip = noShim || noDpdk;
const SIZES = [60, 64, 128, 1000, 1514, 2048, 3000, 9000];

/**
 * dpkit's port `p` against DPDK's testpmd with the memif port 0 and a pcap port
 * 1 (io forwarding, paired): what DPDK reads from in.pcap reaches dpkit, what
 * dpkit sends DPDK writes to out.pcap. Counts and bytes are checked on both sides.
 */
async function exchange(dpdkMemif: string, dpkitDevargs: string, n: number): Promise<void> {
  const { ethdev, mp, mb, burst } = world();
  const tag = dpkitDevargs.includes('role=server') ? 'srv' : 'cli';
  const input = join(dir, `${tag}-in.pcap`);
  const output = join(dir, `${tag}-out.pcap`);
  const sizes = Array.from({ length: n }, (_, i) => SIZES[i % SIZES.length]!);
  const toDpkit = packets(sizes);
  const toDpdk = packets(sizes, 1_600_000_000).map((p, i) => ({ ...p, bytes: p.bytes.map((b, k) => (k < 12 ? b : (b + i) & 0xff)) }));
  writeCapture(input, toDpkit);
  let p = -1;
  if (tag === 'srv') p = portUp(ethdev, mp, ethdev.create(dpkitDevargs));
  const vdevs = [dpdkMemif, `net_pcap0,rx_pcap=${input},tx_pcap=${output}`];
  const dpdk = new DpdkTestpmd(vdevs, ['-i', '--forward-mode=io', '--no-flush-rx']);
  try {
    await dpdk.waitFor(/testpmd> /, 'the testpmd prompt');
    if (tag === 'cli') p = portUp(ethdev, mp, ethdev.create(dpkitDevargs));
    await until(() => ethdev.linkUp(p), `link up with ${DpdkTestpmd.line(vdevs, [])}`);
    dpdk.send('start');
    await dpdk.waitFor(/io packet forwarding/, 'forwarding to start');
    const got: Uint8Array[] = [];
    const sent = toDpdk.map((q) => packet(mb, mp, q.bytes));
    let at = 0;
    await until(() => {
      if (at < sent.length) {
        const k = Math.min(32, sent.length - at);
        for (let i = 0; i < k; i++) burst[i] = sent[at + i]!;
        at += ethdev.txBurst(p, 0, burst, k);
      }
      const r = ethdev.rxBurst(p, 0, burst, 32);
      for (let i = 0; i < r; i++) got.push(mb.read(burst[i]!));
      mb.freeBulk(burst, r);
      return got.length >= n && at === sent.length;
    }, `${n} packets each way`);
    let st = await dpdk.portStats(0);
    for (let tries = 0; st.rx < n && tries < 10_000; tries++) st = await dpdk.portStats(0);
    assert.equal(st.rx, n, 'DPDK received every packet dpkit sent');
    assert.equal(st.tx, n, 'DPDK sent every packet of its capture');
    const s = ethdev.stats(p);
    assert.equal(s.opackets, n);
    assert.equal(s.ipackets, n);
    const bytes = sizes.reduce((a, b) => a + b, 0);
    assert.equal(s.obytes, bytes);
    assert.equal(s.ibytes, bytes);
    assert.equal(st.rxBytes, bytes);
    got.forEach((b, i) => assert.deepEqual(b, toDpkit[i]!.bytes, `packet ${i} (${sizes[i]} B) from DPDK intact`));
    dpdk.send('stop');
    await dpdk.quit();
    await until(() => !ethdev.linkUp(p), 'link down once DPDK quits');
    const out = readCapture(output);
    assert.equal(out.length, n);
    out.forEach((r, i) => assert.deepEqual(r.bytes, toDpdk[i]!.bytes, `packet ${i} (${sizes[i]} B) to DPDK intact`));
  } finally {
    if (!dpdk.exited) await dpdk.kill();
    if (p >= 0) ethdev.close(p);
  }
  mp.checkLeaks();
}

describe('net_memif against DPDK 22.11 (dpdk-testpmd)', { skip }, () => {
  let log: ReturnType<typeof collectLog>;
  before(() => (log = collectLog()));
  after(() => log.restore());
  const sock = (t: string) => join(dir, `${t}.sock`);

  it('dpkit server, DPDK client: packets of 60..9000 B both ways, counts and bytes equal on both sides', async () => {
    await exchange(`net_memif0,role=client,socket=${sock('a')}`, `net_memif0,role=server,socket=${sock('a')}`, 200);
  });

  it('dpkit client, DPDK server: packets of 60..9000 B both ways, counts and bytes equal on both sides', async () => {
    await exchange(`net_memif0,role=server,socket=${sock('b')},id=3,secret=xyz`, `net_memif0,role=client,socket=${sock('b')},id=3,secret=xyz`, 200);
  });

  it('a killed DPDK client takes the link down, leaks no fd, and traffic resumes when it comes back', async () => {
    const { ethdev, mp, mb, burst } = world();
    const path = sock('c');
    const p = portUp(ethdev, mp, ethdev.create(`net_memif0,role=server,socket=${path}`));
    const fds = readdirSync('/proc/self/fd').length;
    const vdevs = [`net_memif0,role=client,socket=${path}`];
    const drain = () => {
      const r = ethdev.rxBurst(p, 0, burst, 32);
      mb.freeBulk(burst, r);
      return r;
    };
    for (let round = 0; round < 2; round++) {
      const dpdk = new DpdkTestpmd(vdevs, ['--forward-mode=txonly', '--stats-period=1']);
      try {
        await until(() => ethdev.linkUp(p), `link up (round ${round})`);
        const before = ethdev.stats(p).ipackets;
        await until(() => drain() >= 0 && ethdev.stats(p).ipackets > before + 10_000, `traffic (round ${round})`);
        await dpdk.kill();
        await until(() => drain() >= 0 && !ethdev.linkUp(p), `link down after the kill (round ${round})`);
      } finally {
        if (!dpdk.exited) await dpdk.kill();
      }
      assert.equal(mp.inUse(), 0, 'every mbuf back in the pool');
      assert.equal(readdirSync('/proc/self/fd').length, fds, 'the connection left no fd open');
    }
    assert.equal(ethdev.xstats(p)['connects'], 2);
    ethdev.close(p);
    mp.checkLeaks();
  });
});

