import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { L3FWD_CELLS, benchmark, l3fwdCommand, relaxesRxOffload } from '../../../bench/l3fwd.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ipv6UdptcpCksumVerify } from '../../../src/net/checksum.js';

/** The frames of a little-endian classic pcap file. */
function readPcap(file: string): Uint8Array[] {
  const b = readFileSync(file);
  const out: Uint8Array[] = [];
  for (let at = 24; at + 16 <= b.length; ) {
    const len = b.readUInt32LE(at + 8);
    out.push(new Uint8Array(b.subarray(at + 16, at + 16 + len)));
    at += 16 + len;
  }
  return out;
}

describe("bench l3fwd's arms", () => {
  it('covers LPM and EM, IPv4 and IPv6, 1 and 2 lcores, DPDK and dpkit side by side', () => {
    process.env['DPKIT_DPDK_L3FWD'] = process.execPath; // cases() checks DPDK's l3fwd exists before any run
    const names = benchmark.cases({ reps: 1, durationMs: 1, warmupMs: 1, quick: true }).map((c) => c.name);
    assert.equal(L3FWD_CELLS.length, 8);
    assert.deepEqual(names.slice(0, 8), [
      "lpm IPv4 1c: DPDK's l3fwd",
      'lpm IPv4 1c: dpkit l3fwd',
      "lpm IPv4 2c: DPDK's l3fwd",
      'lpm IPv4 2c: dpkit l3fwd',
      "lpm IPv6 1c: DPDK's l3fwd",
      'lpm IPv6 1c: dpkit l3fwd',
      "lpm IPv6 2c: DPDK's l3fwd",
      'lpm IPv6 2c: dpkit l3fwd',
    ]);
    assert.equal(names.filter((n) => n.startsWith('em ')).length, 8);
  });

  it('asks a newer DPDK l3fwd (one that knows --relax-rx-offload) to relax its rx offloads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpkit-l3fwd-relax-'));
    const env = process.env['DPKIT_DPDK_L3FWD'];
    try {
      const bin = join(dir, 'dpdk-l3fwd');
      writeFileSync(bin, 'ELF ... --relax-rx-offload: Enable Rx offload relaxation ...');
      process.env['DPKIT_DPDK_L3FWD'] = bin;
      assert.equal(relaxesRxOffload(bin), true);
      const cmd = l3fwdCommand('dpdk', { lookup: 'lpm', family: 4, lcores: 1 }, 'p');
      assert.equal(cmd.at(-1), '--relax-rx-offload');
      assert.ok(cmd.indexOf('--relax-rx-offload') > cmd.indexOf('--'), 'an application option, after --');
    } finally {
      if (env === undefined) delete process.env['DPKIT_DPDK_L3FWD'];
      else process.env['DPKIT_DPDK_L3FWD'] = env;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs IPv6 with --ipv6 in both programs, on the same ports; 2 lcores poll a queue of each port each, on the same CPUs', () => {
    process.env['DPKIT_DPDK_L3FWD'] = process.execPath;
    const cell = { lookup: 'em', family: 6, lcores: 2 } as const;
    const dpdk = l3fwdCommand('dpdk', cell, 'p');
    const dpkit = l3fwdCommand('dpkit', cell, 'p');
    const after = (cmd: string[], flag: string) => cmd[cmd.indexOf(flag) + 1];
    const vdevs = (cmd: string[]) => cmd.flatMap((a, i) => (cmd[i - 1] === '--vdev' ? [a] : []));
    assert.deepEqual(vdevs(dpdk), vdevs(dpkit), 'the same ports');
    assert.match(vdevs(dpdk)[0]!, /^net_pcap0,rx_pcap=(\S+mix6-1024\.pcap),rx_pcap=\1,infinite_rx=1$/, 'two rx queues a port');
    for (const cmd of [dpdk, dpkit]) {
      assert.ok(cmd.includes('--ipv6'));
      assert.equal(after(cmd, '--lookup'), 'em');
    }
    // DPDK's main lcore forwards too (lcores 1 and 0); dpkit's sleeps on CPU 0 and forwards on lcores 1 (CPU 1) and 2 (CPU 0).
    assert.equal(after(dpdk, '-l'), '0-1');
    assert.equal(after(dpdk, '--config'), '(0,0,1),(0,1,0),(1,0,1),(1,1,0)');
    assert.equal(after(dpkit, '--lcores'), '0@0,1@1,2@0');
    assert.equal(after(dpkit, '--config'), '(0,0,1),(0,1,2),(1,0,1),(1,1,2)');
    // node's binary knows no --relax-rx-offload: the 22.11 patch's way, nothing added.
    assert.ok(!dpdk.includes('--relax-rx-offload'));
    const one = l3fwdCommand('dpkit', { lookup: 'lpm', family: 4, lcores: 1 }, 'p');
    assert.ok(!one.includes('--ipv6'));
    assert.equal(after(one, '--config'), '(0,0,1),(1,0,1)');
  });

  it("replays IPv6 UDP frames to DPDK's default routes 2001:200:0:{0,1}::/64, with a valid UDP checksum", () => {
    process.env['DPKIT_DPDK_L3FWD'] = process.execPath;
    const file = /rx_pcap=([^,]+)/.exec(l3fwdCommand('dpkit', { lookup: 'lpm', family: 6, lcores: 1 }, 'p').join(' '))![1]!;
    const frames = readPcap(file);
    assert.equal(frames.length, 1024);
    const ports = new Set<number>();
    for (const f of frames) {
      assert.equal(f.length, 62);
      assert.deepEqual([f[12], f[13], f[20]], [0x86, 0xdd, 17], 'IPv6, UDP');
      assert.deepEqual([...f.subarray(38, 45)], [0x20, 0x01, 0x02, 0x00, 0, 0, 0]);
      ports.add(f[45]!);
      assert.ok(ipv6UdptcpCksumVerify(f, 14, 54), 'a valid UDP checksum');
    }
    assert.deepEqual([...ports].sort(), [0, 1], 'both routes');
  });
});
