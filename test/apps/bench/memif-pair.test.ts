import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expandCells, validateConfig, type MatrixConfig } from '../../../src/apps/bench/matrix.js';
import { runMatrix } from '../../../src/apps/bench/matrix-run.js';
import { memifSideArgs } from '../../../src/apps/bench/memif-pair.js';
import { presets } from '../../../src/apps/bench/presets.js';

describe('bench memif preset', () => {
  const memif = presets.get('memif')!;

  it('is a valid matrix of client-server pairs: every pairing of dpkit and DPDK, rxonly and io, 64 and 1518 B, 1 and 2 queues', () => {
    validateConfig(memif, 'memif');
    assert.deepEqual(
      // An arm is named client-server; a zero-copy client is dpkit.zc.
      memif.variants.map((v) => `${v.peer}${v.peerDevargs === 'zero-copy=yes' ? '.zc' : ''}-${v.system}`),
      memif.variants.map((v) => v.name),
    );
    assert.deepEqual(
      expandCells(memif).map((c) => c.id),
      ['rxonly', 'io'].flatMap((e) => [`${e} 64 B 1c burst 32`, `${e} 1518 B 1c burst 32`, `${e} 64 B 2c burst 32`, `${e} 1518 B 2c burst 32`]),
    );
  });

  it('gives each side one memif port on the shared socket, its queues on its own CPU', () => {
    const [cell] = expandCells({ ...memif, matrix: [{ engines: ['rxonly'], sizes: [1518], lcores: [2] }] });
    assert.deepEqual(memifSideArgs(cell!, 'server', '/tmp/s.sock', 1), {
      eal: ['--lcores', '0@1,1@1,2@1', '--vdev', 'net_memif0,role=server,socket=/tmp/s.sock'],
      app: ['--forward-mode=rxonly', '--burst=32', '--txpkts=1518', '--nb-cores=2', '--rxq=2', '--txq=2'],
    });
    assert.equal(memifSideArgs(cell!, 'client', '/tmp/s.sock', 0).app[0], '--forward-mode=txonly');
    // The zero-copy arms add their devargs to the client's port.
    assert.equal(memifSideArgs(cell!, 'client', '/tmp/s.sock', 0, 'zero-copy=yes').eal[3], 'net_memif0,role=client,socket=/tmp/s.sock,zero-copy=yes');
    assert.deepEqual(
      memif.variants.filter((v) => v.peerDevargs === 'zero-copy=yes').map((v) => `${v.name}:${v.system}:${v.peer}`),
      ['dpkit.zc-dpdk:dpdk:dpkit', 'dpkit.zc-dpkit:dpkit:dpkit'],
    );
  });

  it('refuses a peer on ports that have none, and skips arms with a DPDK side when DPDK is missing', async () => {
    const bad: MatrixConfig = { ...memif, ports: 'null' };
    assert.throws(() => validateConfig(bad, 'x'), /variants\.dpdk-dpdk\.peer: expected dpkit or dpdk, on memif ports/);
    const seen: string[] = [];
    const r = await runMatrix({ ...memif, pairs: 2, matrix: [{ engines: ['rxonly'], sizes: [64], lcores: [1] }] }, { dpdk: false, measure: async (_c, v) => (seen.push(v.name), 1) });
    assert.deepEqual([...new Set(seen)], ['dpkit-dpkit', 'dpkit.zc-dpkit']);
    assert.match(r.warnings.join('\n'), /skipped dpdk-dpdk, dpkit-dpdk, dpdk-dpkit, dpkit\.zc-dpdk/);
  });
});
