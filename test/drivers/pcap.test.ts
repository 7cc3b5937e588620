import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { drivers } from '../../src/drivers/index.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { ArgError } from '../../src/errors.js';
import { MBUF_WORD_SHIFT, OlFlags, W_OL_FLAGS, W_TIMESTAMP_LO } from '../../src/mem/mbuf-layout.js';
import { Heap } from '../../src/eal/heap.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { loadNs } from '../../src/pcap/time.js';
import { assertFull, assertSameHeaps, portUp, setup } from '../helpers.js';
import { packets, readCapture, writeCapture } from '../pcap/captures.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-net-pcap-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

function pcapPort(devargs: string, pool: { n?: number; dataRoomSize?: number } = {}, queues = 1) {
  const env = setup({ n: 512, cacheSize: 0, ...pool }, 64 << 20);
  const ethdev = new Ethdev(env.heap, drivers);
  const p = portUp(ethdev, env.mp, ethdev.create(devargs), queues);
  const burst = env.heap.burst(64);
  return { ...env, ethdev, p, burst };
}

describe('net_pcap', () => {
  it('receives each record as one mbuf with its length, port and capture timestamp, then ends', () => {
    const pkts = packets([64, 100, 1514, 60]);
    writeCapture(path('in1'), pkts);
    const { ethdev, p, burst, mb, mp, heap } = pcapPort(`net_pcap0,rx_pcap=${path('in1')}`);
    assert.equal(ethdev.rxEnded(p), false);
    const n = ethdev.rxBurst(p, 0, burst, 32);
    assert.equal(n, 4);
    const ts = { sec: 0, nsec: 0 };
    for (let i = 0; i < n; i++) {
      const h = burst[i]!;
      assert.deepEqual(mb.read(h), pkts[i]!.bytes);
      assert.equal(mb.port(h), p);
      assert.ok((heap.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS]! & OlFlags.RX_TIMESTAMP) !== 0);
      assert.deepEqual(loadNs(heap.u32, (h << MBUF_WORD_SHIFT) + W_TIMESTAMP_LO, ts), { sec: pkts[i]!.sec, nsec: pkts[i]!.nsec });
    }
    mb.freeBulk(burst, n);
    assert.equal(ethdev.rxBurst(p, 0, burst, 32), 0);
    assert.equal(ethdev.rxEnded(p), true);
    assert.equal(ethdev.stats(p).ipackets, 4);
    ethdev.close(p);
    assertFull(mp);
  });

  it('chains packets larger than one mbuf, and writes chains back whole', () => {
    const pkts = packets([9000, 3000, 700]);
    writeCapture(path('jumbo'), pkts);
    const { ethdev, p, burst, mb, mp } = pcapPort(`net_pcap0,rx_pcap=${path('jumbo')},tx_pcap=${path('jumbo-out')}`, { dataRoomSize: 128 + 1024 });
    const n = ethdev.rxBurst(p, 0, burst, 32);
    assert.equal(n, 3);
    assert.deepEqual([mb.nbSegs(burst[0]!), mb.nbSegs(burst[1]!), mb.nbSegs(burst[2]!)], [9, 3, 1]);
    assert.equal(mb.pktLen(burst[0]!), 9000);
    assert.deepEqual(mb.read(burst[0]!), pkts[0]!.bytes);
    assert.equal(ethdev.txBurst(p, 0, burst, n), 3);
    ethdev.stop(p);
    ethdev.close(p);
    assertFull(mp);
    assert.deepEqual(readFileSync(path('jumbo-out')), readFileSync(path('jumbo')), 'same records, same timestamps, same file');
  });

  it('counts a packet dropped for want of mbufs, and loses nothing else', () => {
    writeCapture(path('dry'), packets([5000, 64]));
    const { ethdev, p, burst, mb, mp } = pcapPort(`net_pcap0,rx_pcap=${path('dry')}`, { n: 3, dataRoomSize: 128 + 2048 });
    // 2 mbufs for the burst of 2, then the 5000-byte packet needs 2 more: only 1 is left.
    const n = ethdev.rxBurst(p, 0, burst, 2);
    assert.equal(n, 1);
    assert.equal(mb.pktLen(burst[0]!), 64);
    assert.equal(ethdev.stats(p).rxNombuf, 1);
    mb.freeBulk(burst, n);
    ethdev.close(p);
    assertFull(mp);
  });

  it('replays a capture forever with infinite_rx=1', () => {
    const pkts = packets([64, 65, 66]);
    writeCapture(path('loop'), pkts);
    const { ethdev, p, burst, mb, mp } = pcapPort(`net_pcap0,rx_pcap=${path('loop')},infinite_rx=1`);
    const lens: number[] = [];
    for (let k = 0; k < 5; k++) {
      const n = ethdev.rxBurst(p, 0, burst, 4);
      for (let i = 0; i < n; i++) lens.push(mb.pktLen(burst[i]!));
      mb.freeBulk(burst, n);
    }
    assert.deepEqual(lens, Array.from({ length: 20 }, (_, i) => 64 + (i % 3)));
    assert.equal(ethdev.rxEnded(p), false, 'a replay never ends');
    ethdev.close(p);
    assertFull(mp);
  });

  it('replays in wasm exactly as its TypeScript twin does: bytes, chains, no timestamps, counters', () => {
    const sizes = [64, 1500, 60, 3000, 1024, 1025, 77, 5000, 64];
    const pkts = packets(sizes);
    writeCapture(path('twin'), pkts);
    const side = (datapath: 'wasm' | 'ts') => {
      const heap = Heap.create({ size: 32 << 20, datapath });
      const mp = Mempool.create(heap, { name: 'twin', n: 512, cacheSize: 32, dataRoomSize: 128 + 1024 });
      const ethdev = new Ethdev(heap, drivers);
      const p = portUp(ethdev, mp, ethdev.create(`net_pcap0,rx_pcap=${path('twin')},infinite_rx=1`));
      return { heap, mp, mb: new Mbufs(heap), ethdev, p, burst: heap.burst(64) };
    };
    const [w, t] = [side('wasm'), side('ts')];
    assert.ok(w.heap.kernels && !t.heap.kernels);
    const ts = { sec: 0, nsec: 0 };
    const view = (s: typeof w, h: number) => {
      const word = (h << MBUF_WORD_SHIFT) + W_TIMESTAMP_LO;
      return { bytes: [...s.mb.read(h)], segs: s.mb.nbSegs(h), port: s.mb.port(h), ol: s.heap.u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS], ts: { ...loadNs(s.heap.u32, word, ts) } };
    };
    let seen = 0;
    for (const n of [1, 5, 32, 7, 64, 3, 20]) {
      const got = [w, t].map((s) => s.ethdev.rxBurst(s.p, 0, s.burst, n));
      assert.equal(got[0], got[1]);
      assert.equal(got[0], n);
      for (let i = 0; i < n; i++) {
        const a = view(w, w.burst[i]!);
        assert.deepEqual(a, view(t, t.burst[i]!), `burst of ${n}, packet ${i}`);
        const p = pkts[seen++ % pkts.length]!;
        assert.deepEqual(a.bytes, [...p.bytes]);
        assert.equal(a.ol! & OlFlags.RX_TIMESTAMP, 0, 'a replay stamps no timestamp, as DPDK\'s infinite_rx');
      }
      for (const s of [w, t]) s.mb.freeBulk(s.burst, n);
    }
    assert.deepEqual(w.ethdev.stats(w.p), t.ethdev.stats(t.p));
    assert.equal(w.ethdev.stats(w.p).ipackets, seen);
    assertSameHeaps(w.heap, t.heap);
    for (const s of [w, t]) {
      s.ethdev.close(s.p);
      s.mp.flushCache();
      assertFull(s.mp);
    }
  });

  it('gives one queue per rx_pcap and tx_pcap, and queues beyond the files receive nothing or drop', () => {
    writeCapture(path('qa'), packets([64, 64]));
    writeCapture(path('qb'), packets([128]));
    const { ethdev, p, burst, mb, mp } = pcapPort(`net_pcap0,rx_pcap=${path('qa')},rx_pcap=${path('qb')},tx_pcap=${path('qc')}`, {}, 2);
    assert.equal(ethdev.info(p).maxRxQueues, 2);
    assert.equal(ethdev.rxBurst(p, 1, burst, 8), 1);
    assert.equal(mb.pktLen(burst[0]!), 128);
    assert.equal(ethdev.txBurst(p, 1, burst, 1), 1, 'tx queue 1 has no file: drops');
    assert.equal(ethdev.rxBurst(p, 0, burst, 8), 2);
    assert.equal(ethdev.txBurst(p, 0, burst, 2), 2);
    ethdev.stop(p);
    ethdev.close(p);
    assertFull(mp);
    assert.equal(readCapture(path('qc')).length, 2);
  });

  it('stamps a replayed packet, which carries no timestamp, with the time it was sent', () => {
    writeCapture(path('replay-src'), packets([64, 65]));
    const { ethdev, p, burst, mp } = pcapPort(`net_pcap0,rx_pcap=${path('replay-src')},infinite_rx=1,tx_pcap=${path('replay-out')}`);
    const t0 = Date.now() / 1000;
    for (let k = 0; k < 3; k++) {
      const n = ethdev.rxBurst(p, 0, burst, 4);
      assert.equal(ethdev.txBurst(p, 0, burst, n), n);
    }
    ethdev.stop(p);
    ethdev.close(p);
    const t1 = Date.now() / 1000;
    const recs = readCapture(path('replay-out'));
    assert.equal(recs.length, 12);
    const times = recs.map((r) => r.sec + r.nsec / 1e9);
    // The capture's own timestamps are from 2023 (captures.ts); the records' are now's, in order.
    assert.ok(times.every((t) => t >= t0 - 1 && t <= t1 + 1), `sending times within [${t0}, ${t1}]: ${times.join(', ')}`);
    assert.ok(times.every((t, i) => i === 0 || t >= times[i - 1]!), 'in order');
    assertFull(mp);
  });

  it('with rx_pcap and no tx_pcap, drops what it transmits and counts it as sent, as DPDK does', () => {
    writeCapture(path('rx-only'), packets([64, 100, 200]));
    const { ethdev, p, burst, mp } = pcapPort(`net_pcap0,rx_pcap=${path('rx-only')}`);
    assert.equal(ethdev.rxBurst(p, 0, burst, 8), 3);
    assert.equal(ethdev.txBurst(p, 0, burst, 3), 3);
    const s = ethdev.stats(p);
    assert.equal(s.opackets, 3);
    assert.equal(s.obytes, 364);
    ethdev.stop(p);
    ethdev.close(p);
    assertFull(mp);
  });

  it('refuses bad devargs and bad files when the port is created', () => {
    const { heap } = setup({}, 16 << 20);
    const ethdev = new Ethdev(heap, drivers);
    writeFileSync(path('junk'), 'not a capture at all');
    assert.throws(() => ethdev.create('net_pcap0'), /net_pcap0: needs rx_pcap=FILE and\/or tx_pcap=FILE, or an interface/);
    // A bad file is a bad devarg (ArgError: exit 2), named without an offset when there is none.
    assert.throws(() => ethdev.create(`net_pcap0,rx_pcap=${path('missing')}`), (e: unknown) => e instanceof ArgError && /^net_pcap0: rx_pcap=\S*missing: cannot open: ENOENT: no such file or directory$/.test(e.message));
    assert.throws(() => ethdev.create(`net_pcap0,rx_pcap=${path('junk')}`), (e: unknown) => e instanceof ArgError && /junk: offset 0: bad magic 0x6e6f7420/.test(e.message));
    assert.throws(() => ethdev.create(`net_pcap0,tx_pcap=${path('no/such/dir')}`), (e: unknown) => e instanceof ArgError && /^net_pcap0: tx_pcap=\S*no\/such\/dir: cannot create: ENOENT: no such file or directory$/.test(e.message));
    assert.throws(() => ethdev.create(`net_pcap0,tx_pcap=${path('x')},tx_format=pcapx`), /tx_format=pcapx: expected pcap or pcapng/);
    assert.throws(() => ethdev.create(`net_pcap0,tx_pcap=${path('x')},infinite_rx=1`), /infinite_rx=1 needs an rx_pcap file/);
    assert.throws(() => ethdev.create('net_pcap0,iface=nosuchif0'), (e: unknown) => e instanceof Error && /^net_pcap0: (iface=nosuchif0: no such interface|needs the native shim)/.test(e.message));
    assert.throws(() => ethdev.create(`net_pcap0,rx_pcap=${path('junk')},bogus=1`), /unknown devarg 'bogus' for net_pcap/);
  });
});
