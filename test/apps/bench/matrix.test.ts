import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOverrides } from '../../../src/apps/bench/main.js';
import { comparisons, expandCells, testpmdArgs, validateConfig, vhostUserArgs, type MatrixConfig } from '../../../src/apps/bench/matrix.js';
import { KERNEL_PORTS, PCAP_LIVE, kernelTestpmdArgs } from '../../../src/apps/bench/kernel-ports.js';
import { benchAliases, presets } from '../../../src/apps/bench/presets.js';

const base = (): MatrixConfig => ({
  name: 't',
  title: 'test',
  matrix: [
    { engines: ['io', 'macswap'], sizes: [64, 1518], lcores: [1] },
    { engines: ['io'], sizes: [64], lcores: [1, 2] },
  ],
  variants: [{ name: 'dpdk', system: 'dpdk' }, { name: 'dpkit' }, { name: 'ts', args: ['--datapath=ts'] }],
  pairs: 5,
  seconds: 3,
  warmup: 1,
});

describe('bench matrix', () => {
  it('expands blocks into their cross products, in order, without duplicates, burst 32 by default', () => {
    assert.deepEqual(
      expandCells(base()).map((c) => c.id),
      ['io 64 B 1c burst 32', 'io 1518 B 1c burst 32', 'macswap 64 B 1c burst 32', 'macswap 1518 B 1c burst 32', 'io 64 B 2c burst 32'],
    );
  });

  it('compares every arm with the first unless told otherwise', () => {
    assert.deepEqual(comparisons(base(), ['dpdk', 'dpkit', 'ts']), [['dpdk', 'dpkit'], ['dpdk', 'ts']]);
    assert.deepEqual(comparisons({ ...base(), compare: [['dpkit', 'ts'], ['dpdk', 'ts']] }, ['dpkit', 'ts']), [['dpkit', 'ts']], 'pairs with a missing arm drop out');
  });

  it('names the first problem of a bad config', () => {
    const bad = (patch: object, re: RegExp) => assert.throws(() => validateConfig({ ...base(), ...patch } as MatrixConfig, 'cfg.json'), re);
    bad({ matrix: [] }, /cfg.json: matrix: expected a non-empty list/);
    bad({ matrix: [{ engines: ['iox'] }] }, /matrix\[0\].engines: expected some of io, mac/);
    bad({ matrix: [{ sizes: [32] }] }, /matrix\[0\].sizes: expected a non-empty list of integers in \[64, 9000\]/);
    bad({ variants: [{ name: 'a' }, { name: 'a' }] }, /arm 'a' given twice/);
    bad({ variants: [{ name: 'a', system: 'vpp' }] }, /variants.a.system: expected dpkit or dpdk/);
    bad({ compare: [['dpdk', 'nope']] }, /compare: \["dpdk","nope"\] is not a pair of arm names/);
    bad({ pairs: 1 }, /pairs: expected an integer of at least 2/);
    bad({ variants: [{ name: 'old', checkout: '/nonexistent' }] }, /variants.old.checkout: \/nonexistent is not a dpkit checkout \(no bin\/dpkit.js\)/);
    bad({ variants: [{ name: 'd', system: 'dpdk', checkout: '.' }] }, /variants.d.checkout: only arms with a dpkit side run another checkout/);
    bad({ seconds: 1.5 }, /seconds: expected a whole number/);
    for (const p of presets.values()) assert.equal(validateConfig(p, p.name), p);
  });

  it('places lcores the same way for both systems: main on CPU 0, lcore i on CPU i mod CPUs', () => {
    const [cell] = expandCells({ ...base(), matrix: [{ engines: ['macswap'], sizes: [128], lcores: [2], bursts: [64] }] });
    const a = testpmdArgs(cell!, { name: 'x', args: ['--macswap-kernel=simd'] }, 2);
    assert.deepEqual(a.eal, ['--lcores', '0@0,1@1,2@0', '--vdev', 'net_null0,size=128', '--vdev', 'net_null1,size=128']);
    assert.deepEqual(a.app, ['--forward-mode=macswap', '--burst=64', '--txpkts=128', '--nb-cores=2', '--rxq=2', '--txq=2', '--macswap-kernel=simd']);
    assert.equal(testpmdArgs(cell!, { name: 'x' }, 4).eal[1], '0@0,1@1,2@2');
  });

  it('seed-txfree (alias txfree): cells per tx threshold pair, arms per free mode, two cabled nicsim ports fed by tx_first', () => {
    const p = presets.get(benchAliases.get('txfree')!)!;
    const cells = expandCells(p);
    assert.deepEqual(cells.map((c) => c.id), ['io 64 B 1c burst 32 rs/free 32/32', 'io 64 B 1c burst 32 rs/free 256/256', 'io 64 B 1c burst 32 rs/free 512/512']);
    assert.deepEqual(p.variants.map((v) => v.name), ['single', 'bulk64', 'bulkall']);
    assert.deepEqual(comparisons(p, ['single', 'bulk64', 'bulkall']), [['single', 'bulk64'], ['single', 'bulkall']], 'each mode as % vs the base');
    const a = testpmdArgs(cells[1]!, p.variants[0]!, 2, p.ports, '', p.nbDesc);
    assert.deepEqual(a.eal, ['--lcores', '0@0,1@1', '--vdev', 'net_nicsim0,peer=net_nicsim1,hw_cpu=0,tx_free_mode=single', '--vdev', 'net_nicsim1,tx_free_mode=single']);
    assert.deepEqual(a.app, ['--forward-mode=io', '--burst=32', '--txpkts=64', '--nb-cores=1', '--rxq=1', '--txq=1', '--rxd=1024', '--txd=1024', '--txrst=256', '--txfreet=256', '--tx-first-bursts=64', '--tx-offloads=0x10000']);
    // Cells without thresholds keep their ids (saved reports and docs blocks stay comparable).
    assert.equal(expandCells(base())[0]!.id, 'io 64 B 1c burst 32');
  });

  it('kernel-ports: a DPDK and a dpkit arm per kernel-port driver, compared pairwise, ports on the interfaces through that driver', () => {
    const p = presets.get('kernel-ports')!;
    assert.deepEqual(p.variants.map((v) => v.name), ['af_packet-dpdk', 'af_packet-dpkit', 'tap-dpdk', 'tap-dpkit', 'af_xdp-dpdk', 'af_xdp-dpkit']);
    assert.deepEqual(comparisons(p, p.variants.map((v) => v.name)), [['af_packet-dpdk', 'af_packet-dpkit'], ['tap-dpdk', 'tap-dpkit'], ['af_xdp-dpdk', 'af_xdp-dpkit']]);
    const cell = expandCells(p).find((c) => c.lcores === 2)!;
    const a = kernelTestpmdArgs(cell, p.variants[0]!, KERNEL_PORTS[0]!, ['s1', 'k1'], 2);
    assert.deepEqual(a.eal, ['--lcores', '0@0,1@1,2@0', '--vdev', 'net_af_packet0,iface=s1,qpairs=2', '--vdev', 'net_af_packet1,iface=k1,qpairs=2']);
    assert.ok(a.app.includes('--rxq=2') && a.app.includes('--forward-mode=io'));
    assert.throws(() => validateConfig({ ...p, variants: [{ name: 'x' }] }, 'cfg'), /variants.x.kernelPort: expected on every arm of ports 'kernel' and on no other/);
    assert.throws(() => validateConfig({ ...base(), variants: [{ name: 'x', kernelPort: 'tap' }] }, 'cfg'), /variants.x.kernelPort: expected on every arm/);
  });

  it("pcap-live: DPDK's net_pcap and dpkit's on the same veths by iface=, 64 and 1518 B, one queue pair on one lcore", () => {
    const p = presets.get('pcap-live')!;
    assert.equal(p.ports, 'kernel');
    assert.deepEqual(p.variants.map((v) => [v.name, v.system ?? 'dpkit', v.kernelPort]), [
      ['pcap-dpdk', 'dpdk', 'pcap'],
      ['pcap-dpkit', 'dpkit', 'pcap'],
    ]);
    assert.deepEqual(comparisons(p, p.variants.map((v) => v.name)), [['pcap-dpdk', 'pcap-dpkit']]);
    assert.deepEqual(expandCells(p).map((c) => c.id), ['io 64 B 1c burst 32', 'io 1518 B 1c burst 32']);
    for (const v of p.variants) {
      const a = kernelTestpmdArgs(expandCells(p)[0]!, v, PCAP_LIVE, ['s1', 'k1'], 2);
      assert.deepEqual(a.eal, ['--lcores', '0@0,1@1', '--vdev', 'net_pcap0,iface=s1', '--vdev', 'net_pcap1,iface=k1'], `${v.name}: the same ports for both systems`);
    }
    assert.ok(!presets.get('kernel-ports')!.variants.some((v) => v.kernelPort === 'pcap'), 'kernel-ports keeps its own drivers');
  });

  it('refuses a DPDK arm on nicsim ports and malformed threshold pairs', () => {
    const nic = { ...base(), ports: 'nicsim' as const };
    assert.throws(() => validateConfig(nic, 'cfg'), /variants.dpdk: net_nicsim is dpkit's model NIC; DPDK's testpmd cannot run it/);
    assert.throws(() => validateConfig({ ...base(), matrix: [{ txThresh: [[32]] }] } as unknown as MatrixConfig, 'cfg'), /matrix\[0\].txThresh: expected a list of \[tx_rs_thresh, tx_free_thresh\] pairs/);
    assert.throws(() => validateConfig({ ...base(), nbDesc: 10 }, 'cfg'), /nbDesc: expected an integer in \[64, 4096\]/);
  });

  it('narrows a config from the command line, and refuses narrowing to nothing', () => {
    const c = applyOverrides(base(), { sizes: '64', engines: 'io', arms: 'dpkit,ts', quick: true });
    assert.deepEqual(expandCells(c).map((x) => x.id), ['io 64 B 1c burst 32', 'io 64 B 2c burst 32']);
    assert.deepEqual(c.variants.map((v) => v.name), ['dpkit', 'ts']);
    assert.deepEqual([c.pairs, c.seconds, c.warmup], [2, 1, 1]);
    assert.deepEqual(expandCells(applyOverrides(base(), { bursts: '16,64', lcores: '2' })).map((x) => x.id), ['io 64 B 2c burst 16', 'io 64 B 2c burst 64']);
    assert.throws(() => applyOverrides(base(), { sizes: '256' }), /--sizes 256: no cell of t has any of these/);
    assert.throws(() => applyOverrides(base(), { arms: 'dpkit,vpp' }), /--arms: vpp not in t \(arms: dpdk, dpkit, ts\)/);
    assert.throws(() => applyOverrides(base(), { pairs: '0' }), /--pairs 0: expected an integer of at least 1/);
    assert.equal(base().pairs, 5, 'the preset itself is left alone');
    const withPairs = { ...base(), compare: [['dpdk', 'dpkit'], ['dpkit', 'ts']] as [string, string][] };
    assert.deepEqual(applyOverrides(withPairs, { arms: 'dpkit,ts' }).compare, [['dpkit', 'ts']], 'comparisons with a dropped arm go');
    assert.equal(applyOverrides(withPairs, { arms: 'dpdk,ts' }).compare, undefined, 'none left: every arm against the first');
  });
  it('vhost-user: host/guest arms, dpkit sides counting per packet as DPDK (net_stats=1) but for one arm, and four packed ones; the host on CPU 0, the guest on CPU 1, the receiver measured', () => {
    const p = validateConfig(presets.get('vhost-user')!, 'preset');
    assert.deepEqual(p.variants.map((v) => v.name), ['dpdk/dpdk', 'dpkit/dpdk', 'dpdk/dpkit', 'dpkit/dpkit', 'dpkit/dpkit no-stats', 'dpdk/dpdk-packed', 'dpkit/dpdk-packed', 'dpdk/dpkit-packed', 'dpkit/dpkit-packed']);
    assert.deepEqual(p.variants.map((v) => v.devargs), [undefined, 'net_stats=1', 'net_stats=1', 'net_stats=1', undefined, undefined, 'net_stats=1', 'net_stats=1', 'net_stats=1']);
    const packed = vhostUserArgs(expandCells(p)[0]!, p.variants[6]!, '/tmp/vh.sock', 2);
    assert.equal(packed.host.system, 'dpkit', 'the host is dpkit');
    assert.match(packed.host.eal[3]!, /^net_vhost0,iface=\/tmp\/vh\.sock,queues=1/, 'the host is as in the split arms');
    assert.deepEqual([packed.guest.system, packed.guest.eal[3]], ['dpdk', 'virtio_user0,path=/tmp/vh.sock,queues=1,packed_vq=1'], 'the guest asks for packed rings');
    assert.deepEqual(comparisons(p, p.variants.map((v) => v.name)).slice(-5), [
      ['dpdk/dpdk-packed', 'dpkit/dpdk-packed'],
      ['dpkit/dpdk', 'dpkit/dpdk-packed'],
      ['dpdk/dpdk-packed', 'dpdk/dpkit-packed'],
      ['dpdk/dpdk-packed', 'dpkit/dpkit-packed'],
      ['dpdk/dpkit', 'dpdk/dpkit-packed'],
    ]);
    // dpkit's guest asks for packed rings the same way, its own net_stats first.
    const guestPacked = vhostUserArgs(expandCells(p)[0]!, p.variants[7]!, '/tmp/vh.sock', 2);
    assert.deepEqual([guestPacked.host.system, guestPacked.host.eal[3]], ['dpdk', 'net_vhost0,iface=/tmp/vh.sock,queues=1']);
    assert.deepEqual([guestPacked.guest.system, guestPacked.guest.eal[3]], ['dpkit', 'virtio_user0,path=/tmp/vh.sock,queues=1,net_stats=1,packed_vq=1']);
    const bothPacked = vhostUserArgs(expandCells(p)[0]!, p.variants[8]!, '/tmp/vh.sock', 2);
    assert.deepEqual([bothPacked.host.system, bothPacked.guest.system, bothPacked.guest.eal[3]], ['dpkit', 'dpkit', 'virtio_user0,path=/tmp/vh.sock,queues=1,net_stats=1,packed_vq=1']);
    const cells = expandCells(p);
    const sizes = [64, 128, 256, 512, 1024, 1400, 1518];
    assert.deepEqual(cells.map((c) => c.id), ['rxonly', 'txonly'].flatMap((e) => sizes.map((s) => `${e} ${s} B 1c burst 32`)));
    const seed003 = vhostUserArgs(cells[0]!, p.variants[1]!, '/tmp/vh.sock', 2);
    assert.deepEqual(seed003.host, {
      system: 'dpkit',
      eal: ['--lcores', '0@0,1@0', '--vdev', 'net_vhost0,iface=/tmp/vh.sock,queues=1,net_stats=1'],
      app: ['--forward-mode=txonly', '--burst=32', '--txpkts=64', '--nb-cores=1', '--rxq=1', '--txq=1'],
      measured: false,
    });
    assert.deepEqual(seed003.guest, {
      system: 'dpdk',
      eal: ['--lcores', '0@1,1@1', '--vdev', 'virtio_user0,path=/tmp/vh.sock,queues=1'],
      app: ['--forward-mode=rxonly', '--burst=32', '--txpkts=64', '--nb-cores=1', '--rxq=1', '--txq=1'],
      measured: true,
    });
    const reverse = vhostUserArgs(cells.find((c) => c.id === 'txonly 1518 B 1c burst 32')!, p.variants[2]!, '/tmp/vh.sock', 2);
    assert.equal(reverse.host.system, 'dpdk');
    assert.equal(reverse.host.eal[3], 'net_vhost0,iface=/tmp/vh.sock,queues=1', "DPDK's side gets no dpkit devargs");
    assert.equal(reverse.guest.eal[3], 'virtio_user0,path=/tmp/vh.sock,queues=1,net_stats=1');
    assert.deepEqual([reverse.host.app[0], reverse.host.measured], ['--forward-mode=rxonly', true]);
    assert.deepEqual([reverse.guest.system, reverse.guest.app[0], reverse.guest.measured], ['dpkit', '--forward-mode=txonly', false]);
    const vh = { ...p, variants: [{ name: 'a' }], compare: undefined };
    assert.throws(() => validateConfig({ ...vh, matrix: [{ engines: ['io'] }] }, 'cfg'), /matrix\[0\].engines: vhost-user cells are the guest's rxonly or txonly/);
    assert.throws(() => validateConfig({ ...vh, matrix: [{ lcores: [2] }] }, 'cfg'), /vhost-user runs one forwarding lcore per side/);
    assert.throws(() => validateConfig({ ...base(), variants: [{ name: 'a', guest: 'dpdk' }] }, 'cfg'), /variants.a.guest: expected dpkit or dpdk, with ports vhost-user/);
    assert.throws(() => validateConfig({ ...base(), variants: [{ name: 'a', guestDevargs: 'packed_vq=1' }] }, 'cfg'), /variants.a.guestDevargs: expected a string, with ports vhost-user/);
  });
});
