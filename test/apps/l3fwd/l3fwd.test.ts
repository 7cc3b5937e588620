/**
 * `dpkit l3fwd` end to end on net_pcap ports: every packet leaves on the
 * port its route names (LPM on DPDK's default table and on a route file, EM
 * on DPDK's default 5-tuples), with its TTL one less, its header checksum
 * right (checked by our sum and by tshark when installed) and its MACs
 * rewritten; non-IP, bad-checksum, TTL-1 and short packets dropped; IPv6
 * routed by LPM always and by EM with --ipv6, hop limit one less; DPDK <=
 * 21.08's generated flows (--hash-entry-num); frames past --max-pkt-len
 * dropped and counted; the telemetry socket read by dpdk-telemetry.py; the
 * kernel and twin datapaths write the same captures; route files with a bad
 * line refused naming file and line.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runL3fwd } from '../../../src/apps/l3fwd/l3fwd.js';
import { manyFlowsV4, manyFlowsV6, parseIpv6 } from '../../../src/apps/l3fwd/routes.js';
import { runtimeDir, TELEMETRY_SOCKET } from '../../../src/telemetry/server.js';
import { ArgError } from '../../../src/errors.js';
import { readCapture, writeCapture } from '../../pcap/captures.js';
import { eth, ipv4, ipv6, refSum, udpSeg, tcpSeg, payload } from '../../net/packets.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-l3fwd-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);
const HAVE_TSHARK = existsSync('/usr/bin/tshark');
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';

const ip4 = (s: string) => s.split('.').map(Number);
/** A UDP packet src → dst, ports sport → dport, with `ttl`; `tag` marks the payload so the output can be matched. */
function udpPkt(src: string, dst: string, tag: number, opts: { sport?: number; dport?: number; ttl?: number; badCksum?: boolean; proto?: 'udp' | 'tcp' } = {}): Uint8Array {
  const body = payload(18, tag);
  body[0] = tag;
  const l4 = opts.proto === 'tcp' ? tcpSeg(opts.sport ?? 9, opts.dport ?? 9, body) : udpSeg(opts.sport ?? 9, opts.dport ?? 9, body);
  const p = ipv4(opts.proto === 'tcp' ? 6 : 17, l4, ip4(src), ip4(dst));
  if (opts.ttl !== undefined) {
    // New TTL, checksum redone.
    p[8] = opts.ttl;
    p[10] = p[11] = 0;
    const c = ~refSum(p.subarray(0, 20)) & 0xffff;
    p[10] = c >> 8;
    p[11] = c & 0xff;
  }
  if (opts.badCksum) p[11]! ^= 0x5a;
  return eth(0x0800, p, [0x02, 0, 0, 0, 0, 0xee], [0x02, 0, 0, 0, 0, 0xdd]);
}
/** A UDP (or TCP) IPv6 packet src → dst with `hops` hop limit, tagged as udpPkt's. */
function udp6Pkt(src: string, dst: string, tag: number, opts: { sport?: number; dport?: number; hops?: number; proto?: 'udp' | 'tcp'; pad?: number } = {}): Uint8Array {
  const body = payload(18 + (opts.pad ?? 0), tag);
  body[0] = tag;
  const l4 = opts.proto === 'tcp' ? tcpSeg(opts.sport ?? 9, opts.dport ?? 9, body) : udpSeg(opts.sport ?? 9, opts.dport ?? 9, body);
  const p = ipv6(opts.proto === 'tcp' ? 6 : 17, l4, [...parseIpv6(src)!], [...parseIpv6(dst)!]);
  if (opts.hops !== undefined) p[7] = opts.hops;
  return eth(0x86dd, p, [0x02, 0, 0, 0, 0, 0xee], [0x02, 0, 0, 0, 0, 0xdd]);
}
/** The tag byte: the first of the payload, past the UDP or TCP header. */
const tagOf = (frame: Uint8Array) => (frame[13] === 0xdd ? frame[14 + 40 + (frame[14 + 6] === 6 ? 20 : 8)]! : frame[14 + 20 + (frame[14 + 9] === 6 ? 20 : 8)]!);
const pkts = (frames: Uint8Array[]) => frames.map((bytes, i) => ({ bytes, sec: 1_700_000_000 + i, nsec: 0 }));

/** Runs l3fwd over two pcap ports fed `in0` / `in1`. @returns each port's output frames */
async function l3fwd(name: string, in0: Uint8Array[], in1: Uint8Array[], opts: string[], datapath = 'wasm'): Promise<{ out: Uint8Array[][]; report: Awaited<ReturnType<typeof runL3fwd>> }> {
  writeCapture(path(`${name}-in0.pcap`), pkts(in0));
  writeCapture(path(`${name}-in1.pcap`), pkts(in1));
  const lines: string[] = [];
  const report = await runL3fwd(
    [
      '-l', '0-1', '--no-pci', '--no-telemetry',
      '--vdev', `net_pcap0,rx_pcap=${path(`${name}-in0.pcap`)},tx_pcap=${path(`${name}-out0.pcap`)}`,
      '--vdev', `net_pcap1,rx_pcap=${path(`${name}-in1.pcap`)},tx_pcap=${path(`${name}-out1.pcap`)}`,
      '--', '-p', '0x3', '--config', '(0,0,1),(1,0,1)', '--datapath', datapath, ...opts,
    ],
    { log: (l) => lines.push(l) },
  );
  assert.ok(report.poolsFull, 'every mbuf back in its pool');
  assert.match(lines.join('\n'), /Initializing port 0 \.\.\. Creating queues: nb_rxq=1 nb_txq=1/);
  assert.match(lines.join('\n'), /L3FWD: entering main loop on lcore 1/);
  const out = [0, 1].map((p) => readCapture(path(`${name}-out${p}.pcap`)).map((r) => r.bytes));
  return { out, report };
}

/** The frame left with its TTL one less, a right checksum and port `p`'s MACs. */
function assertForwarded(f: Uint8Array, sent: Uint8Array, p: number): void {
  assert.deepEqual([...f.subarray(0, 6)], [0x02, 0, 0, 0, 0, p], 'destination MAC 02:00:00:00:00:<port>');
  assert.notDeepEqual([...f.subarray(6, 12)], [0x02, 0, 0, 0, 0, 0xdd], 'source MAC is the port\'s');
  assert.equal(f[14 + 8], sent[14 + 8]! - 1, 'TTL decremented');
  assert.equal(refSum(f.subarray(14, 34)), 0xffff, 'IPv4 header checksum right');
  assert.deepEqual([...f.subarray(34)], [...sent.subarray(34)], 'payload untouched');
}

/** The IPv6 frame left with its hop limit one less (DPDK 22.11 leaves it) and port `p`'s MACs, the rest as sent. */
function assertForwarded6(f: Uint8Array, sent: Uint8Array, p: number): void {
  assert.deepEqual([...f.subarray(0, 6)], [0x02, 0, 0, 0, 0, p], 'destination MAC 02:00:00:00:00:<port>');
  assert.equal(f[14 + 7], sent[14 + 7]! - 1, 'hop limit decremented');
  assert.deepEqual([...f.subarray(12, 21)], [...sent.subarray(12, 21)], 'type and IPv6 header to the hop limit untouched');
  assert.deepEqual([...f.subarray(22)], [...sent.subarray(22)], 'addresses and payload untouched');
}

function tsharkChecksums(file: string): string[] {
  const r = spawnSync('tshark', ['-r', file, '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-e', 'ip.ttl', '-e', 'ip.checksum.status'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').filter(Boolean);
}

describe('dpkit l3fwd on pcap ports', () => {
  it('LPM, default routes: each packet out of its route\'s port (misses and routes to disabled ports back out of the rx port); non-IP, bad checksum and TTL 1 dropped', async () => {
    const in0 = [
      udpPkt('10.0.0.1', '198.18.0.5', 1), // port 0
      udpPkt('10.0.0.1', '198.18.1.7', 2), // port 1
      udpPkt('10.0.0.1', '198.18.5.1', 3), // route to port 5, not enabled: rx port 0
      udpPkt('10.0.0.1', '10.1.2.3', 4), // no route: rx port 0
      eth(0x0806, new Uint8Array(28)), // ARP: dropped
      udpPkt('10.0.0.1', '198.18.1.7', 6, { badCksum: true }), // dropped
      udpPkt('10.0.0.1', '198.18.1.7', 7, { ttl: 1 }), // dropped
      eth(0x86dd, new Uint8Array(30)), // too short for IPv6: dropped
      eth(0x0800, new Uint8Array(10)), // too short for IPv4: dropped
    ];
    const in1 = [udpPkt('10.0.0.2', '198.18.0.9', 10, { ttl: 2 }), udpPkt('10.0.0.2', '198.18.1.1', 11, { proto: 'tcp' })];
    const { out, report } = await l3fwd('lpm', in0, in1, []);
    const sent = new Map([...in0, ...in1].map((f) => [tagOf(f), f]));
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((a, b) => a - b)), [[1, 3, 4, 10], [2, 11]]);
    out.forEach((o, p) => o.forEach((f) => assertForwarded(f, sent.get(tagOf(f))!, p)));
    assert.deepEqual(report.lcores.map((l) => [l.rxPackets, l.badPackets, l.txPackets]), [[11, 5, 6]]);
    if (HAVE_TSHARK || REQUIRED) {
      // tshark's own check: every header checksum good (status 1), TTLs as sent less one.
      assert.deepEqual(tsharkChecksums(path('lpm-out1.pcap')).sort(), ['63\t1', '63\t1']);
    }
  });

  it('LPM routes IPv6 by DPDK\'s default table beside IPv4, hop limit one less; hop limit 1 dropped', async () => {
    const in0 = [
      udp6Pkt('2001:db8::1', '2001:200:0:0::5', 1), // port 0
      udp6Pkt('2001:db8::1', '2001:200:0:1:ffff::7', 2), // port 1
      udp6Pkt('2001:db8::1', '2001:200:0:5::1', 3), // port 5, not enabled: rx port 0
      udp6Pkt('2001:db8::1', '2001:db8:1::1', 4), // no route: rx port 0
      udp6Pkt('2001:db8::1', '2001:200:0:1::7', 5, { hops: 1 }), // dropped
      udpPkt('10.0.0.1', '198.18.1.7', 6), // IPv4: port 1
    ];
    const in1 = [udp6Pkt('2001:db8::2', '2001:200::9', 10, { proto: 'tcp', hops: 2 })];
    const { out, report } = await l3fwd('lpm6', in0, in1, []);
    const sent = new Map([...in0, ...in1].map((f) => [tagOf(f), f]));
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((a, b) => a - b)), [[1, 3, 4, 10], [2, 6]]);
    out.forEach((o, p) => o.forEach((f) => (f[13] === 0xdd ? assertForwarded6 : assertForwarded)(f, sent.get(tagOf(f))!, p)));
    assert.deepEqual(report.lcores.map((l) => [l.rxPackets, l.badPackets, l.txPackets]), [[7, 1, 6]]);
  });

  it('EM with --ipv6 looks up IPv6 5-tuples (DPDK\'s default flows); IPv4 then misses, as without --ipv6 IPv6 does', async () => {
    const in1 = [
      udp6Pkt('2001:200:0:0::1', '2001:200:0:0::', 1), // flow 0: port 0
      udp6Pkt('2001:200:0:1::1', '2001:200:0:1::', 2), // flow 1: port 1
      udp6Pkt('2001:200:0:0::1', '2001:200:0:0::', 3, { dport: 10 }), // no such flow: rx port 1
      udp6Pkt('2001:200:0:0::1', '2001:200:0:0::', 4, { proto: 'tcp' }), // TCP: no such flow
      udpPkt('198.18.0.1', '198.18.0.0', 5), // IPv4's flow 0, not in the table: rx port 1
    ];
    const { out } = await l3fwd('em6', [], in1, ['--lookup', 'em', '--ipv6']);
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((x, y) => x - y)), [[1], [2, 3, 4, 5]]);
    const sent = new Map(in1.map((f) => [tagOf(f), f]));
    out.forEach((o, p) => o.forEach((f) => (f[13] === 0xdd ? assertForwarded6 : assertForwarded)(f, sent.get(tagOf(f))!, p)));
    const v4 = await l3fwd('em4-v6miss', [], in1, ['--lookup', 'em']);
    assert.deepEqual(v4.out.map((o) => o.map(tagOf).sort((x, y) => x - y)), [[5], [1, 2, 3, 4]], 'without --ipv6 every IPv6 packet misses and IPv4 flow 0 goes to port 0');
  });

  it('--hash-entry-num generates DPDK <= 21.08\'s flows: route i % 4 with its destination counting i / 4', async () => {
    const f = manyFlowsV4(9);
    assert.deepEqual([f[0], f[5], f[8]].map((r) => [r!.dst >>> 24, (r!.dst >>> 16) & 0xff, (r!.dst >>> 8) & 0xff, r!.dst & 0xff, r!.port, r!.sport, r!.dport, r!.proto]), [
      [101, 0, 0, 0, 0, 11, 101, 6],
      [201, 0, 0, 1, 1, 12, 102, 6],
      [101, 0, 0, 2, 0, 11, 101, 6],
    ]);
    assert.equal(manyFlowsV4(4 * 65537)[4 * 65536]!.dst, ((101 << 24) | (1 << 16)) >>> 0, 'the third byte counts past 65535');
    const g = manyFlowsV6(6)[5]!;
    assert.deepEqual([[...g.dst.subarray(0, 2)], [...g.dst.subarray(13)], g.port], [[0xfe, 0x90], [0, 0, 1], 1]);
    const in0 = [
      udpPkt('100.10.0.1', '101.0.0.2', 1, { proto: 'tcp', sport: 11, dport: 101 }), // flow 8: port 0
      udpPkt('200.20.0.1', '201.0.0.3', 2, { proto: 'tcp', sport: 12, dport: 102 }), // flow 13: port 1
      udpPkt('200.20.0.1', '201.0.0.4', 3, { proto: 'tcp', sport: 12, dport: 102 }), // flow 17: past 0x10, rx port 0
      udpPkt('198.18.1.1', '198.18.1.0', 4), // 22.11's default flow, not generated: rx port 0
    ];
    const { out } = await l3fwd('many', in0, [], ['-E', '--hash-entry-num', '0x10']);
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((x, y) => x - y)), [[1, 3, 4], [2]]);
    await assert.rejects(runL3fwd(['-l', '0-1', '--no-telemetry', '--', '-p', '0x1', '-E', '--hash-entry-num', '0x10', `--rule_ipv4=${path('x.cfg')}`]), /--hash-entry-num generates the EM flows/);
    await assert.rejects(runL3fwd(['-l', '0-1', '--no-telemetry', '--', '-p', '0x1', '-E', '--hash-entry-num', '0x400001']), /--hash-entry-num 0x400001/);
  });

  it('--max-pkt-len sets each port\'s MTU; longer frames are dropped and counted as oversize', async () => {
    // 100 less header and CRC: MTU 82, frames up to 96 bytes.
    const in0 = [udpPkt('10.0.0.1', '198.18.1.1', 1), udpPkt('10.0.0.1', '198.18.1.1', 2), udp6Pkt('2001:db8::1', '2001:200:0:1::1', 3, { pad: 20 })];
    in0[1] = eth(0x0800, ipv4(17, udpSeg(9, 9, Uint8Array.of(2, ...payload(60, 2))), ip4('10.0.0.1'), ip4('198.18.1.1')), [2, 0, 0, 0, 0, 0xee], [2, 0, 0, 0, 0, 0xdd]);
    assert.ok(in0[0]!.length <= 96 && in0[1]!.length > 96 && in0[2]!.length > 96);
    const { out, report } = await l3fwd('mtu', in0, [], ['--max-pkt-len', '100']);
    assert.deepEqual(out.map((o) => o.map(tagOf)), [[], [1]]);
    assert.deepEqual(report.lcores.map((l) => [l.rxOversize, l.badPackets]), [[2, 0]]);
    const dflt = await l3fwd('mtu-default', in0, [], []);
    assert.deepEqual(dflt.out.map((o) => o.map(tagOf).sort()), [[], [1, 2, 3]], 'without --max-pkt-len the MTU stays 1500');
    await assert.rejects(runL3fwd(['-l', '0-1', '--no-telemetry', '--vdev', 'net_null0', '--', '-p', '0x1', '--config', '(0,0,1)', '--max-pkt-len', '64']), /Invalid max packet length: 64 \(port 0\): MTU \(46\) < device min MTU/);
    await assert.rejects(runL3fwd(['-l', '0-1', '--no-telemetry', '--', '-p', '0x1', '--max-pkt-len', '9601']), /--max-pkt-len 9601/);
  });

  it('serves DPDK\'s telemetry socket while it runs: dpdk-telemetry.py reads its ports and counters', { skip: !existsSync('/usr/bin/dpdk-telemetry.py') && !REQUIRED && 'dpdk-telemetry.py is not installed' }, async () => {
    const prefix = `dpkit-l3fwd-tel-${process.pid}`;
    writeCapture(path('tel-in.pcap'), pkts([udpPkt('10.0.0.1', '198.18.1.1', 1), udp6Pkt('2001:db8::1', '2001:200:0:1::1', 2)]));
    const lines: string[] = [];
    const run = runL3fwd(
      ['-l', '0-1', '--file-prefix', prefix, '--vdev', `net_pcap0,rx_pcap=${path('tel-in.pcap')},infinite_rx=1`, '--vdev', 'net_null1', '--', '-p', '0x3', '--config', '(0,0,1),(1,0,1)'],
      { log: (l) => lines.push(l) },
    );
    const sock = `${runtimeDir(prefix)}/${TELEMETRY_SOCKET}`;
    try {
      for (let i = 0; i < 600 && !lines.some((l) => l.includes('entering main loop')); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(existsSync(sock), 'socket made');
      // An asynchronous client: the server answers on this process's event loop.
      const ask = (cmds: string[]) =>
        new Promise<Record<string, unknown>[]>((resolve, reject) => {
          const c = spawn('dpdk-telemetry.py', ['-f', prefix], { stdio: ['pipe', 'pipe', 'pipe'] });
          let text = '';
          c.stdout.on('data', (d: Buffer) => (text += d.toString()));
          c.on('error', reject);
          c.on('close', (code) => (code === 0 ? resolve(text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)) : reject(new Error(`dpdk-telemetry.py exited ${code}: ${text}`))));
          c.stdin.end(cmds.join('\n') + '\n');
        });
      let rx = 0;
      for (let i = 0; i < 100 && rx === 0; i++) {
        const [st] = (await ask(['/ethdev/stats,0'])) as [Record<string, Record<string, number>>];
        rx = st['/ethdev/stats']!['ipackets']!;
      }
      const [list, params, l3] = (await ask(['/ethdev/list', '/eal/app_params', '/dpkit/l3fwd'])) as [Record<string, number[]>, Record<string, string[]>, Record<string, Record<string, number>[]>];
      assert.deepEqual(list['/ethdev/list'], [0, 1]);
      assert.deepEqual(params['/eal/app_params'], ['-p', '0x3', '--config', '(0,0,1),(1,0,1)']);
      assert.ok(rx > 0, 'port 0 received, as telemetry shows');
      assert.ok(l3['/dpkit/l3fwd']![0]!['rx_packets']! > 0 && l3['/dpkit/l3fwd']![0]!['lcore'] === 1);
    } finally {
      process.emit('SIGINT', 'SIGINT');
      const report = await run;
      assert.ok(report.poolsFull);
    }
    assert.equal(existsSync(sock), false, 'socket removed at exit');
  });

  it('the kernel and twin datapaths write the same captures', async () => {
    const in0 = Array.from({ length: 40 }, (_, i) => udpPkt('10.0.0.1', `198.18.${i % 3}.${i}`, i, { badCksum: i % 7 === 0 }));
    const a = await l3fwd('dp-wasm', in0, [], []);
    const b = await l3fwd('dp-ts', in0, [], [], 'ts');
    assert.deepEqual(b.out, a.out);
    assert.equal(a.out[0]!.length + a.out[1]!.length, 40 - 6);
  });

  it('LPM from a route file: the longest prefix wins', async () => {
    writeFileSync(path('routes.cfg'), '# test routes\nR10.0.0.0/8 0\n\nR10.1.0.0/16 1\nR10.1.2.3/32 0\n');
    const in0 = [udpPkt('1.1.1.1', '10.9.9.9', 1), udpPkt('1.1.1.1', '10.1.9.9', 2), udpPkt('1.1.1.1', '10.1.2.3', 3), udpPkt('1.1.1.1', '10.1.2.4', 4)];
    const { out } = await l3fwd('file', in0, [], [`--rule_ipv4=${path('routes.cfg')}`]);
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((x, y) => x - y)), [[1, 3], [2, 4]]);
  });

  it('EM, DPDK\'s default 5-tuples: a matching flow goes to its port, any other to the rx port', async () => {
    const in1 = [
      udpPkt('198.18.0.1', '198.18.0.0', 1), // flow 0: port 0
      udpPkt('198.18.1.1', '198.18.1.0', 2), // flow 1: port 1
      udpPkt('198.18.0.1', '198.18.0.0', 3, { sport: 10 }), // no such flow: rx port 1
      udpPkt('198.18.0.1', '198.18.0.0', 4, { proto: 'tcp' }), // TCP: no such flow
    ];
    const { out } = await l3fwd('em', [], in1, ['--lookup', 'em']);
    assert.deepEqual(out.map((o) => o.map(tagOf).sort((x, y) => x - y)), [[1], [2, 3, 4]]);
    const sent = new Map(in1.map((f) => [tagOf(f), f]));
    out.forEach((o, p) => o.forEach((f) => assertForwarded(f, sent.get(tagOf(f))!, p)));
  });

  it('a route file with a bad line is one ArgError naming the file and the line', async () => {
    writeFileSync(path('bad.cfg'), 'R10.0.0.0/8 0\n# fine\nR10.1.0.0/40 1\n');
    await assert.rejects(runL3fwd(['-l', '0-1', '--', '-p', '0x1', `--rule_ipv4=${path('bad.cfg')}`]), (e: Error) => e instanceof ArgError && e.message.includes(`${path('bad.cfg')} Line 3: parse rules error: depth 40`));
    writeFileSync(path('bad-em.cfg'), 'R198.18.0.0 198.18.0.1 9 9 0x11 0\nX198.18.0.0 198.18.0.1 9 9 0x11 0\n');
    await assert.rejects(runL3fwd(['-l', '0-1', '--', '-p', '0x1', '-E', `--rule_ipv4=${path('bad-em.cfg')}`]), (e: Error) => e instanceof ArgError && e.message.includes('bad-em.cfg Line 2: should start with leading char R'));
    writeFileSync(path('bad-em2.cfg'), 'R198.18.0.0 198.18.0.1 9 99999 0x11 0\n');
    await assert.rejects(runL3fwd(['-l', '0-1', '--', '-p', '0x1', '--lookup=em', `--rule_ipv4=${path('bad-em2.cfg')}`]), (e: Error) => e instanceof ArgError && /bad-em2\.cfg Line 1: .*'99999' is not a source port/.test(e.message));
  });

  it('refuses bad command lines with one ArgError each', async () => {
    const bad: [string[], RegExp][] = [
      [['-p', 'zz'], /Invalid portmask zz/],
      [['-p', '0x1', '-L', '-E'], /Only one lookup mode/],
      [['-p', '0x1', '--config', '(0,0)'], /Invalid config/],
      [['-p', '0x1', '--lookup', 'acl'], /acl: not in dpkit/],
      [['-p', '0x1', '--eth-dest=0,11:22'], /--eth-dest=0,11:22/],
      [['-p', '0x1', '--config', '(0,0,1)'], /lcore 1 is not enabled in lcore mask/],
    ];
    for (const [args, re] of bad) await assert.rejects(runL3fwd(['-l', '0', '--vdev', 'net_null0', '--', ...args]), (e: Error) => e instanceof ArgError && re.test(e.message), args.join(' '));
  });
});
