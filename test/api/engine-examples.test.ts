// The user-engine examples run through the built testpmd as a user runs them:
// examples/vlan-engine pushes and pops 802.1Q tags between two capture ports, examples/macswap-engine
// writes the same bytes as the built-in macswap, and neither collects garbage while forwarding.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { VLAN_TCI } from '../../examples/vlan-engine/engine.js';
import { frame, readCapture, writeCapture, type Pkt } from '../pcap/captures.js';
import { DPKIT } from '../apps/testpmd/run.js';

const VLAN_ENGINE = fileURLToPath(new URL('../../dist/examples/vlan-engine/engine.js', import.meta.url));
const MACSWAP_ENGINE = fileURLToPath(new URL('../../dist/examples/macswap-engine/engine.js', import.meta.url));
const TSHARK = existsSync('/usr/bin/tshark');
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-engine-examples-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

interface Json {
  lcores: { lcore: number; gc: number | null }[];
  ports: { port: number; rxPackets: number; txPackets: number; txDropped: number }[];
  total: { rxPackets: number; txPackets: number; txDropped: number };
  streams: { rxPort: number; rxPackets: number; txPackets: number; fwdDropped: number }[];
}

/**
 * Runs the built testpmd to its end with --json (stdin ends at once; --duration
 * bounds a run the captures do not end). Exit 0 means close() found every mbuf
 * back in the pool (a leak fails the run).
 */
function testpmd(argv: string[]): Json {
  const r = spawnSync(process.execPath, [DPKIT, 'testpmd', ...argv, '--json'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Json;
}

const pcapPorts = (rx0: string, tx0: string, rx1: string, tx1: string) => ['--vdev', `net_pcap0,rx_pcap=${rx0},tx_pcap=${tx0}`, '--vdev', `net_pcap1,rx_pcap=${rx1},tx_pcap=${tx1}`];

/** `bytes` with an 802.1Q tag of `tci` after the addresses. */
function tagged(bytes: Uint8Array, tci: number): Uint8Array {
  const out = new Uint8Array(bytes.length + 4);
  out.set(bytes.subarray(0, 12));
  out.set([0x81, 0x00, tci >> 8, tci & 0xff], 12);
  out.set(bytes.subarray(12), 16);
  return out;
}

const record = (bytes: Uint8Array, i: number): Pkt => ({ bytes, sec: 1_700_000_000 + i, nsec: i * 1000 });
/** Frames as hex lines: compared as strings, a difference reads at once (and no typed-array diff runs for minutes). */
const hex = (frames: Uint8Array[]) => frames.map((b) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex'));

describe('user-engine examples through testpmd', () => {
  it('vlan-engine tags port 0 -> 1 and untags 1 -> 0; a runt is dropped and counted: rx = tx + drops, pool full', () => {
    const plain = Array.from({ length: 200 }, (_, i) => frame([60, 64, 128, 1514][i % 4]!, i));
    // Port 0 receives untagged frames and one runt; port 1 tagged frames and a few untagged ones.
    writeCapture(path('v-in0.pcap'), [...plain.slice(0, 100), new Uint8Array(10), ...plain.slice(100)].map(record));
    const back = [...plain.slice(0, 120).map((b) => tagged(b, 7)), ...plain.slice(120, 125)];
    writeCapture(path('v-in1.pcap'), back.map(record));
    const j = testpmd([...pcapPorts(path('v-in0.pcap'), path('v-out0.pcap'), path('v-in1.pcap'), path('v-out1.pcap')), '--', `--forward-mode=${VLAN_ENGINE}`, '--total-num-mbufs=8192', '--duration=600']);

    const out1 = hex(readCapture(path('v-out1.pcap')).map((p) => p.bytes));
    assert.deepEqual(out1, hex(plain.map((b) => tagged(b, VLAN_TCI))), 'port 0 -> 1: every frame tagged, in order');
    const out0 = hex(readCapture(path('v-out0.pcap')).map((p) => p.bytes));
    assert.deepEqual(out0, hex(plain.slice(0, 125)), 'port 1 -> 0: tags removed, untagged frames unchanged');

    assert.deepEqual([j.total.rxPackets, j.total.txPackets, j.total.txDropped], [201 + 125, 200 + 125, 1]);
    for (const s of j.streams) assert.equal(s.rxPackets, s.txPackets + s.fwdDropped);
    assert.equal(j.ports.find((p) => p.port === 1)!.txDropped, 1, 'the runt counts as dropped on its way to port 1');
  });

  it('vlan-engine\'s tags read back with tshark as VLAN id 100', { skip: !TSHARK && !REQUIRED && 'tshark is not installed' }, () => {
    const r = spawnSync('tshark', ['-r', path('v-out1.pcap'), '-T', 'fields', '-e', 'vlan.id', '-e', 'vlan.etype'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const rows = r.stdout.trim().split('\n');
    assert.equal(rows.length, 200);
    for (const row of rows) assert.equal(row, `${VLAN_TCI}\t0x0800`);
  });

  it('macswap-engine (TypeScript through the public API) writes the same bytes as the built-in macswap', () => {
    writeCapture(path('m-in.pcap'), Array.from({ length: 300 }, (_, i) => record(frame([60, 64, 128, 1514, 9000][i % 5]!, i), i)));
    writeCapture(path('m-empty.pcap'), []);
    const run = (mode: string, tag: string) => {
      const j = testpmd([...pcapPorts(path('m-in.pcap'), path(`m-${tag}0.pcap`), path('m-empty.pcap'), path(`m-${tag}1.pcap`)), '--', `--forward-mode=${mode}`, '--total-num-mbufs=8192', '--duration=600']);
      assert.deepEqual([j.total.rxPackets, j.total.txPackets], [300, 300]);
      return hex(readCapture(path(`m-${tag}1.pcap`)).map((p) => p.bytes));
    };
    // Frame for frame (the records' times are when each run sent them: macswap clears the rx timestamp flag).
    assert.deepEqual(run(MACSWAP_ENGINE, 'user'), run('macswap', 'builtin'));
    const swapped = readCapture(path('m-user1.pcap'));
    assert.deepEqual(hex([swapped[3]!.bytes.subarray(0, 6)]), hex([frame(1514, 3).subarray(6, 12)]), 'the addresses did swap');
  });

  it('macswap-engine collects no garbage while forwarding; an engine that allocates per packet does', () => {
    const nulls = ['--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64'];
    const allocating = path('allocating.mjs');
    // Each packet's handle escapes in a new array: a real allocation per packet.
    writeFileSync(allocating, 'export let last;\nexport const engine = (b, n) => { for (let i = 0; i < n; i++) last = [b[i]]; return n; };\n');
    const gcOf = (mode: string) => {
      const j = testpmd([...nulls, '--', `--forward-mode=${mode}`, '--duration=1', '--total-num-mbufs=8192']);
      assert.ok(j.total.rxPackets > 0);
      return j.lcores[0]!.gc;
    };
    assert.equal(gcOf(MACSWAP_ENGINE), 0);
    assert.ok(gcOf(allocating)! > 0, 'the GC count sees a per-packet allocation');
  });
});
