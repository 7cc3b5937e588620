// The examples run to completion with a bounded count and check their own counts. They import
// dpkit only through its public entry ('dpkit'); this test imports the examples themselves.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ArgError, buildKernel, LaunchError } from 'dpkit';
import { skeleton } from '../../examples/skeleton/main.js';
import { l2fwd, type L2fwdReport } from '../../examples/l2fwd/main.js';
import { userKernel } from '../../examples/user-kernel/main.js';
import { ipv4CksumSet, ipv4CksumVerify } from '../../src/net/checksum.js';
import { packets, readCapture, writeCapture, type Pkt } from '../pcap/captures.js';
import { vdevMac } from '../../src/drivers/mac.js';
import { eth, ipv4, udp, vlanEth } from '../net/packets.js';

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

it('l2fwd rewrites every packet as DPDK\'s does, in TypeScript and with --kernel: pcap ports, bytes read back', async () => {
  for (const kernel of [false, true]) {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-l2fwd-'));
    try {
      const input = [packets(Array.from({ length: 40 }, (_, i) => 60 + i * 7)), packets(Array.from({ length: 40 }, (_, i) => 1514 - i * 5))];
      input.forEach((pkts, p) => writeCapture(join(dir, `in${p}.pcap`), pkts));
      const ports = [0, 1].flatMap((p) => ['--vdev', `net_pcap${p},rx_pcap=${join(dir, `in${p}.pcap`)},tx_pcap=${join(dir, `out${p}.pcap`)}`]);
      const r = await l2fwd(['-l', '0-1', ...ports, '--', '-p', '0x3', '-q', '2', '-T', '0', '--count', '80', ...(kernel ? ['--kernel'] : [])]);
      assertPairs(r, 40);
      for (const [src, dst] of [[0, 1], [1, 0]] as const) {
        const out = readCapture(join(dir, `out${dst}.pcap`));
        assert.equal(out.length, 40, `port ${dst} sent what port ${src} received`);
        // dst 02:00:00:00:00:<dst port>, src the dst port's own address, the rest untouched.
        const head = [0x02, 0, 0, 0, 0, dst, ...vdevMac(`net_pcap${dst}`)];
        out.forEach((o, i) => {
          const sent = input[src]![i]!.bytes;
          assert.deepEqual([...o.bytes.subarray(0, 12)], head, `${kernel ? 'kernel' : 'TypeScript'}: packet ${i} of port ${src}`);
          assert.deepEqual(o.bytes.subarray(12), sent.subarray(12));
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

it('l2fwd names a portmask with no port and more ports than lcores can take', async () => {
  await assert.rejects(l2fwd(['-l', '0-1', ...NULL_PORTS, '--', '-p', '0x4']), (e: unknown) => e instanceof ArgError && /portmask 0x4 names ports 2/.test(e.message));
  await assert.rejects(l2fwd(['-l', '0-1', ...NULL_PORTS, '--', '-p', '0x3', '-q', '1']), (e: unknown) => e instanceof ArgError && /Not enough cores/.test(e.message));
});

// examples/user-kernel: its kernel built by buildKernel, run over a capture, its output against a TypeScript reference.
{
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-user-kernel-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const wasm = join(dir, 'ttl.wasm');

  /** What ttl.as.ts should do, the slow way: TTL - 1 and the header checksum recomputed. */
  const reference = (p: Uint8Array): Uint8Array => {
    const out = p.slice();
    const v4 = out.length >= 34 && out[12] === 0x08 && out[13] === 0x00 && out[14]! >> 4 === 4 && out[22]! > 0;
    if (v4) {
      out[22]!--;
      ipv4CksumSet(out, 14);
    }
    return out;
  };

  it('user-kernel: the example kernel, built by buildKernel, decrements IPv4 TTLs and keeps checksums as a full recompute does', { timeout: 180_000 }, async () => {
    await buildKernel(new URL('../../examples/user-kernel/ttl.as.ts', import.meta.url), wasm);
    let rng = 11;
    const rand = (n: number) => ((rng = (Math.imul(rng, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;
    const pkts: Pkt[] = [];
    for (let i = 0; i < 200; i++) {
      const kind = rand(6);
      let bytes: Uint8Array;
      if (kind === 4) bytes = vlanEth(5, 0x0800, ipv4(17, udp(rand(64), i))); // tagged: left alone
      else if (kind === 5) bytes = Uint8Array.from({ length: 1 + rand(40) }, () => rand(256)); // not IPv4, or short
      else {
        bytes = eth(0x0800, ipv4(17, udp(rand(200), i)));
        // Every TTL, 0 and 1 included, and every checksum carry case the random headers give.
        bytes[22] = i < 4 ? i : rand(256);
        bytes[18] = rand(256);
        bytes[19] = rand(256);
        ipv4CksumSet(bytes, 14);
      }
      pkts.push({ bytes, sec: 1_700_000_000 + i, nsec: 0 });
    }
    writeCapture(join(dir, 'in.pcap'), pkts);
    const r = await userKernel([
      '-l', '0-1',
      '--vdev', `net_pcap0,rx_pcap=${join(dir, 'in.pcap')}`,
      '--vdev', `net_pcap1,tx_pcap=${join(dir, 'out.pcap')}`,
      '--', '--wasm', wasm, '--count', String(pkts.length),
    ]);
    assert.equal(r.rx, pkts.length);
    assert.equal(r.rx, r.tx + r.dropped);
    assert.ok(r.poolFull, 'every mbuf back in the pool');
    const out = readCapture(join(dir, 'out.pcap'));
    assert.equal(out.length, r.tx);
    const want = pkts.map((p) => reference(p.bytes));
    for (let i = 0; i < out.length; i++) assert.deepEqual(out[i]!.bytes, want[i], `packet ${i}`);
    const changed = want.filter((w, i) => w.some((b, k) => b !== pkts[i]!.bytes[k])).length;
    assert.equal(r.ttlDecremented, changed, 'the kernel counts what it changed');
    assert.ok(changed > 100 && changed < pkts.length, `some changed, some not (${changed})`);
    for (const w of want) if (w.length >= 34 && w[12] === 8 && w[13] === 0) assert.ok(ipv4CksumVerify(w, 14));
  });

  it('user-kernel: a missing kernel file fails the lcore with one line naming it; a missing --wasm is an ArgError', async () => {
    const ports = ['--vdev', 'net_null0', '--vdev', 'net_null1'];
    await assert.rejects(userKernel(['-l', '0-1', ...ports, '--', '--wasm', join(dir, 'nope.wasm')]), (e: unknown) =>
      e instanceof LaunchError && /loadKernel .*nope\.wasm: cannot read it \(ENOENT\)/.test(e.message));
    await assert.rejects(userKernel(['-l', '0-1', ...ports, '--']), (e: unknown) => e instanceof ArgError && /--wasm FILE/.test(e.message));
  });
}
