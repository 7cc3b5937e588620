/**
 * `dpkit l3fwd` end to end on net_pcap ports: every packet leaves on the
 * port its route names (LPM on DPDK's default table and on a route file, EM
 * on DPDK's default 5-tuples), with its TTL one less, its header checksum
 * right (checked by our sum and by tshark when installed) and its MACs
 * rewritten; non-IP, IPv6, bad-checksum, TTL-1 and short packets dropped;
 * the kernel and twin datapaths write the same captures; route files with
 * a bad line refused naming file and line.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runL3fwd } from '../../../src/apps/l3fwd/l3fwd.js';
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
/** The tag byte: the first of the payload, past the UDP or TCP header. */
const tagOf = (frame: Uint8Array) => frame[14 + 20 + (frame[14 + 9] === 6 ? 20 : 8)]!;
const pkts = (frames: Uint8Array[]) => frames.map((bytes, i) => ({ bytes, sec: 1_700_000_000 + i, nsec: 0 }));

/** Runs l3fwd over two pcap ports fed `in0` / `in1`. @returns each port's output frames */
async function l3fwd(name: string, in0: Uint8Array[], in1: Uint8Array[], opts: string[], datapath = 'wasm'): Promise<{ out: Uint8Array[][]; report: Awaited<ReturnType<typeof runL3fwd>> }> {
  writeCapture(path(`${name}-in0.pcap`), pkts(in0));
  writeCapture(path(`${name}-in1.pcap`), pkts(in1));
  const lines: string[] = [];
  const report = await runL3fwd(
    [
      '-l', '0-1', '--no-pci',
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

function tsharkChecksums(file: string): string[] {
  const r = spawnSync('tshark', ['-r', file, '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-e', 'ip.ttl', '-e', 'ip.checksum.status'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').filter(Boolean);
}

describe('dpkit l3fwd on pcap ports', () => {
  it('LPM, default routes: each packet out of its route\'s port (misses and routes to disabled ports back out of the rx port); non-IP, IPv6, bad checksum and TTL 1 dropped', async () => {
    const in0 = [
      udpPkt('10.0.0.1', '198.18.0.5', 1), // port 0
      udpPkt('10.0.0.1', '198.18.1.7', 2), // port 1
      udpPkt('10.0.0.1', '198.18.5.1', 3), // route to port 5, not enabled: rx port 0
      udpPkt('10.0.0.1', '10.1.2.3', 4), // no route: rx port 0
      eth(0x0806, new Uint8Array(28)), // ARP: dropped
      udpPkt('10.0.0.1', '198.18.1.7', 6, { badCksum: true }), // dropped
      udpPkt('10.0.0.1', '198.18.1.7', 7, { ttl: 1 }), // dropped
      eth(0x86dd, ipv6(17, udpSeg(9, 9, payload(8, 1)))), // IPv6 without --ipv6: dropped
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
