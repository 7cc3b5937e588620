import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { native } from '../../../src/native/native.js';
import { detectedCpus } from '../../../src/eal/affinity.js';
import { startTestpmd, testpmd, THREE_LCORES, until } from './run.js';

const args = (s: string) => s.split(/\s+/).filter(Boolean);
const SMALL = '--total-num-mbufs=8192';

interface Json {
  forwardMode: string;
  seconds: number;
  mpps: { rx: number; tx: number };
  total: { rxPackets: number; txPackets: number; txDropped: number; rxDropped: number };
  ports: { port: number; rxPackets: number; txPackets: number; txDropped: number; nic: { ipackets: number; opackets: number } }[];
  lcores: { lcore: number; cpu: number | null }[];
  streams: { lcore: number; rxPort: number; txPort: number; rxPackets: number; txPackets: number; fwdDropped: number }[];
}

/** Engines that send on what they receive: every stream's rx = tx + dropped. */
const FORWARDING = new Set(['io', 'mac', 'macswap', '5tswap', 'csum']);

describe('dpkit testpmd', () => {
  it('runs with no arguments at all: io on two net_null ports (the README command)', () => {
    const r = testpmd(args(`-- --duration=0.5 ${SMALL}`));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /io packet forwarding - ports=2 - cores=1 - streams=2/);
    assert.match(r.stdout, /RX P=0\/Q=0 \(socket 0\) -> TX P=1\/Q=0 \(socket 0\) peer=02:00:00:00:00:01/);
    assert.match(r.stdout, /Accumulated forward statistics for all ports/);
    assert.match(r.stdout, /Bye\.\.\./);
  });

  const expectations: Record<string, (j: Json) => void> = {
    io: (j) => assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped),
    mac: (j) => assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped),
    macswap: (j) => assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped),
    rxonly: (j) => assert.equal(j.total.txPackets, 0),
    txonly: (j) => assert.equal(j.total.rxPackets, 0),
    '5tswap': (j) => assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped),
    csum: (j) => assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped),
    // net_null's packets are all zeros: no echo request among them, so nothing is answered.
    icmpecho: (j) => assert.equal(j.total.txPackets, 0),
    // flowgen drains what it receives and sends what it generates.
    flowgen: (j) => assert.ok(j.total.txPackets > 0),
    // rxprobe receives, checks and frees: net_null's zeros carry no probe.
    rxprobe: (j) => assert.equal(j.total.txPackets, 0),
  };
  for (const [mode, check] of Object.entries(expectations)) {
    it(`forwards with ${mode} for a fixed time, ends with the pool full and consistent statistics`, () => {
      const r = testpmd(args(`--vdev net_null0 --vdev net_null1 -- --forward-mode=${mode} --duration=0.4 --json ${SMALL}`));
      assert.equal(r.code, 0, r.stderr);
      const j = JSON.parse(r.stdout) as Json;
      assert.equal(j.forwardMode, mode);
      assert.ok(j.seconds >= 0.4, `forwarding time ${j.seconds} s: every lcore forwards the whole --duration from its launch`);
      const rate = (mode === 'txonly' || mode === 'flowgen' ? j.total.txPackets : j.total.rxPackets) / j.seconds / 1e6;
      assert.ok(Math.abs(rate - (mode === 'txonly' || mode === 'flowgen' ? j.mpps.tx : j.mpps.rx)) < 1e-6 * rate + 1e-9);
      assert.ok(mode === 'txonly' || mode === 'flowgen' ? j.total.txPackets > 0 : j.total.rxPackets > 0, 'packets moved');
      check(j);
      for (const p of j.ports) assert.equal(p.rxPackets, p.nic.ipackets, 'forward stats agree with the port counters');
      assert.equal(j.streams.length, 2);
      if (FORWARDING.has(mode)) for (const s of j.streams) assert.equal(s.rxPackets, s.txPackets + s.fwdDropped, `stream ${s.rxPort}->${s.txPort}`);
    });
  }

  it('forwards on 2 lcores with 2 queues per port: every stream delivers what it receives', () => {
    const r = testpmd(args(`${THREE_LCORES.join(' ')} -- --nb-cores=2 --rxq=2 --txq=2 --duration=0.5 --json ${SMALL}`));
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as Json;
    assert.equal(j.streams.length, 4);
    assert.deepEqual([...new Set(j.streams.map((s) => s.lcore))].sort(), [1, 2], 'streams on both lcores');
    for (const s of j.streams) {
      assert.ok(s.rxPackets > 0);
      assert.equal(s.rxPackets, s.txPackets + s.fwdDropped);
    }
    assert.equal(j.total.rxPackets, j.total.txPackets + j.total.txDropped);
  });

  it('forwards through a vhost / virtio_user pair on 2 lcores, host and guest each on its own', () => {
    const sock = `/tmp/dpkit-cli-${process.pid}.sock`;
    const r = testpmd(args(`${THREE_LCORES.join(' ')} --vdev net_null0 --vdev net_vhost0,iface=${sock} --vdev virtio_user0,path=${sock},queue_size=256 --vdev net_null1 -- --nb-cores=2 --duration=0.6 --json ${SMALL}`));
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as Json;
    const [, host, guest] = j.ports as [Json['ports'][0], Json['ports'][0], Json['ports'][0]];
    assert.ok(host.txPackets > 0 && guest.txPackets > 0, 'both directions carried packets');
    // What the host enqueued the guest received, but for what was in its rx ring at stop; and the reverse.
    assert.ok(guest.rxPackets <= host.txPackets && host.txPackets - guest.rxPackets <= 256, `host tx ${host.txPackets}, guest rx ${guest.rxPackets}`);
    assert.ok(host.rxPackets <= guest.txPackets && guest.txPackets - host.rxPackets <= 256, `guest tx ${guest.txPackets}, host rx ${host.rxPackets}`);
    for (const s of j.streams) assert.equal(s.rxPackets, s.txPackets + s.fwdDropped, `stream ${s.rxPort}->${s.txPort}`);
  });

  it('pins lcores as --lcores places them, and refuses lcores on CPUs this machine lacks or may not use', { skip: !native() && 'native shim not built' }, () => {
    const r = testpmd(args(`--lcores 0@0,1@0,2@0 -- --nb-cores=2 --rxq=2 --txq=2 --duration=0.3 --json ${SMALL}`));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as Json).lcores.map(({ lcore, cpu }) => ({ lcore, cpu })), [{ lcore: 1, cpu: 0 }, { lcore: 2, cpu: 0 }]);
    // As EAL: -l names CPUs of this machine; more lcores than CPUs take --lcores with @.
    const machine = detectedCpus().length;
    const f = testpmd(args(`-l 0,${machine} -- --duration=0.3`));
    assert.equal(f.code, 2, f.stderr);
    assert.match(f.stderr, new RegExp(`^dpkit: -l 0,${machine}: invalid core list, please check specified cores are part of 0-${machine - 1} `));
    const cpus = native()!.getAffinity();
    const beyond = cpus[cpus.length - 1]! + 1;
    const bad = testpmd(args(`--lcores 0@0,1@${beyond} -- --duration=0.3`));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, new RegExp(`lcore 1 on CPU ${beyond}, but this process may only use CPUs`));
  });

  it('keeps packets circulating between looped net_ring ports after --tx-first, and drains them at exit', () => {
    const r = testpmd(args(`--vdev net_ring0 --vdev net_ring1 -- --tx-first --duration=0.4 --json ${SMALL}`));
    assert.equal(r.code, 0, r.stderr); // exit 0: the pool was full again at close
    const j = JSON.parse(r.stdout) as Json;
    // The tx_first bursts (32 per stream) came back at least once; io sent on what it received.
    assert.ok(j.total.rxPackets >= 64, `packets went round (${j.total.rxPackets})`);
    assert.equal(j.total.txPackets + j.total.txDropped, j.total.rxPackets + 64, 'sent: the tx_first bursts and what came back');
  });

  it('prints DPDK-shaped periodic port statistics', () => {
    const r = testpmd(args(`-- --duration=1.6 --stats-period=1 ${SMALL}`));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Port statistics ====================================\n\n  ######################## NIC statistics for port 0  ########################\n  RX-packets: \d+ +RX-missed: 0 +RX-bytes:  \d+\n  RX-errors: 0\n  RX-nombuf:  0 +\n  TX-packets: \d+ +TX-errors: 0 +TX-bytes:  \d+\n\n  Throughput \(since last show\)\n  Rx-pps: +\d+ +Rx-bps: +\d+\n  Tx-pps: +\d+ +Tx-bps: +\d+\n  #{76}/);
  });

  it('rejects bad options and devargs with one clear line and exit code 2', () => {
    for (const [argv, msg] of [
      ['-- --forward-mode=bogus', /--forward-mode=bogus: unknown \(available: io/],
      ['--vdev net_null0,sise=64', /unknown devarg 'sise' for net_null/],
      ['-- --rxq=0', /--rxq=0: expected an integer/],
      ['-- --frobnicate', /^dpkit: testpmd: unknown option '--frobnicate' \(dpkit testpmd --help lists the options\)$/],
      ['-- --forward-mode=txonly --txpkts=10', /^dpkit: txonly: packet length 10 is shorter than the 42-byte Ethernet\/IPv4\/UDP header$/],
      ['-- --forward-mode=txonly --txpkts=20000', /^dpkit: txonly: --txpkts 20000: each segment must be 1\.\.\d+ bytes/],
      ['-- --forward-mode=flowgen --txpkts=4000', /^dpkit: flowgen: packet length 4000 .* does not fit one mbuf/],
      ['-- --tx-first --txpkts=10', /^dpkit: txonly: packet length 10 is shorter/],
      ['--vdev net_pcap0,rx_pcap=/nonexistent.pcap', /^dpkit: net_pcap0: rx_pcap=\/nonexistent\.pcap: cannot open: ENOENT: no such file or directory$/],
      ['--vdev net_pcap0,tx_pcap=/nonexistent/out.pcap', /^dpkit: net_pcap0: tx_pcap=\/nonexistent\/out\.pcap: cannot create: ENOENT: no such file or directory$/],
    ] as const) {
      const r = testpmd(args(argv));
      assert.equal(r.code, 2, `${argv}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${argv}: one line:\n${r.stderr}`);
      assert.match(r.stderr.trim(), msg);
      assert.doesNotMatch(r.stdout, /Configuring Port|Usage:/, `${argv}: refused before any port started`);
    }
  });

  it('stops on SIGINT, printing the final statistics as DPDK does', async () => {
    const t = startTestpmd(['--', SMALL]);
    await t.waitFor('Press enter to exit');
    t.child.kill('SIGINT');
    assert.equal(await t.exit, 0);
    assert.match(t.out(), /Signal 2 received, preparing to exit\.\.\./);
    assert.match(t.out(), /Forward statistics for port 1/);
  });

  it('stops on a newline from a piped stdin, as DPDK does ("Press enter to exit")', async () => {
    const t = startTestpmd(['--', '--stats-period=1', SMALL]);
    await t.waitFor('Press enter to exit');
    t.child.stdin.write('\n');
    assert.equal(await t.exit, 0);
    assert.match(t.out(), /Accumulated forward statistics for all ports[\s\S]*Bye\.\.\./);
  });

  it('exits at once at the end of stdin without --stats-period or --duration, and forwards on with them', async () => {
    const r = testpmd(['--', SMALL]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Press enter to exit[\s\S]*Accumulated forward statistics[\s\S]*Bye\.\.\./);
    const t = startTestpmd(['--', '--stats-period=1', SMALL]);
    t.child.stdin.end();
    // Still forwarding a period after stdin ended: the statistics come, then SIGINT ends it.
    await t.waitFor('Port statistics ====');
    t.child.kill('SIGINT');
    assert.equal(await t.exit, 0);
    assert.match(t.out(), /Signal 2 received/);
  });

  it('survives repeated start/stop from the shell with the pool full at quit', () => {
    const r = testpmd(args(`-- -i ${SMALL}`), 'start\nstop\nstart tx_first\nstop\nset fwd txonly\nstart\nstop\nquit\n');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.match(/Accumulated forward statistics/g)?.length, 3);
  });

  it('runs the interactive shell from stdin: start, stats while forwarding, stop, quit', async () => {
    const t = startTestpmd(['--', '-i', SMALL]);
    const prompts = () => t.out().split('testpmd> ').length - 1;
    // Sends a command and waits for the prompt after it: the command has run.
    const send = async (line: string) => {
      const n = prompts();
      t.child.stdin.write(line + '\n');
      await until(() => prompts() > n, () => `no prompt after '${line}' in:\n${t.out()}`);
    };
    await t.waitFor('testpmd> ');
    await send('show config fwd');
    await send('set fwd macswap');
    await send('start'); // returns with the lcores polling
    await sleep(100);
    await send('show port stats all');
    await send('set burst 64');
    await send('stop');
    await send('show fwd stats all');
    await send('nonsense');
    t.child.stdin.write('quit\n');
    t.child.stdin.end();
    const out = t.out();
    assert.equal(await t.exit, 0, out);
    assert.match(out, /Set macswap packet forwarding mode/);
    assert.match(out, /Please stop forwarding first/, 'set burst while forwarding is refused');
    const rx = /NIC statistics for port 0  #+\n  RX-packets: (\d+)/.exec(out);
    assert.ok(rx && Number(rx[1]) > 0, 'statistics read while forwarding show traffic');
    assert.match(out, /Forward statistics for port 0/);
    assert.match(out, /testpmd> Command not found\n/);
    assert.match(t.out(), /Bye\.\.\./);
  });
});
