// dpkit's captures against the real tools: what dpkit writes, Wireshark's tools read;
// what tcpdump and editcap write, dpkit reads.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Bytes, frame, packets, readCapture, writeCapture } from './captures.js';
import { writeFileSync } from 'node:fs';

const HAVE = ['tshark', 'capinfos', 'editcap', 'tcpdump', 'ip'].every((t) => ['/usr/bin/', '/usr/sbin/', '/bin/', '/sbin/'].some((d) => existsSync(d + t)));
const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const skip = !HAVE && !REQUIRED && 'tshark / tcpdump / iproute2 not installed (.ci/run installs them)';
const dir = mkdtempSync(join(tmpdir(), 'dpkit-tools-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** "sec.nnnnnnnnn" as tshark prints frame.time_epoch of a nanosecond capture. */
const epoch = (sec: number, nsec: number) => `${sec}.${String(nsec).padStart(9, '0')}`;

describe('captures and the real tools', { skip }, () => {
  it('writes pcap and pcapng that tshark and capinfos read: counts, lengths, nanosecond times', () => {
    const pkts = packets([60, 64, 1514, 9000, 100]);
    for (const format of ['pcap', 'pcapng'] as const) {
      const f = path(`dpkit.${format}`);
      writeCapture(f, pkts, { format });
      assert.match(run('capinfos', ['-c', '-M', f]), /Number of packets:\s+5\b/);
      const rows = run('tshark', ['-r', f, '-T', 'fields', '-e', 'frame.len', '-e', 'frame.cap_len', '-e', 'frame.time_epoch', '-e', 'eth.type']).trim().split('\n');
      assert.deepEqual(
        rows.map((l) => l.split('\t')),
        pkts.map((p) => [String(p.bytes.length), String(p.bytes.length), epoch(p.sec, p.nsec), '0x0800']),
        format,
      );
    }
  });

  it('reads what editcap converts: pcap <-> pcapng, microseconds <-> nanoseconds', () => {
    const pkts = packets([64, 70, 1514, 300]);
    writeCapture(path('base.pcap'), pkts);
    const conversions: [string, string, boolean][] = [
      ['pcapng', 'to.pcapng', true],
      ['pcap', 'to-us.pcap', false],
      ['nsecpcap', 'to-ns.pcap', true],
    ];
    for (const [fmt, name, ns] of conversions) {
      run('editcap', ['-F', fmt, path('base.pcap'), path(name)]);
      const back = readCapture(path(name));
      assert.equal(back.length, pkts.length, name);
      back.forEach((r, i) => {
        assert.deepEqual(r.bytes, pkts[i]!.bytes, `${name} #${i}`);
        assert.deepEqual([r.sec, r.nsec], [pkts[i]!.sec, ns ? pkts[i]!.nsec : Math.floor(pkts[i]!.nsec / 1000) * 1000], `${name} #${i}`);
      });
    }
    // And back from pcapng to a microsecond pcap that dpkit wrote as pcapng first.
    writeCapture(path('dpkit.pcapng'), pkts, { format: 'pcapng', resolution: 'us' });
    run('editcap', ['-F', 'pcap', path('dpkit.pcapng'), path('back.pcap')]);
    assert.deepEqual(readCapture(path('back.pcap')).map((r) => r.bytes.length), pkts.map((p) => p.bytes.length));
  });

  it('reads what tcpdump captured of a real ping between two network namespaces', async () => {
    const tag = `dpk${process.pid % 100000}`;
    const [a, b] = [`${tag}a`, `${tag}b`];
    const ip = (...args: string[]) => run('ip', args);
    const cleanup = () => {
      spawnSync('ip', ['netns', 'del', a]);
      spawnSync('ip', ['netns', 'del', b]);
    };
    cleanup();
    try {
      ip('netns', 'add', a);
      ip('netns', 'add', b);
      ip('link', 'add', `${tag}va`, 'type', 'veth', 'peer', 'name', `${tag}vb`);
      ip('link', 'set', `${tag}va`, 'netns', a);
      ip('link', 'set', `${tag}vb`, 'netns', b);
      ip('-n', a, 'addr', 'add', '10.231.0.1/24', 'dev', `${tag}va`);
      ip('-n', b, 'addr', 'add', '10.231.0.2/24', 'dev', `${tag}vb`);
      ip('-n', a, 'link', 'set', `${tag}va`, 'up');
      ip('-n', b, 'link', 'set', `${tag}vb`, 'up');
      for (const precision of ['micro', 'nano']) {
        const file = path(`ping-${precision}.pcap`);
        const dump = spawn('ip', ['netns', 'exec', a, 'tcpdump', '-i', `${tag}va`, '-w', file, '-U', '--immediate-mode', '--time-stamp-precision', precision, 'icmp'], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        await new Promise<void>((resolve, reject) => {
          dump.stderr.on('data', (d: Buffer) => {
            err += d.toString();
            if (err.includes('listening on')) resolve();
          });
          dump.once('exit', (code) => reject(new Error(`tcpdump exited (${code}): ${err}`)));
        });
        run('ip', ['netns', 'exec', a, 'ping', '-c', '3', '-i', '0.2', '-W', '2', '10.231.0.2']);
        const exited = new Promise((resolve) => dump.once('exit', resolve));
        dump.kill('SIGINT');
        await exited;
        const recs = readCapture(file);
        const icmp = recs.filter((r) => r.bytes[12] === 0x08 && r.bytes[13] === 0x00 && r.bytes[23] === 1);
        const types = icmp.map((r) => r.bytes[14 + 20]);
        assert.equal(types.filter((t) => t === 8).length, 3, `${precision}: 3 echo requests`);
        assert.equal(types.filter((t) => t === 0).length, 3, `${precision}: 3 echo replies`);
        const now = Date.now() / 1000;
        assert.ok(recs.every((r) => Math.abs(r.sec - now) < 120), 'timestamps of now');
        // dpkit and tshark agree on every timestamp, to the capture's precision.
        const times = run('tshark', ['-r', file, '-T', 'fields', '-e', 'frame.time_epoch']).trim().split('\n');
        assert.deepEqual(times.map((t) => t.replace(/0+$/, '')), recs.map((r) => epoch(r.sec, r.nsec).replace(/0+$/, '')));
      }
    } finally {
      cleanup();
    }
  });

  it('reads records longer than the snaplen as tcpdump does: same count, same bytes', () => {
    const f = path('cut-by-snaplen.pcap');
    const b = new Bytes(true).u32(0xa1b2c3d4).u16(2).u16(4).u32(0).u32(0).u32(13).u32(1);
    const sizes = [38, 13, 12, 200];
    sizes.forEach((n, i) => b.u32(1).u32(i).u32(n).u32(n).bytes(frame(n, i)));
    writeFileSync(f, b.build());
    // tcpdump -xx prints each packet's captured bytes in hex, 16 to a line.
    const dumped = run('tcpdump', ['-r', f, '-xx']).split(/\n(?=\S)/).map((p) => p.split('\n').slice(1).join(' ').replace(/0x[0-9a-f]+:/g, '').replace(/\s+/g, ''));
    const ours = readCapture(f).map((r) => Buffer.from(r.bytes).toString('hex'));
    assert.equal(ours.length, sizes.length);
    assert.deepEqual(ours, dumped.filter((x) => x !== ''));
  });
});
