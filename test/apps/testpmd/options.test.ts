import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCoreList, parseLcoreMap, parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
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
    assert.throws(() => parseTestpmdArgs(split('-l 0-1 -- --nb-cores=2')), /--nb-cores=2: only 1 forwarding lcore in the lcore list/);
    assert.throws(() => parseTestpmdArgs(split('-- --burst=0')), /--burst=0: expected an integer in \[1, 512\]/);
    assert.throws(() => parseTestpmdArgs(split('-- --burst=600')), /--burst=600/);
    assert.throws(() => parseTestpmdArgs(split('-- --eth-peer=0,zz:00:00:00:00:00')), /not a MAC address/);
    assert.throws(() => parseTestpmdArgs(split('-- --port-topology=ring')), /expected paired, chained or loop/);
    assert.throws(() => parseTestpmdArgs(split('-l 3-1')), /bad range '3-1'/);
    assert.throws(() => parseTestpmdArgs(split('-- --datapath=c')), /expected wasm or ts/);
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
