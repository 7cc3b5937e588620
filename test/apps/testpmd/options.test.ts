import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCoreList, parseCoreList, parseCoreMask, parseLcoreMap, parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { fwdStreams, txPortOf } from '../../../src/apps/testpmd/testpmd.js';

const split = (s: string) => s.split(/\s+/).filter(Boolean);

describe('testpmd command line', () => {
  it("parses DPDK's own null-port command (the reference runs' line) as DPDK does", () => {
    const o = parseTestpmdArgs(
      split('-l 0-1 --no-huge -m 1024 --no-pci --vdev net_null0,size=64 --vdev net_null1,size=64 -- --forward-mode=io --stats-period 1 --burst=32 --txpkts=64 --nb-cores=1 --rxq=1 --txq=1'),
    );
    assert.deepEqual(o.lcores, [0, 1]);
    assert.equal(o.mainLcore, 0);
    assert.deepEqual(o.vdevs, ['net_null0,size=64', 'net_null1,size=64']);
    assert.equal(o.forwardMode, 'io');
    assert.equal(o.statsPeriod, 1);
    assert.equal(o.burst, 32);
    assert.deepEqual(o.txPkts, [64]);
    assert.equal(o.nbCores, 1);
    assert.ok(o.notes.some((n) => n.includes('--no-huge')), 'ignored EAL options are noted');
    assert.equal(o.totalNumMbufs, 155456, "testpmd's default pool size for one forwarding lcore");
  });

  it("parses the studies' options: two lcores with --lcores, mbcache, descriptors, eth-peer, multi-flow", () => {
    const o = parseTestpmdArgs(
      split('--lcores 0@0,1@1,2@0 --no-huge -m 1024 --no-pci -- --mbcache=512 --burst=64 --rxq=2 --txq=2 --nb-cores=2 --rxd=1024 --txd=1024 -a -i --forward-mode=txonly --txonly-multi-flow --eth-peer=0,00:52:11:22:33:10 --eth-peer=1,00:52:11:22:33:20 --txpkts=64,64'),
    );
    assert.deepEqual(o.lcores, [0, 1, 2]);
    assert.deepEqual([...o.lcoreCpus!], [[0, [0]], [1, [1]], [2, [0]]]);
    assert.deepEqual([o.mbcache, o.burst, o.rxq, o.txq, o.nbCores, o.rxd, o.txd], [512, 64, 2, 2, 2, 1024, 1024]);
    assert.ok(o.interactive && o.autoStart && o.txOnlyMultiFlow);
    assert.deepEqual([...o.ethPeers.get(1)!], [0x00, 0x52, 0x11, 0x22, 0x33, 0x20]);
    assert.deepEqual(o.txPkts, [64, 64]);
  });

  it('parses the descriptor-ring options: --rxfreet, --tx-offloads in hex or decimal, --tx-first-bursts', () => {
    const o = parseTestpmdArgs(split('-- --rxfreet=64 --txrst=32 --txfreet=64 --tx-offloads=0x10000 --tx-first-bursts=16'));
    assert.deepEqual([o.rxFreeThresh, o.txRsThresh, o.txFreeThresh, o.txOffloads, o.txFirst, o.txFirstBursts], [64, 32, 64, 0x10000, true, 16]);
    assert.equal(parseTestpmdArgs(split('-- --tx-offloads=65536')).txOffloads, 0x10000);
    assert.deepEqual([parseTestpmdArgs([]).txOffloads, parseTestpmdArgs([]).txFirst], [0, false]);
    assert.throws(() => parseTestpmdArgs(split('-- --tx-offloads=fast')), /--tx-offloads=fast: expected a mask such as 0x10000/);
  });

  it('rejects unknown and bad options with one clear message', () => {
    assert.throws(() => parseTestpmdArgs(split('-- --frobnicate')), /Unknown option '--frobnicate'/);
    assert.throws(() => parseTestpmdArgs(split('--duration 3')), /unknown EAL option '--duration' \(testpmd's own options go after --/);
    assert.throws(() => parseTestpmdArgs(split('--frobnicate')), /unknown EAL option '--frobnicate' \(dpkit testpmd --help lists the options\)$/);
    assert.throws(() => parseTestpmdArgs(split('-l 0-1 -- --nb-cores=2')), /--nb-cores=2: only 1 forwarding lcore in the lcore list/);
    assert.throws(() => parseTestpmdArgs(split('-- --burst=0')), /--burst=0: expected an integer in \[1, 512\]/);
    assert.throws(() => parseTestpmdArgs(split('-- --burst=600')), /--burst=600/);
    assert.throws(() => parseTestpmdArgs(split('-- --eth-peer=0,zz:00:00:00:00:00')), /not a MAC address/);
    assert.throws(() => parseTestpmdArgs(split('-- --port-topology=ring')), /expected paired, chained or loop/);
    assert.throws(() => parseTestpmdArgs(split('-l 3-1')), /bad range '3-1'/);
    assert.throws(() => parseTestpmdArgs(split('-- --datapath=c')), /expected wasm or ts/);
  });

  it('takes the lcores as EAL does: -l and -c name CPUs this machine has, --lcores with @ may put more lcores on them', () => {
    const two = [0, 1];
    assert.deepEqual(parseTestpmdArgs(split('-c 0x3'), two).lcores, [0, 1]);
    assert.deepEqual(parseTestpmdArgs(split('-c 3'), two).lcores, [0, 1]);
    assert.throws(() => parseTestpmdArgs(split('-l 0-63'), two), /^ArgError: -l 0-63: invalid core list, please check specified cores are part of 0-1 /);
    assert.throws(() => parseTestpmdArgs(split('-c 0xff'), two), /-c 0xff: invalid coremask, please check specified cores are part of 0-1/);
    assert.throws(() => parseTestpmdArgs(split('-c 0xzz'), two), /-c 0xzz: not a hexadecimal coremask/);
    assert.throws(() => parseTestpmdArgs(split('-l 0-1 -c 0x3'), two), /-l and -c: give one of -l, -c and --lcores/);
    const o = parseTestpmdArgs(split('--lcores (0-3)@(0-1) -- --nb-cores=3'), two);
    assert.deepEqual([o.lcores, o.nbCores, o.lcoreCpus!.get(3)], [[0, 1, 2, 3], 3, [0, 1]]);
    assert.deepEqual(parseCoreMask('0x1f0'), [4, 5, 6, 7, 8]);
    assert.equal(formatCoreList([0, 1, 2, 3, 6, 8, 9]), '0-3,6,8-9');
  });

  it("accepts every EAL option of DPDK 22.11, noting the ones that change nothing here", () => {
    const eal =
      '-l 0-1 --allow 0000:00:04.0 -a 0000:00:05.0 -b 0000:00:06.0 --block 0000:00:07.0 -n 4 -r 2 -m 512 -d /usr/lib/dpdk -s 0x2 -S 1 -v ' +
      '--huge-unlink --huge-worker-stack=8192 --huge-dir /mnt/huge --no-huge --socket-mem 512 --socket-limit 1024 --single-file-segments ' +
      '--legacy-mem --match-allocations --in-memory --iova-mode va --base-virtaddr 0x100000000 --proc-type primary --file-prefix x --no-shconf ' +
      '--create-uio-dev --vfio-intr msix --vfio-vf-token 14d63f20-8445-11ea-8900-1f9ce7d5650d --no-hpet --vmware-tsc-map --mbuf-pool-ops-name ring_mp_mc ' +
      '--log-level 8 --syslog daemon --trace .* --trace-dir /tmp --trace-bufsz 2M --trace-mode overwrite --telemetry --no-telemetry ' +
      '--force-max-simd-bitwidth 512 --no-pci --main-lcore 0 --vdev net_null0 --vdev net_null1';
    const o = parseTestpmdArgs(split(`${eal} -- --forward-mode=io`), [0, 1]);
    assert.deepEqual([o.lcores, o.vdevs], [[0, 1], ['net_null0', 'net_null1']]);
    for (const k of ['--allow', '-a', '-b', '--block', '-d', '-s', '-S', '-v', '--huge-unlink', '--huge-worker-stack', '--trace', '--force-max-simd-bitwidth', '--vfio-vf-token']) {
      assert.ok(o.notes.some((n) => n.startsWith(`EAL option ${k} accepted and ignored`)), `${k} noted`);
    }
  });

  it('parses core lists and lcore maps', () => {
    assert.deepEqual(parseCoreList('0-2,5', '-l'), [0, 1, 2, 5]);
    const m = parseLcoreMap('(0-1)@0,2@1');
    assert.deepEqual(m.lcores, [0, 1, 2]);
    assert.deepEqual([...m.cpus], [[0, [0]], [1, [0]], [2, [1]]]);
    assert.deepEqual([...parseLcoreMap('0,1').cpus], [[0, [0]], [1, [1]]], 'no @: lcore N on CPU N');
    assert.deepEqual([...parseLcoreMap('0@0,(1,2)@(0,1)').cpus], [[0, [0]], [1, [0, 1]], [2, [0, 1]]]);
    assert.throws(() => parseLcoreMap('0@0,0@1'), /lcore 0 given twice/);
    assert.throws(() => parseLcoreMap('1@2@3'), /'1@2@3' is not LCORES\[@CPUS\]/);
    assert.throws(() => parseLcoreMap('1@'), /is not LCORES/);
  });
});

describe('forwarding configuration', () => {
  it("pairs ports as testpmd's topologies do", () => {
    assert.deepEqual([0, 1, 2, 3].map((p) => txPortOf(p, 4, 'paired')), [1, 0, 3, 2]);
    assert.deepEqual([0, 1, 2].map((p) => txPortOf(p, 3, 'paired')), [1, 0, 2], 'odd: the last pairs with itself');
    assert.deepEqual([0, 1, 2].map((p) => txPortOf(p, 3, 'chained')), [1, 2, 0]);
    assert.deepEqual([0, 1].map((p) => txPortOf(p, 2, 'loop')), [0, 1]);
  });

  it('makes one stream per port and queue, ports first, and splits them over lcores with the extra ones last', () => {
    const per = fwdStreams([0, 1], 3, 'paired', 4);
    assert.deepEqual(
      per.map((l) => l.map((s) => `${s.rxPort}/${s.rxQueue}>${s.txPort}/${s.txQueue}`)),
      [['0/0>1/0'], ['1/0>0/0'], ['0/1>1/1', '1/1>0/1'], ['0/2>1/2', '1/2>0/2']],
    );
    assert.equal(fwdStreams([0, 1], 1, 'paired', 4).length, 2, 'never more lcores than streams');
  });
});
