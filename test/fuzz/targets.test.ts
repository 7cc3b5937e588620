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
import { DpkitError } from '../../src/errors.js';
import { newHdrInfo, parseHeaders, PARSED_L3, PARSED_L4 } from '../../src/net/headers.js';

const seconds = Number(process.env['DPKIT_FUZZ_SECONDS'] ?? 0);
const runs = Number(process.env['DPKIT_FUZZ_RUNS'] ?? 300);
const budget = (): fc.Parameters<unknown> => (seconds > 0 ? { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false } : { numRuns: runs });
/** A shell command that takes longer than this has hung (each one is control plane: microseconds). */
const COMMAND_DEADLINE_MS = 5000;

const dir = mkdtempSync(join(tmpdir(), 'dpkit-fuzz-targets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function report(name: string, n: number): void {
  if (seconds > 0) console.log(`fuzz ${name}: ${n} executions in ${seconds} s`);
}

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
        await deadline(typedOnly(() => execute(pmd, text, log)), COMMAND_DEADLINE_MS, `shell command '${text}'`);
        assert.equal(pmd.forwarding, false);
      }),
      { ...budget(), examples: [['port stop all'], ['port close 0'], ['set nbport 0'], ['port config all rxd 0'], ['set txpkts 0,1'], ['quit']] } as fc.Parameters<[string]>,
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
});
