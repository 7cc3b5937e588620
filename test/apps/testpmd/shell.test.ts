// The interactive shell driven as a user pipes it: each test feeds commands on stdin to the
// built `dpkit testpmd -i` and checks the output has DPDK 22.11's shape (compared side by side
// with Debian's dpdk-testpmd fed the same lines). Outputs are split at the prompts, so each
// command's answer is checked on its own; nothing here depends on timing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packets, writeCapture } from '../../pcap/captures.js';
import { testpmd, THREE_LCORES } from './run.js';

const SMALL = '--total-num-mbufs=8192';

/** Runs `-i` with `extra` options on `commands` (then quit); @returns what each command printed, in order. */
function shell(commands: string[], extra: string[] = [], eal: string[] = []): string[] {
  const r = testpmd([...eal, '--', '-i', SMALL, ...extra], commands.join('\n') + '\nquit\n');
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}\n${r.stdout}`);
  assert.match(r.stdout, /Bye\.\.\.\n$/);
  // The first piece is the start-up, the last what quit printed.
  return r.stdout.split('testpmd> ').slice(1, commands.length + 1);
}

const dir = mkdtempSync(join(tmpdir(), 'dpkit-shell-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('testpmd shell', () => {
  it('help lists the sections; help SECTION and help all print them; help registers is Bad arguments, as 22.11', () => {
    const [brief, control, display, config, ports, all, registers] = shell(['help', 'help control', 'help display', 'help config', 'help ports', 'help all', 'help registers']);
    assert.match(brief!, /^\nHelp is available for the following sections:\n\n {4}help control {20}: Start and stop forwarding\.\n/);
    assert.match(brief!, / {4}help all {24}: All of the above sections\./);
    assert.match(control!, /^\nControl forwarding:\n-------------------\n\nstart\n {4}Start packet forwarding with current configuration\.\n/);
    assert.match(display!, /show port \(info\|stats\|summary\|xstats\) \(port_id\|all\)\n {4}Display information for port_id, or all\./);
    assert.match(config!, /Configuration:\n--------------\nConfiguration changes only become active when forwarding is started\/restarted\./);
    assert.match(config!, /set fwd \(io\|mac\|macswap\|5tswap\|rxonly\|txonly\|flowgen\|icmpecho\|csum\|rxprobe\|gen\)\n/);
    assert.match(ports!, /Port Operations:\n----------------\n\nport start \(port_id\|all\)\n {4}Start all ports or port_id\./);
    for (const h of ['Control forwarding:', 'Display:', 'Configuration:', 'Port Operations:', 'filters:', 'Traffic Management:', 'Device Operations:', 'Driver specific:']) assert.ok(all!.includes(h), h);
    assert.equal(registers, 'Bad arguments\n');
  });

  it('answers an unknown command with "Command not found", bad arguments with "Bad arguments", and goes on', () => {
    const out = shell(['nonsense', 'set fwd io bogus', 'set fwd bogus', 'show config', 'set verbose', 'set burst tx delay 10 retry', 'show config cores']);
    assert.deepEqual(out.slice(0, 6), ['Command not found\n', 'Bad arguments\n', 'Bad arguments\n', 'Bad arguments\n', 'Bad arguments\n', 'Bad arguments\n']);
    assert.equal(out[6], 'List of forwarding lcores:  1\n', 'the shell went on');
  });

  it('refuses numbers past 32 bits and lists past their bound as "Bad arguments" at once (a range of huge numbers never ended)', () => {
    const cmds = ['set txpkts 99999999999999999999', 'set txpkts 0-4294967295', 'set txpkts 4294967296', 'set portlist 0-99999999999999999999', 'set burst 99999999999999999999', 'set txpkts 65536', 'set txpkts 64,1400', 'set fwd txonly', 'show config rxtx'];
    const out = shell(cmds);
    assert.deepEqual(out.slice(0, 6), Array(6).fill('Bad arguments\n'));
    assert.equal(out[6], '');
    assert.match(out[8]!, /packet len=1464 - nb packet segments=2/, 'the shell went on, the good list set');
  });

  it('show port info: DPDK\'s fields, MTU, promiscuous and allmulticast as set; an invalid port lists the valid ones', () => {
    const [info, , , , , after2, bad] = shell(['show port info 0', 'set promisc all off', 'set allmulti 0 off', 'port config mtu 0 9000', 'set link-down port 0', 'show port info 0', 'show port info 7']);
    const lines = info!.split('\n');
    assert.equal(lines[1], '********************* Infos for port 0  *********************');
    assert.match(lines[2]!, /^MAC address: ([0-9A-F]{2}:){5}[0-9A-F]{2}$/);
    for (const f of ['Device name: net_null0', 'Driver name: net_null', 'Firmware-version: not available', 'Link status: up', 'Link speed: 10 Gbps', 'Link duplex: full-duplex', 'MTU: 1500', 'Promiscuous mode: enabled', 'Allmulticast mode: enabled', 'No RSS offload flow type is supported.', 'Current number of RX queues: 1', 'Max possible RX queues: 1024', 'RXDs number alignment: 1', 'Current number of TX queues: 1', 'Device error handling mode: none']) {
      assert.ok(lines.includes(f), `'${f}' in:\n${info}`);
    }
    for (const f of ['MTU: 9000', 'Promiscuous mode: disabled', 'Allmulticast mode: disabled', 'Link status: down', 'Link speed: None']) assert.ok(after2!.includes(f + '\n'), `'${f}' in:\n${after2}`);
    assert.equal(bad, 'Invalid port 7\nThe valid ports array is [ 0 1 ]\n');
  });

  it('show port summary all: the header and one row per port, in DPDK\'s columns', () => {
    const [summary] = shell(['show port summary all']);
    assert.match(summary!, /^Number of available ports: 2\nPort MAC Address {7}Name {9}Driver {9}Status {3}Link\n0 {4}([0-9A-F]{2}:){5}[0-9A-F]{2} net_null0 {4}net_null {7}up {7}10 Gbps\n1 {4}.* net_null1 /);
  });

  it('show port xstats and clear port xstats: generic names first, counts from zero after the clear', () => {
    const [before, , , , cleared] = shell(['show port xstats 0', 'start', 'stop', 'clear port xstats all', 'show port xstats all']);
    assert.match(before!, /^###### NIC extended statistics for port 0 \nrx_good_packets: 0\ntx_good_packets: 0\nrx_good_bytes: 0\n/);
    assert.match(before!, /\nrx_q0_packets: 0\nrx_q0_bytes: 0\nrx_q0_errors: 0\ntx_q0_packets: 0\ntx_q0_bytes: 0\n$/);
    assert.match(cleared!, /^###### NIC extended statistics for port 0 \nrx_good_packets: 0\n[\s\S]*###### NIC extended statistics for port 1 \nrx_good_packets: 0\n/);
  });

  it('show config rxtx / cores / fwd, as testpmd prints them', () => {
    const [rxtx, cores, fwd] = shell(['show config rxtx', 'show config cores', 'show config fwd'], ['--nb-cores=2'], THREE_LCORES);
    assert.match(rxtx!, /^ {2}io packet forwarding packets\/burst=32\n {2}nb forwarding cores=2 - nb forwarding ports=2\n {2}port 0: RX queue number: 1 Tx queue number: 1\n {4}Rx offloads=0x0 Tx offloads=0x0\n {4}RX queue: 0\n {6}RX desc=\d+ - RX free threshold=0\n {6}RX threshold registers: pthresh=0 hthresh=0  wthresh=0\n {6}RX Offloads=0x0\n {4}TX queue: 0\n {6}TX desc=\d+ - TX free threshold=0\n/);
    assert.equal(cores, 'List of forwarding lcores:  1  2\n');
    assert.match(fwd!, /^io packet forwarding - ports=2 - cores=2 - streams=2 - NUMA support enabled, MP allocation mode: native\nLogical Core 1 \(socket 0\) forwards packets on 1 streams:\n/);
  });

  it('show port N rss-hash, show device info all, and descriptor status answered as DPDK answers for a driver that cannot tell', () => {
    const [rss, dev, one, rxd, txd, badq] = shell(['show port 0 rss-hash', 'show device info all', 'show device info net_null1', 'show port 0 rxq 0 desc 0 status', 'show port 1 txq 0 desc 3 status', 'show port 0 rxq 5 desc 0 status'], [], ['--vdev', 'net_null0,size=128', '--vdev', 'net_null1']);
    assert.equal(rss, 'dev_info did not provide a valid hash key size\n');
    assert.match(dev!, /^\n\*{21} Infos for device net_null0 \*{21}\nBus name: vdev\nBus information: \nDriver name: net_null\nDevargs: size=128\nConnect to socket: 0\n\n\tPort id: 0 \n\tMAC address: .*\n\tDevice name: net_null0\n\tDevice speed capability: Autonegotiate \(all speeds\)\n\n\*{21} Infos for device net_null1 /);
    assert.match(one!, /^\n\*{21} Infos for device net_null1 \*{21}\n/);
    assert.doesNotMatch(one!, /net_null0/);
    assert.equal(rxd, 'Invalid input: queue id = 0, desc id = 0\n');
    assert.equal(txd, 'Invalid input: queue id = 0, desc id = 3\n');
    assert.equal(badq, 'Invalid input: queue id = 5, desc id = 0\n');
  });

  it('set nbcore / nbport / portlist change the forwarding configuration, refusing what does not exist', () => {
    const out = shell(['set nbcore 1', 'set nbcore 3', 'set nbcore 0', 'set nbport 1', 'show config fwd', 'set nbport 5', 'set portlist 1,0', 'set portlist 0,7', 'show config fwd'], [], THREE_LCORES);
    assert.equal(out[0], 'Number of forwarding cores set to 1\n');
    assert.equal(out[1], 'nb fwd cores 3 > 2 (max. number of configured lcores) - ignored\n');
    assert.match(out[2]!, /^nb fwd cores 0 < 1/);
    assert.equal(out[3], 'Number of forwarding ports set to 1\n\nWarning! port-topology=paired and odd forward ports number, the last port will pair with itself.\n\n');
    assert.match(out[4]!, /ports=1 - cores=1 - streams=1 [\s\S]*RX P=0\/Q=0 \(socket 0\) -> TX P=0\/Q=0/);
    assert.equal(out[5], 'nb fwd ports 5 > 2 (number of configured ports) - ignored\n');
    assert.equal(out[6], 'previous number of forwarding ports 1 - changed to number of configured ports 2\n');
    assert.equal(out[7], 'Invalid port 7\n');
    assert.match(out[8]!, /RX P=1\/Q=0 \(socket 0\) -> TX P=0\/Q=0 [\s\S]*RX P=0\/Q=0 \(socket 0\) -> TX P=1\/Q=0/);
  });

  it('set eth-peer sets the peer shown in the streams, refusing a bad port or address in DPDK\'s words', () => {
    const [ok, fwd, badPort, badMac] = shell(['set eth-peer 1 02:00:00:00:00:09', 'show config fwd', 'set eth-peer 9 02:00:00:00:00:09', 'set eth-peer 0 zz']);
    assert.equal(ok, '');
    assert.match(fwd!, /RX P=0\/Q=0 \(socket 0\) -> TX P=1\/Q=0 \(socket 0\) peer=02:00:00:00:00:09/);
    assert.equal(badPort, 'Error: Invalid port number 9\n');
    assert.equal(badMac, 'Error: Invalid ethernet address: zz\n');
  });

  it('set promisc / allmulti / link-up / link-down show in port info; a bad port fails as DPDK\'s', () => {
    const out = shell(['set promisc 0 off', 'set allmulti all off', 'set link-down port 1', 'show port summary all', 'set link-up port 1', 'set promisc 0 on', 'show port info 0', 'set link-up port 9', 'set promisc 7 on']);
    assert.deepEqual(out.slice(0, 3), ['', '', '']);
    assert.match(out[3]!, /\n1 {4}.* net_null1 {4}net_null {7}down {5}None\n/);
    assert.match(out[6]!, /Promiscuous mode: enabled\nAllmulticast mode: disabled\n/);
    assert.equal(out[7], 'Invalid port_id=9\n\nSet link up fail.\n');
    assert.equal(out[8], 'Invalid port_id=7\nError during enabling promiscuous mode for port 7: No such device\n');
  });

  it('set verbose 1 prints every received packet as DPDK does; verbose 0 stops it', () => {
    const cap = join(dir, 'three.pcap');
    writeCapture(cap, packets([64, 100, 1000]));
    const [level, start, stats] = shell(['set verbose 1', 'start', 'show fwd stats all', 'stop', 'set verbose 0'], [], ['--vdev', `net_pcap0,rx_pcap=${cap}`, '--vdev', 'net_null1,no-rx=1']);
    assert.equal(level, 'Change verbose level from 0 to 1\n');
    // The capture is read within the first pass, which start() waits for.
    assert.match(start!, /\nport 0\/queue 0: received 3 packets\n {2}src=02:00:00:00:01:00 - dst=02:00:00:00:00:00 - pool=mb_pool_0 - type=0x0800 - length=64 - nb_segs=1 - timestamp \d+ {2}- Receive queue=0x0\n {2}ol_flags: RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN RTE_MBUF_F_RX_OUTER_L4_CKSUM_UNKNOWN \n {2}src=02:00:00:00:01:01 .* length=100 - nb_segs=1 /);
    assert.match(stats!, /Forward statistics for port 0 {2}-+\n {2}RX-packets: 3 /);
  });

  it('set fwd MODE retry and set burst tx delay/retry: "with retry" in the mode and the rxtx configuration, forwarding unchanged', () => {
    const out = shell(['set burst tx delay 2 retry 3', 'set fwd mac retry', 'show config rxtx', 'start', 'stop', 'set fwd io', 'show config rxtx']);
    assert.equal(out[0], '');
    assert.equal(out[1], 'Set mac packet forwarding mode with retry\n');
    assert.match(out[2]!, /^ {2}mac packet forwarding with retry packets\/burst=32\n/);
    assert.match(out[4]!, /Accumulated forward statistics for all ports\+*\n {2}RX-packets: [1-9]\d* /);
    assert.equal(out[5], 'Set io packet forwarding mode\n');
    assert.match(out[6]!, /^ {2}io packet forwarding packets\/burst=32\n/);
  });

  it('port stop / start / close / reset with DPDK\'s messages, once per command', () => {
    const out = shell(['port stop all', 'port stop 0', 'port start 0', 'port start all', 'port close 1', 'port stop 1', 'port close 1', 'show port summary all', 'port reset all', 'port stop 0', 'port reset 0', 'port start all', 'port close 9']);
    assert.equal(out[0], 'Stopping ports...\nChecking link statuses...\nDone\n');
    assert.equal(out[1], 'Stopping ports...\nDone\n');
    assert.match(out[2]!, /^Port 0: ([0-9A-F]{2}:){5}[0-9A-F]{2}\nChecking link statuses\.\.\.\nDone\n$/);
    assert.match(out[3]!, /^Port 0 is now not stopped\nPort 1: .*\nChecking link statuses\.\.\.\nDone\n$/);
    assert.equal(out[4], 'Closing ports...\nCannot close started device (port 1)\nDone\n');
    assert.equal(out[6], 'Closing ports...\nPort 1 is closed\nDone\n');
    assert.match(out[7]!, /^Number of available ports: 1\n/);
    assert.equal(out[8], 'Can not reset port(s), please stop port(s) first.\n');
    assert.equal(out[10], 'Resetting ports...\nDone\n');
    assert.match(out[11]!, /^Configuring Port 0 \(socket 0\)\nPort 0: .*\nChecking link statuses\.\.\.\nDone\n$/);
    assert.equal(out[12], 'Invalid port 9\n');
  });

  it('port config all rxq/txq/rxd/txd apply at the next port start; refused while ports run or beyond the driver\'s limits', () => {
    const out = shell(['port config all rxq 2', 'port stop all', 'port config all rxq 2', 'port config all txq 2', 'port config all rxd 512', 'port config all txd 512', 'port config all rxq 5000', 'port start all', 'show config rxtx', 'show config fwd', 'start', 'stop']);
    assert.equal(out[0], 'Please stop all ports first\n');
    assert.deepEqual(out.slice(2, 6), ['', '', '', '']);
    assert.equal(out[6], "Fail: input rxq (5000) can't be greater than max_rx_queues (1024) of port 0\n");
    assert.match(out[7]!, /^Configuring Port 0 \(socket 0\)\nPort 0: .*\nConfiguring Port 1 \(socket 0\)\nPort 1: .*\nChecking link statuses\.\.\.\nDone\n$/);
    assert.match(out[8]!, /port 0: RX queue number: 2 Tx queue number: 2\n[\s\S]*RX desc=512 [\s\S]*TX desc=512 /);
    assert.match(out[9]!, /streams=4/);
    assert.match(out[11]!, /Accumulated forward statistics/);
  });

  it('port config mtu sets the MTU within ethdev\'s limits', () => {
    const [ok, info, low, bad] = shell(['port config mtu 1 9000', 'show port info 1', 'port config mtu 0 60', 'port config mtu 5 1500']);
    assert.equal(ok, '');
    assert.match(info!, /\nMTU: 9000\n/);
    assert.equal(low, 'MTU (60) < device min MTU (68) for port_id 0\n');
    assert.equal(bad, 'Invalid port 5\n');
  });

  it('show fwd stats all right after start shows traffic: start returns once every lcore has polled', () => {
    const [, stats] = shell(['start', 'show fwd stats all', 'stop'], ['--nb-cores=2', '--rxq=2', '--txq=2'], THREE_LCORES);
    for (const p of [0, 1]) {
      const m = new RegExp(`Forward statistics for port ${p} +-+\\n  RX-packets: (\\d+)`).exec(stats!);
      assert.ok(m && Number(m[1]) > 0, `port ${p} counted packets:\n${stats}`);
    }
    // Four streams on two ports: each also shows apart, before the ports, as testpmd's fwd_stream_stats_display.
    for (const p of [0, 1]) {
      for (const q of [0, 1]) {
        const m = new RegExp(`------- Forward Stats for RX Port= ${p}/Queue= ${q} -> TX Port= ${1 - p}/Queue= ${q} -------\\n  RX-packets: (\\d+) +TX-packets: (\\d+) +TX-dropped: \\d+`).exec(stats!);
        assert.ok(m && Number(m[1]) > 0 && Number(m[2]) > 0, `stream port ${p} queue ${q} counted packets:\n${stats}`);
      }
    }
    assert.ok(stats!.indexOf('Forward Stats for RX') < stats!.indexOf('Forward statistics for port 0'), 'the streams come first');
  });

  it('start refuses while a port is stopped, stop while none runs', () => {
    const out = shell(['port stop 1', 'start', 'stop', 'port start 1', 'start', 'stop']);
    assert.equal(out[1], 'Not all ports were started\n');
    assert.equal(out[2], 'Packet forwarding not started\n');
    assert.match(out[5]!, /Accumulated forward statistics/);
  });
});
