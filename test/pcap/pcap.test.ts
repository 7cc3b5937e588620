import assert from 'node:assert/strict';
import { mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { PcapError } from '../../src/pcap/format.js';
import { PcapReader, READER_WINDOW } from '../../src/pcap/reader.js';
import { PcapWriter } from '../../src/pcap/writer.js';
import { native, nativeUnavailable } from '../../src/native/native.js';
import { bytesPerCall } from '../helpers.js';
import { loadNs, storeNs, unitsToTs } from '../../src/pcap/time.js';
import { Bytes, concat, epb, frame, idb, packets, readCapture, shb, block, writeCapture } from './captures.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-pcap-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

/** A classic pcap built by hand, either byte order, µs or ns magic. */
function classic(le: boolean, ns: boolean, recs: { sec: number; frac: number; data: Uint8Array; orig?: number }[], snaplen = 65535): Bytes {
  const b = new Bytes(le).u32(ns ? 0xa1b23c4d : 0xa1b2c3d4).u16(2).u16(4).u32(0).u32(0).u32(snaplen).u32(1);
  for (const r of recs) b.u32(r.sec).u32(r.frac).u32(r.data.length).u32(r.orig ?? r.data.length).bytes(r.data);
  return b;
}

describe('timestamps', () => {
  it('stores nanoseconds as an exact u64 and reads them back, at the edges too', () => {
    const u32 = new Uint32Array(2);
    const out = { sec: 0, nsec: 0 };
    for (const [sec, nsec] of [[0, 0], [1, 1], [1_700_000_000, 999_999_999], [0xffffffff, 999_999_999], [65535, 5], [65536, 0]] as const) {
      storeNs(u32, 0, sec, nsec);
      const exact = BigInt(sec) * 1_000_000_000n + BigInt(nsec);
      assert.equal(BigInt(u32[1]!) * 2n ** 32n + BigInt(u32[0]!), exact, `${sec}.${nsec}`);
      assert.deepEqual(loadNs(u32, 0, out), { sec, nsec });
    }
  });

  it('divides pcapng time units of any resolution exactly', () => {
    const out = { sec: 0, nsec: 0 };
    const units = (v: bigint) => [Number(v >> 32n), Number(v & 0xffffffffn)] as const;
    assert.deepEqual(unitsToTs(...units(1_700_000_000_123_456n), 1e6, out), { sec: 1_700_000_000, nsec: 123_456_000 });
    assert.deepEqual(unitsToTs(...units(1_700_000_000_987_654_321n), 1e9, out), { sec: 1_700_000_000, nsec: 987_654_321 });
    assert.deepEqual(unitsToTs(...units((1_600_000_000n << 10n) + 512n), 1024, out), { sec: 1_600_000_000, nsec: 500_000_000 });
  });
});

describe('pcap and pcapng files', () => {
  for (const format of ['pcap', 'pcapng'] as const) {
    for (const resolution of ['ns', 'us'] as const) {
      it(`round-trips ${format} with ${resolution} timestamps: bytes, lengths, times`, () => {
        const pkts = packets([60, 64, 65, 1514, 9000, 65535, 262_144, 1]);
        const f = path(`rt-${format}-${resolution}`);
        writeCapture(f, pkts, { format, resolution });
        const back = readCapture(f);
        assert.equal(back.length, pkts.length);
        back.forEach((r, i) => {
          assert.deepEqual(r.bytes, pkts[i]!.bytes, `packet ${i}`);
          assert.equal(r.origLen, pkts[i]!.bytes.length);
          assert.equal(r.sec, pkts[i]!.sec);
          assert.equal(r.nsec, resolution === 'ns' ? pkts[i]!.nsec : Math.floor(pkts[i]!.nsec / 1000) * 1000);
          assert.equal(r.linktype, 1);
        });
      });
    }
  }

  it('reads classic pcap in both byte orders and both resolutions', () => {
    const data = frame(70, 3);
    for (const le of [true, false]) {
      for (const ns of [true, false]) {
        const f = classic(le, ns, [{ sec: 1234567890, frac: ns ? 999_999_999 : 999_999, data, orig: 100 }]).save(path(`c-${le}-${ns}`));
        const [r] = readCapture(f);
        assert.deepEqual(r!.bytes, data);
        assert.equal(r!.origLen, 100, 'a snapped packet keeps its original length');
        assert.deepEqual([r!.sec, r!.nsec], [1234567890, ns ? 999_999_999 : 999_999_000], `le=${le} ns=${ns}`);
      }
    }
  });

  it('reads pcapng sections of either byte order, several interfaces, resolutions, offsets, and skips unknown blocks', () => {
    const a = frame(64, 1);
    const b = frame(200, 2);
    const c = frame(90, 3);
    const file = concat(
      shb(true),
      idb(true, { snaplen: 0 }), // default resolution: microseconds
      idb(true, { tsresol: 0x80 | 10, tsoffset: 100 }), // 2^-10 s, 100 s offset
      block(true, 0x0bad, new Uint8Array(12)), // unknown: skipped
      epb(true, 0, 0, 1_500_000, a), // 1.5 s
      epb(true, 1, 0, 2048 + 256, b), // 2.25 s + 100
      block(true, 3, new Bytes(true).u32(c.length).bytes(c).pad4().build()), // SPB on interface 0
      shb(false), // a big-endian section: interfaces start over
      idb(false, { tsresol: 9 }),
      epb(false, 0, 0x17b, 0x6d0b4d8f, c), // 0x17b6d0b4d8f ns
    );
    writeFileSync(path('ng'), file);
    const recs = readCapture(path('ng'));
    assert.equal(recs.length, 4);
    assert.deepEqual(recs.map((r) => [r.ifIndex, r.sec, r.nsec]), [
      [0, 1, 500_000_000],
      [1, 102, 250_000_000],
      [0, 0, 0],
      [0, Math.floor(0x17b6d0b4d8f / 1e9), 0x17b6d0b4d8f % 1e9],
    ]);
    assert.deepEqual(recs[1]!.bytes, b);
    assert.deepEqual(recs[2]!.bytes, c);
    assert.deepEqual(recs[3]!.bytes, c);
  });

  it('streams a file larger than its window, never holding it whole', () => {
    const pkts = packets(Array.from({ length: 4000 }, (_, i) => 600 + (i % 900)));
    writeCapture(path('big'), pkts);
    assert.ok(statSync(path('big')).size > 3 * READER_WINDOW);
    const r = new PcapReader(path('big'));
    let n = 0;
    while (r.next()) {
      const p = pkts[n++]!;
      assert.equal(r.caplen, p.bytes.length);
      if (n % 397 === 0) assert.deepEqual(r.window.subarray(r.dataOff, r.dataOff + r.caplen), p.bytes);
    }
    r.close();
    assert.equal(n, 4000);
    assert.equal(r.window.length, READER_WINDOW);
  });

  it('resumes from its state: a second reader on the same state continues where the first stopped', () => {
    const pkts = packets([64, 128, 256, 512, 1024]);
    writeCapture(path('resume'), pkts, { format: 'pcapng' });
    const state = new Float64Array(400);
    const r1 = new PcapReader(path('resume'), { state });
    assert.equal(r1.format, 'pcapng');
    assert.ok(r1.next() && r1.next());
    r1.close();
    const r2 = new PcapReader(path('resume'), { state });
    const rest: number[] = [];
    while (r2.next()) rest.push(r2.caplen);
    r2.close();
    assert.deepEqual(rest, [256, 512, 1024]);
    assert.equal(r2.packets, 5);
    assert.ok(r2.ended);
  });
});

describe('malformed captures', () => {
  const good = classic(true, true, [{ sec: 1, frac: 2, data: frame(80, 1) }, { sec: 3, frac: 4, data: frame(90, 2) }]).build();
  const fails = (name: string, bytes: Uint8Array, re: RegExp, offset?: number) => {
    const f = path(name);
    writeFileSync(f, bytes);
    assert.throws(
      () => readCapture(f),
      (e: unknown) => e instanceof PcapError && e.file === f && re.test(e.message) && (offset === undefined || e.offset === offset) && e.message.startsWith(`${f}: offset `),
      name,
    );
  };

  it('names the file, the offset and the problem', () => {
    fails('empty', new Uint8Array(0), /empty file, not a pcap or pcapng capture/, 0);
    fails('magic', Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]), /bad magic 0x01020304: not a pcap or pcapng capture/, 0);
    fails('short-header', good.subarray(0, 20), /truncated file header: 24 bytes needed, 20 in the file/, 0);
    fails('rec-header', good.subarray(0, 24 + 16 + 80 + 10), /truncated record header: 16 bytes needed, 10 left/, 120);
    fails('rec-body', good.subarray(0, 24 + 16 + 80 + 16 + 50), /truncated record: 106 bytes needed, 66 left/, 120);
    fails('ng-snaplen', concat(shb(true), idb(true, { snaplen: 13 }), epb(true, 0, 0, 0, frame(64, 1))), /enhanced packet block caplen 64 is larger than interface 0's snaplen 13/);
    const huge = Uint8Array.from(good);
    new DataView(huge.buffer).setUint32(24 + 8, 300_000, true);
    fails('caplen', huge, /record caplen 300000 is larger than 262144: corrupt record header/, 24);
    const ng = concat(shb(true), idb(true), epb(true, 0, 0, 0, frame(64, 1)));
    const mismatch = Uint8Array.from(ng);
    new DataView(mismatch.buffer).setUint32(ng.length - 4, 99, true);
    fails('ng-mismatch', mismatch, /enhanced packet block length mismatch: 96 at its start, 99 at its end/, 28 + 24);
    const odd = Uint8Array.from(ng);
    new DataView(odd.buffer).setUint32(28 + 24 + 4, 94, true);
    fails('ng-odd', odd, /enhanced packet block length 94 is not a multiple of 4/);
    fails('ng-iface', concat(shb(true), epb(true, 2, 0, 0, frame(64, 1))), /enhanced packet block for interface 2, but the section describes 0 interface/);
    fails('ng-cut', ng.subarray(0, ng.length - 8), /truncated enhanced packet block: 96 bytes needed, 88 left/);
    fails('ng-bom', concat(new Bytes(true).u32(0x0a0d0d0a).u32(28).u32(0x12345678).build(), new Uint8Array(16)), /bad pcapng byte-order magic 0x12345678/);
  });

  it('closes the file when its header is refused (the caller never gets a reader to close)', () => {
    const f = path('leak');
    writeFileSync(f, Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]));
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 100; i++) assert.throws(() => new PcapReader(f), PcapError);
    assert.equal(open(), before);
  });

  it('skips a truncated final record with a warning when asked, keeping every whole one', () => {
    const f = path('cut');
    writeFileSync(f, good.subarray(0, good.length - 7));
    const warnings: string[] = [];
    const recs = readCapture(f, { skipTruncated: true, onWarning: (m) => warnings.push(m) });
    assert.equal(recs.length, 1);
    assert.deepEqual(recs[0]!.bytes, frame(80, 1));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /cut: offset 120: truncated record: 106 bytes needed, 99 left in the file; skipped, reading ends here/);
  });

  it("reads a pcap record longer than the file's snaplen as libpcap does: its first snaplen bytes, counted, said once", () => {
    const f = path('snaplen');
    writeFileSync(f, classic(true, false, [{ sec: 1, frac: 0, data: frame(70, 1) }, { sec: 2, frac: 0, data: frame(40, 2) }, { sec: 3, frac: 0, data: frame(90, 3) }], 64).build());
    const said: [number, string][] = [];
    const r = new PcapReader(f, { onCutToSnaplen: (n, m) => said.push([n, m]) });
    const got: Uint8Array[] = [];
    while (r.next()) got.push(r.window.slice(r.dataOff, r.dataOff + r.caplen));
    r.close();
    assert.deepEqual(got, [frame(70, 1).subarray(0, 64), frame(40, 2), frame(90, 3).subarray(0, 64)]);
    assert.equal(r.cutToSnaplen, 2);
    assert.equal(said.length, 1);
    assert.equal(said[0]![0], 2);
    assert.match(said[0]![1], /snaplen: 2 record\(s\) longer than the snaplen were read cut to it, as libpcap reads them$/);
    // A snaplen of 0 (and one above libpcap's maximum) means the maximum: nothing is cut.
    for (const snaplen of [0, 0x7fffffff]) {
      writeFileSync(f, classic(true, false, [{ sec: 1, frac: 0, data: frame(1514, 1) }], snaplen).build());
      assert.deepEqual(readCapture(f).map((x) => x.bytes.length), [1514]);
    }
  });

  it('refuses a missing file with its name', () => {
    assert.throws(() => new PcapReader(path('nope.pcap')), /nope\.pcap: cannot open: ENOENT: no such file or directory$/);
  });

  it('flushes without allocating through the native shim (fs.writeSync allocates every call: an lcore writing a capture collected for it)', async (t) => {
    if (!native()?.writeFd) return t.skip(`native shim ${nativeUnavailable() ?? 'without writeFd (rebuild it)'}`);
    const w = PcapWriter.create('/dev/null');
    const bytes = new Uint8Array(64);
    const fd = openSync('/dev/null', 'w');
    try {
      // The meter sees fs.writeSync's allocation, so it would see one in the writer's flush.
      const viaFs = await bytesPerCall((n) => {
        let acc = 0;
        for (let i = 0; i < n; i++) acc += writeSync(fd, bytes, 0, 64);
        return acc;
      }, 0);
      assert.ok(viaFs >= 16, `fs.writeSync: ${viaFs} bytes a call`);
      const flush = await bytesPerCall((n) => {
        for (let i = 0; i < n; i++) {
          w.beginRecord(64, 64, 1, 2);
          w.endRecord();
          w.flush();
        }
        return n;
      }, 2);
      assert.ok(flush < 2, `a record and a flush: ${flush} bytes`);
      // A range outside the bytes, or a closed fd, is one line naming it; nothing is written.
      const shim = native()!;
      assert.throws(() => shim.writeFd!(fd, bytes, 60, 8), /writeFd: offset and length must be whole numbers inside bytes/);
      assert.throws(() => shim.writeFd!(fd, bytes, 0.5, 8), /writeFd: offset and length must be whole numbers inside bytes/);
      assert.throws(() => shim.writeFd!(1 << 20, bytes, 0, 8), /write.*fd 1048576/);
    } finally {
      closeSync(fd);
      w.close();
    }
  });

  it('writes files byte for byte as libpcap lays them out', () => {
    const f = path('layout');
    writeCapture(f, [{ bytes: Uint8Array.from([1, 2, 3]), sec: 0x01020304, nsec: 0x05060708 }]);
    const b = readFileSync(f);
    assert.deepEqual([...b.subarray(0, 24)], [0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0]);
    assert.deepEqual([...b.subarray(24)], [4, 3, 2, 1, 8, 7, 6, 5, 3, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3]);
  });
});
