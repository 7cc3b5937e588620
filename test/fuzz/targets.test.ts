// More fuzz targets beside inputs.test.ts, same budget (DPKIT_FUZZ_RUNS, DPKIT_FUZZ_SECONDS):
// testpmd's shell commands parsed and executed against a null-port testpmd in this process,
// the packet header parser, and l3fwd's route files. fast-check for the reasons inputs.test.ts
// gives. Every input is bounded: the shell target never starts forwarding (start is the
// lcores' business, tested in test/apps/testpmd) nor quits (runShell's, not execute's), and
// each command has a deadline, so a campaign of N seconds ends after about N seconds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { parseTestpmdArgs } from '../../src/apps/testpmd/options.js';
import { execute } from '../../src/apps/testpmd/shell.js';
import { Testpmd } from '../../src/apps/testpmd/testpmd.js';
import { readEmRules, readLpmRules } from '../../src/apps/l3fwd/routes.js';
import { drivers } from '../../src/drivers/index.js';
import { Heap } from '../../src/eal/heap.js';
import { DpkitError } from '../../src/errors.js';
import { Ethdev } from '../../src/ethdev/ethdev.js';
import { csum } from '../../src/fwd/csum.js';
import { defaultFwdConfig, type FwdStream } from '../../src/fwd/engine.js';
import { Mbufs } from '../../src/mem/mbuf.js';
import { Mempool } from '../../src/mem/mempool.js';
import { assertFull, portUp } from '../helpers.js';
import { eth, ipv4, ipv6, tcpSeg, udpSeg, vlanEth } from '../net/packets.js';
import { budget, report, trace } from './budget.js';
import { newHdrInfo, parseHeaders, PARSED_L3, PARSED_L4 } from '../../src/net/headers.js';

/** A shell command that takes longer than this has hung (each one is control plane: microseconds). */
const COMMAND_DEADLINE_MS = 5000;

const dir = mkdtempSync(join(tmpdir(), 'dpkit-fuzz-targets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Calls `f`; anything it throws must be a typed error (the one line the CLI prints). */
async function typedOnly(f: () => unknown): Promise<void> {
  try {
    await f();
  } catch (e) {
    if (!(e instanceof DpkitError)) throw e;
  }
}

/** Rejects when `p` has not settled within `ms`, naming `what`. */
function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('fuzzed inputs, more targets', () => {
  it("testpmd's shell commands: each is answered (a line, or one typed error) within its deadline; the pool is full at close", async () => {
    const pmd = new Testpmd(parseTestpmdArgs(['--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64', '--', '--total-num-mbufs=2048']), () => {});
    const log = () => {};
    const words = [
      'show', 'clear', 'set', 'port', 'stats', 'info', 'summary', 'xstats', 'all', 'fwd', 'config', 'rxtx', 'cores', 'device', 'rss-hash', 'key',
      'rxq', 'txq', 'rxd', 'txd', 'desc', 'status', 'burst', 'tx', 'delay', 'retry', 'txpkts', 'nbcore', 'nbport', 'portlist', 'verbose', 'eth-peer',
      'promisc', 'allmulti', 'on', 'off', 'link-up', 'link-down', 'stop', 'close', 'reset', 'mtu', 'io', 'macswap', 'txonly', 'csum', 'icmpecho',
      'help', 'quit', 'exit', '#', './no-such-engine.js', '02:00:00:00:00:01', 'zz:zz', '0', '1', '2', '7', '64', '65535', '65536', '4294967296',
      '0,1', '1-0', '0-3', '64,64', '9'.repeat(20), '-1', '',
    ];
    const line = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 7 }).map((w) => w.join(' '));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(line, async (text) => {
        // Forwarding is the lcores' business (test/apps/testpmd): a start here would make every
        // later command a different target and cost a second of worker start-up each.
        if (/^\s*start\b/.test(text)) return;
        n++;
        trace('shell commands', text);
        await deadline(typedOnly(() => execute(pmd, text, log)), COMMAND_DEADLINE_MS, `shell command '${text}'`);
        assert.equal(pmd.forwarding, false);
      }),
      { ...budget(), examples: [['port stop all'], ['port close 0'], ['set nbport 0'], ['port config all rxd 0'], ['set txpkts 0,1'], ['set txpkts 99999999999999999999'], ['set portlist 0-4294967295'], ['quit']] } as fc.Parameters<[string]>,
    );
    report('shell commands', n);
    for (const p of [...pmd.ports]) if (!pmd.ethdev.isStarted(p)) pmd.ethdev.start(p);
    pmd.close(); // throws LeakError when a command lost mbufs
  });

  it('the packet header parser: never throws, never reports a header past the bytes it was given', () => {
    const u8 = new Uint8Array(4096);
    const info = newHdrInfo();
    const at = 64;
    // Real headers first (ethertypes, IHL, protocols, lengths near their bounds), then junk.
    const pkt = fc.tuple(
      fc.constantFrom(0x0800, 0x86dd, 0x8100, 0x88a8, 0x0806, 0x1234),
      fc.constantFrom(0x0800, 0x86dd, 0x8100),
      fc.integer({ min: 0, max: 0xff }),
      fc.constantFrom(6, 17, 1, 58, 0, 44, 132),
      fc.uint8Array({ minLength: 0, maxLength: 200 }),
      fc.nat(220),
    );
    let n = 0;
    fc.assert(
      fc.property(pkt, ([et, inner, vhl, proto, body, len]) => {
        n++;
        trace('header parser', [et, inner, vhl, proto, body, len]);
        u8.fill(0, at, at + 300);
        const v = new DataView(u8.buffer);
        v.setUint16(at + 12, et);
        v.setUint16(at + 16, inner);
        u8[at + 14] = vhl;
        u8[at + 18] = vhl;
        u8[at + 14 + 9] = proto;
        u8[at + 18 + 9] = proto;
        u8[at + 14 + 6] = proto; // IPv6 next header
        u8.set(body, at + 24);
        const depth = parseHeaders(u8, at, len, info);
        if (depth >= PARSED_L3) assert.ok(info.l3Off >= at && info.l3Off + info.l3Len <= at + len, `L3 header inside the ${len} bytes`);
        if (depth >= PARSED_L4) assert.ok(info.l4Off >= info.l3Off + info.l3Len && info.l4Off + info.l4Len <= at + len, `L4 header inside the ${len} bytes`);
      }),
      budget() as fc.Parameters<[[number, number, number, number, Uint8Array, number]]>,
    );
    report('header parser', n);
  });

  it("l3fwd's route files (LPM and EM): the routes, or one error naming file and line", () => {
    const field = fc.constantFrom('R', 'R ', '#', '', '10.0.0.0/8', '1.2.3.4/33', '256.1.1.1/24', '1.2.3/24', '0.0.0.0/0', '1.2.3.4', '0', '255', '256', '-1', '65535', '65536', '17', 'x', '\t', '/', '1e3', '0x10');
    const lineArb = fc.array(field, { maxLength: 8 }).map((f) => f.join(' '));
    const file = join(dir, 'routes.cfg');
    let n = 0;
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 6 }), fc.boolean(), (lines, em) => {
        n++;
        trace('l3fwd route files', [lines, em]);
        writeFileSync(file, lines.join('\n'));
        try {
          const routes = em ? readEmRules(file) : readLpmRules(file);
          assert.ok(routes.length > 0);
        } catch (e) {
          if (!(e instanceof DpkitError)) throw e;
          assert.ok(e.message.startsWith(`l3fwd: ${file}`) && !e.message.includes('\n'), e.message);
        }
      }),
      budget() as fc.Parameters<[string[], boolean]>,
    );
    report('l3fwd route files', n);
  });

  it('the csum engine: its kernel and its twin leave every packet and its flags the same, whatever the bytes', () => {
    /** One side: a heap on `datapath`, a ring port looped on itself, the csum engine over it. */
    const side = (datapath: 'wasm' | 'ts') => {
      const heap = Heap.create({ size: 16 << 20, datapath });
      const pool = Mempool.create(heap, { name: 'pool', n: 512, cacheSize: 32 });
      const ethdev = new Ethdev(heap, drivers);
      const p = portUp(ethdev, pool, ethdev.create('net_ring0'));
      const mb = new Mbufs(heap);
      const ctx = { heap, mb, pool, burst: heap.burst(64), config: defaultFwdConfig() };
      const fs: FwdStream = { rxPort: p, rxQueue: 0, txPort: p, txQueue: 0, rxq: ethdev.rxQueue(p, 0), txq: ethdev.txQueue(p, 0), stats: heap.reserve(64) >>> 3, txMac: Uint8Array.of(2, 0, 0, 0, 0, 1), peerMac: Uint8Array.of(2, 0, 0, 0, 0, 2) };
      return { heap, pool, ethdev, mb, engine: csum(ctx), fs, b: heap.burst(64) };
    };
    const sides = [side('wasm'), side('ts')] as const;
    const l4 = fc.tuple(fc.constantFrom(6, 17, 1, 58), fc.nat(300), fc.nat(4)).map(([proto, len, opt]) => {
      const body = Uint8Array.from({ length: Math.max(8, len) }, (_, i) => (i * 7 + len) & 0xff); // ICMP: room for its checksum
      return [proto, proto === 6 ? tcpSeg(1000 + len, 80, body, opt) : proto === 17 ? udpSeg(53, 1000 + len, body) : body] as const;
    });
    const packet = fc.oneof(
      fc.tuple(l4, fc.nat(3)).map(([[proto, seg], k]) => (k === 0 ? eth(0x0800, ipv4(proto, seg)) : k === 1 ? eth(0x86dd, ipv6(proto, seg)) : k === 2 ? vlanEth(5, 0x0800, ipv4(proto, seg)) : vlanEth(5, 0x86dd, ipv6(proto, seg)))),
      fc.uint8Array({ minLength: 1, maxLength: 120 }),
    );
    // Structured packets with a few bytes overwritten: lengths, IHL and checksums that lie.
    const hostile = fc.tuple(packet, fc.array(fc.tuple(fc.nat(80), fc.nat(255)), { maxLength: 3 }), fc.nat(0x3ff)).map(([p, flips, ol]) => {
      const q = Uint8Array.from(p);
      for (const [at, v] of flips) if (at < q.length) q[at] = v;
      return [q, ol] as const;
    });
    let n = 0;
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 1, maxLength: 32 }), (pkts) => {
        n++;
        trace('csum kernel vs twin', pkts);
        const out = sides.map(({ pool, ethdev, mb, engine, fs, b }) => {
          assert.equal(pool.allocBulk(b, pkts.length), pkts.length);
          pkts.forEach(([bytes, ol], i) => {
            mb.write(b[i]!, bytes);
            mb.setOlFlags(b[i]!, ol);
          });
          assert.equal(ethdev.txBurst(0, 0, b, pkts.length), pkts.length);
          engine.fwd(fs);
          const got = ethdev.rxBurst(0, 0, b, 64);
          const seen = Array.from(b.subarray(0, got), (h) => [Buffer.from(mb.read(h)).toString('hex'), mb.olFlags(h), mb.olFlagsHi(h)]);
          mb.freeBulk(b, got);
          return seen;
        });
        assert.deepEqual(out[0], out[1]);
      }),
      budget() as fc.Parameters<[(readonly [Uint8Array, number])[]]>,
    );
    for (const s2 of sides) {
      s2.ethdev.close(0);
      assertFull(s2.pool);
    }
    report('csum kernel vs twin', n);
  });
});
