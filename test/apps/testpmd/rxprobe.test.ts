import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { nowNs } from '../../../src/eal/clock.js';
import { Heap } from '../../../src/eal/heap.js';
import { ProbeTx } from '../../../src/gen/probe.js';
import { Mbufs } from '../../../src/mem/mbuf.js';
import { Mempool } from '../../../src/mem/mempool.js';
import { IPPROTO_UDP } from '../../../src/net/headers.js';
import { writeCapture } from '../../pcap/captures.js';
import { eth, ipv4, payload, udpSeg } from '../../net/packets.js';
import { testpmd } from './run.js';

const dir = mkdtempSync(join(tmpdir(), 'rxprobe-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('rxprobe prints each probe stream\'s loss, duplicates, reordering and latency in the forward statistics', () => {
  // Ten probes of stream 3, captured as 0 1 3 2 2 5 6 8 9: 4 and 7 lost, 2 late and twice.
  const heap = Heap.create({ size: 8 << 20 });
  const pool = Mempool.create(heap, { name: 'cap', n: 64 });
  const mb = new Mbufs(heap);
  const burst = heap.burst(10);
  pool.allocBulk(burst, 10);
  for (let i = 0; i < 10; i++) mb.write(burst[i]!, eth(0x0800, ipv4(IPPROTO_UDP, udpSeg(1, 2, payload(30, i)))));
  ProbeTx.create(heap, 3).stampAt(burst, 10, nowNs());
  const bytes = (i: number) => Uint8Array.from(heap.u8.subarray(mb.mtod(burst[i]!), mb.mtod(burst[i]!) + mb.dataLen(burst[i]!)));
  const file = join(dir, 'probes.pcap');
  writeCapture(file, [0, 1, 3, 2, 2, 5, 6, 8, 9].map((i, k) => ({ bytes: bytes(i), sec: 1_700_000_000, nsec: k })));
  mb.freeBulk(burst, 10);

  const r = testpmd(['--vdev', `net_pcap0,rx_pcap=${file}`, '--vdev', 'net_null0', '--', '--forward-mode=rxprobe', '--no-flush-rx', '--total-num-mbufs=8192']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /rxprobe packet forwarding/);
  assert.match(r.stdout, /Probe stream 3: received 8 lost 2 duplicates 1 reordered 1\n/);
  assert.match(r.stdout, /latency ns: min \d+ p50 \d+ p99 \d+ p99\.9 \d+ max \d+/);
});
