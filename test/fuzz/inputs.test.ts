// Property-based fuzzing of every input a user or a peer controls: each target takes what
// fast-check generates and must answer with its value or one typed error (DpkitError, or
// node's own parseArgs error for an unknown flag), never another exception.
//
// fast-check rather than a coverage-guided fuzzer: jazzer.js 4's prebuilt libFuzzer needs
// glibc 2.38 (this Debian has 2.36) and older releases fetch their binaries at install.
// Generators are shaped by each format (headers, lengths near their bounds, flag names),
// which reaches the checks byte flips would rarely hit. test/pcap/mutations.test.ts adds
// mutation of real captures against libpcap.
//
// Runs per target: DPKIT_FUZZ_RUNS (default 300), or DPKIT_FUZZ_SECONDS per target for a
// campaign (`npm run fuzz`). A failure prints fast-check's seed and path: add the input to
// the target's `examples` so it stays a regression case.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { TESTPMD_USAGE, parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { drivers } from '../../src/drivers/index.js';
import { decode as decodeMemif, MSG_SIZE } from '../../src/drivers/memif/protocol.js';
import { parseCoreList, parseCoreMask, parseLcoreMap } from '../../src/eal/options.js';
import { parseDevargs } from '../../src/ethdev/devargs.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { DpkitError } from '../../src/errors.js';
import { cksumAdjust, ipv4CksumSet, ipv4CksumVerify, rawCksum } from '../../src/net/checksum.js';
import { parseMac } from '../../src/net/ether.js';
import { PcapReader, READER_STATE_WORDS, READER_WINDOW } from '../../src/pcap/reader.js';
import { FLAG_REPLY, HDR_SIZE, MAX_PAYLOAD, decodeMsg, encodeMsg, header } from '../../src/vhost/wire.js';
import { setup } from '../helpers.js';
import { budget, report, trace } from './budget.js';


/** Runs property `p` under the budget, counting executions for `name`. */
function check<T>(name: string, arb: fc.Arbitrary<T>, p: (v: T) => void, examples: T[] = []): void {
  let n = 0;
  fc.assert(
    fc.property(arb, (v) => {
      n++;
      trace(name, v);
      p(v);
    }),
    { ...budget(), examples: examples.map((e) => [e]) } as fc.Parameters<[T]>,
  );
  report(name, n);
}

/** Calls `f`; anything it throws must be a typed error (or node's parseArgs error, which the CLI turns into one line). */
function typedOnly(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (e instanceof DpkitError) return;
    if (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) return;
    throw e;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'dpkit-fuzz-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Numbers near the bounds parsers check. */
const edgy = fc.constantFrom('', '0', '1', '-1', '2', '7', '8', '64', '65535', '65536', '4294967295', '4294967296', '1e3', '0x10', ' 1', 'abc', '9'.repeat(30), 'NaN', 'Infinity', '1.5');

describe('fuzzed inputs get a value or one typed error', () => {
  it('pcap and pcapng readers: structured captures with lengths near their limits', () => {
    const u32 = fc.oneof(fc.constantFrom(0, 1, 12, 13, 16, 28, 32, 60, 65535, 262_144, 262_145, 0x7fffffff, 0xffffffff), fc.nat(4096));
    const record = fc.record({ incl: u32, orig: u32, body: fc.uint8Array({ maxLength: 200 }) });
    const pcap = fc.record({ magic: fc.constantFrom(0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x12345678), major: fc.constantFrom(2, 1, 3), minor: fc.nat(6), snaplen: u32, recs: fc.array(record, { maxLength: 6 }) }).map((c) => {
      const parts: number[] = [];
      const w32 = (v: number) => parts.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
      w32(c.magic);
      parts.push(c.major, 0, c.minor, 0);
      w32(0);
      w32(0);
      w32(c.snaplen);
      w32(1);
      for (const r of c.recs) {
        w32(1);
        w32(0);
        w32(r.incl);
        w32(r.orig);
        parts.push(...r.body);
      }
      return Uint8Array.from(parts);
    });
    const block = fc.record({ type: fc.constantFrom(0x0a0d0d0a, 1, 2, 3, 6, 5, 0x80000001), len: fc.option(u32), body: fc.uint8Array({ maxLength: 120 }) });
    const pcapng = fc.array(block, { minLength: 1, maxLength: 8 }).map((blocks) => {
      const parts: number[] = [];
      const w32 = (v: number) => parts.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
      for (const b of blocks) {
        const body = b.type === 0x0a0d0d0a ? [0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, ...new Array(8).fill(0xff), ...b.body] : [...b.body];
        while (body.length % 4) body.push(0);
        const len = b.len ?? 12 + body.length;
        w32(b.type);
        w32(len);
        parts.push(...body);
        w32(len);
      }
      return Uint8Array.from(parts);
    });
    const window = new Uint8Array(READER_WINDOW);
    const state = new Float64Array(READER_STATE_WORDS);
    const file = join(dir, 'capture');
    check('pcap reader', fc.oneof(pcap, pcapng, fc.uint8Array({ maxLength: 300 })), (bytes) => {
      writeFileSync(file, bytes);
      state.fill(0);
      typedOnly(() => {
        const r = new PcapReader(file, { window, state, skipTruncated: (bytes.length & 1) === 1 });
        try {
          for (let n = 0; r.next(); n++) {
            assert.ok(r.caplen <= 262_144 && r.dataOff + r.caplen <= window.length, 'a record inside the window');
            assert.ok(n < bytes.length, 'every record advances the file');
          }
        } finally {
          r.close();
        }
      });
    });
  });

  it('devargs, and every driver that opens no file or socket, probing them', () => {
    const { heap } = setup({}, 64 << 20);
    const names = ['net_null', 'net_ring', 'net_nicsim', 'net_af_packet', 'net_faulty'];
    const keyOf = (d: string) => fc.constantFrom(...drivers.get(d)!.keys, 'bogus', '', 'size=1');
    const devargs = fc
      .constantFrom(...names)
      .chain((d) => fc.tuple(fc.constant(d), fc.constantFrom('0', '1', '', 'x'), fc.array(fc.tuple(keyOf(d), edgy), { maxLength: 5 })))
      .map(([d, suffix, kv]) => `${d}${suffix}${kv.map(([k, v]) => `,${k}=${v}`).join('')}`);
    const junk = fc.string({ unit: fc.constantFrom(...'net_ulr0,=abc ,=='.split('')), maxLength: 40 });
    check('devargs', fc.oneof(devargs, junk), (text) => {
      typedOnly(() => parseDevargs(text, [...drivers.keys()]));
      // A port made is closed again, so the heap's pools and rings stay few.
      typedOnly(() => {
        const ethdev = new Ethdev(heap, drivers);
        const p = ethdev.create(text);
        ethdev.close(p);
      });
    });
  });

  it("testpmd's command line: EAL options and testpmd's own, with values near their bounds", () => {
    const flags = [...new Set(TESTPMD_USAGE.match(/--[a-z][a-z0-9-]*/g) ?? [])];
    const eal = fc.constantFrom('-l', '-c', '--lcores', '-n', '--main-lcore', '--vdev', '--file-prefix', '--no-huge', '--no-pci', '-m', '--bogus');
    const word = fc.oneof(edgy, fc.constantFrom('0-1', '0,1', '(0-2)@(0,1)', '1@0', 'net_null0', 'io', 'macswap', '0x3', 'paired', 'loop'));
    const argv = fc.tuple(fc.array(fc.tuple(eal, word), { maxLength: 3 }), fc.array(fc.tuple(fc.constantFrom(...flags, '-i', '-a', '--'), fc.option(word)), { maxLength: 6 })).map(([e, t]) => [
      ...e.flatMap(([f, v]) => [f, v]),
      '--',
      ...t.map(([f, v]) => (v === null ? f : `${f}=${v}`)),
    ]);
    check('testpmd options', argv, (a) => typedOnly(() => parseTestpmdArgs(a, [0, 1])));
    check('core lists', fc.tuple(fc.string({ unit: fc.constantFrom(...'0123456789-,@()x '.split('')), maxLength: 16 }), fc.nat(2)), ([t, k]) =>
      typedOnly(() => (k === 0 ? parseCoreList(t, '-l') : k === 1 ? parseCoreMask(t) : parseLcoreMap(t))),
    );
    check('MAC addresses', fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFxg:-'.split('')), maxLength: 20 }), (t) => typedOnly(() => parseMac(t)));
  });

  it('vhost-user and memif control messages from a hostile peer', () => {
    check('vhost-user messages', fc.tuple(fc.nat(60), fc.uint8Array({ maxLength: 300 })), ([req, bytes]) => {
      const r = decodeMsg(req, new DataView(bytes.buffer, bytes.byteOffset, bytes.length));
      assert.ok(typeof r === 'string' || typeof r === 'object', 'a message or a named problem');
    });
    check('memif messages', fc.tuple(fc.uint8Array({ minLength: MSG_SIZE, maxLength: MSG_SIZE }), fc.nat(16), fc.constantFrom(MSG_SIZE, 0, MSG_SIZE - 1, MSG_SIZE + 1)), ([bytes, type, len]) => {
      new DataView(bytes.buffer).setUint16(0, type, true);
      typedOnly(() => decodeMemif('net_memif0', bytes, len));
    });
  });

  it("vhost-user and memif messages DPDK sent (captured), then mutated: a message or one named problem", () => {
    /** corpus/*-dpdk.jsonl: two real DPDK 22.11 testpmds' control messages (corpus/capture-control.py). */
    const captured = (name: string) =>
      readFileSync(new URL(`./corpus/${name}`, import.meta.url), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { dir: 'client' | 'server'; hex: string })
        .map((m) => ({ ...m, bytes: Uint8Array.from(Buffer.from(m.hex, 'hex')) }));
    const vhost = captured('vhost-user-dpdk.jsonl');
    const memif = captured('memif-dpdk.jsonl');
    // As captured: every request virtio_user sent decodes, and what dpkit's encoder writes from it decodes the same;
    // SET_STATUS and GET_STATUS (39, 40: the STATUS protocol feature DPDK's backend offered, dpkit's does not) are named.
    const requests = vhost.filter((m) => (header(new DataView(m.bytes.buffer)).flags & FLAG_REPLY) === 0);
    assert.ok(requests.length >= 30, 'the capture holds a whole handshake');
    for (const m of requests) {
      const h = header(new DataView(m.bytes.buffer));
      const r = decodeMsg(h.req, new DataView(m.bytes.buffer, HDR_SIZE, h.size));
      if (h.req === 39 || h.req === 40) {
        assert.equal(r, `request ${h.req}: not supported`);
        continue;
      }
      assert.ok(typeof r === 'object', `DPDK's ${m.hex.slice(0, 24)}…: ${String(r)}`);
      const again = encodeMsg(r, h.flags);
      assert.deepEqual(decodeMsg(h.req, new DataView(again.buffer, HDR_SIZE)), r, `request ${h.req} re-encoded`);
    }
    for (const m of memif) assert.ok(typeof decodeMemif('net_memif0', m.bytes, m.bytes.length).type === 'number', `DPDK's memif ${m.hex.slice(0, 8)}…`);

    /** One to four edits: a byte, a u32 or u64 near a boundary, a cut, bytes appended. */
    const edits = fc.array(fc.tuple(fc.nat(3), fc.nat(600), fc.constantFrom(0, 1, 0x7f, 0xff, 0x100, 0xffff, 0x7fffffff, 0xffffffff, 2 ** 53, 2 ** 64 - 1)), { minLength: 1, maxLength: 4 });
    const mutate = (seed: Uint8Array, es: [number, number, number][]): Uint8Array => {
      let b = Uint8Array.from(seed);
      for (const [kind, at, value] of es) {
        const i = b.length ? at % b.length : 0;
        const v = new DataView(b.buffer);
        if (kind === 0 && b.length) b[i] = value & 0xff;
        else if (kind === 1 && i + 8 <= b.length) v.setBigUint64(i, BigInt.asUintN(64, BigInt(value)), true);
        else if (kind === 2) b = b.slice(0, i);
        else b = Uint8Array.from([...b, ...new Array(at % 64).fill(value & 0xff)]);
      }
      return b;
    };
    check('vhost-user messages from DPDK, mutated', fc.tuple(fc.nat(vhost.length - 1), edits), ([k, es]) => {
      const b = mutate(vhost[k]!.bytes, es);
      if (b.length < HDR_SIZE) return;
      const h = header(new DataView(b.buffer));
      // The reader (msg-reader.ts) refuses a header whose size is over MAX_PAYLOAD, and waits for exactly size bytes.
      if (h.size > MAX_PAYLOAD || b.length < HDR_SIZE + h.size) return;
      const r = decodeMsg(h.req, new DataView(b.buffer, HDR_SIZE, h.size));
      assert.ok(typeof r === 'string' ? r.length > 0 && !r.includes('\n') : typeof r === 'object', 'a message or a one-line problem');
    });
    check('memif messages from DPDK, mutated', fc.tuple(fc.nat(memif.length - 1), edits), ([k, es]) => {
      const b = mutate(memif[k]!.bytes, es);
      typedOnly(() => decodeMemif('net_memif0', b, b.length));
    });
  });

  it('IPv4 checksums: set then verified, and adjusted by RFC 1624 as recomputed', () => {
    const hdr = fc.tuple(fc.uint8Array({ minLength: 60, maxLength: 60 }), fc.integer({ min: 5, max: 15 }), fc.nat(29), fc.nat(0xffff));
    check('checksums', hdr, ([bytes, ihl, word, value]) => {
      const u8 = Uint8Array.from(bytes);
      u8[0] = 0x40 | ihl;
      ipv4CksumSet(u8, 0);
      assert.ok(ipv4CksumVerify(u8, 0));
      assert.equal(rawCksum(u8, 0, ihl * 4), 0xffff, 'the header sums to all ones');
      // Change one 16-bit word inside the header (not the checksum), adjust incrementally.
      const at = 2 * (word % (ihl * 2));
      if (at === 0 || at === 10) return; // not IHL (it bounds the header) nor the checksum itself
      const old = (u8[at]! << 8) | u8[at + 1]!;
      u8[at] = value >>> 8;
      u8[at + 1] = value & 0xff;
      const adjusted = cksumAdjust((u8[10]! << 8) | u8[11]!, old, value);
      u8[10] = adjusted >>> 8;
      u8[11] = adjusted & 0xff;
      assert.ok(ipv4CksumVerify(u8, 0), `word ${at}: ${old.toString(16)} -> ${value.toString(16)}`);
    });
  });
});
