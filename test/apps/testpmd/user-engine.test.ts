// User engines in testpmd: `--forward-mode=./engine.js` and `set fwd ./engine.ts` load a module in
// every lcore; a bad module is one line naming its file, and a failing engine stops every lcore
// with the pools full. Engines are written into a temporary folder, as a user's would be.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isEnginePath } from '../../../src/api/user-engine.js';
import { DPKIT, THREE_LCORES } from './run.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-user-engine-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// An ES module project, as a user's: tsx compiles its .ts engines as ES modules.
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');

// --no-telemetry: stderr must hold the engine's line alone, whichever other dpkit holds the default telemetry socket.
const NULL_PORTS = ['--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64', '--no-telemetry'];
const SMALL = '--total-num-mbufs=8192';

/** Writes an engine module into the test folder. @returns its absolute path. */
function engine(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

/** Runs the built testpmd in `cwd` (default the test folder) to its end; `input` is its whole stdin. */
function testpmd(argv: string[], input?: string, cwd = dir) {
  const r = spawnSync(process.execPath, [DPKIT, 'testpmd', ...argv], { encoding: 'utf8', input, cwd, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Json {
  forwardMode: string;
  lcores: { lcore: number; gc: number | null }[];
  total: { rxPackets: number; txPackets: number; txDropped: number };
  streams: { lcore: number; rxPackets: number; txPackets: number; fwdDropped: number }[];
}

// Drops every other packet (freeing it) and counts its bursts in a SharedArrayBuffer-free way:
// the count of packets kept is what testpmd transmits.
const HALF = `
let mbufs;
export const engine = {
  setup(ctx) { mbufs = ctx.mbufs; if (ctx.streams.length === 0 || ctx.burstSize !== 16) throw new Error('bad context'); },
  burst(b, n) {
    let k = 0;
    for (let i = 0; i < n; i++) { const h = b[i]; if (i & 1) mbufs.free(h); else b[k++] = h; }
    return k;
  },
};
`;

describe('testpmd user engines', () => {
  it('tells a module path from a built-in name', () => {
    for (const m of ['./e.js', '../e.ts', '/abs/e', 'e.mjs', 'dir/e.js']) assert.ok(isEnginePath(m), m);
    for (const m of ['io', 'macswap', '5tswap', 'nosuch']) assert.ok(!isEnginePath(m), m);
  });

  it('--forward-mode=./engine.js runs on every lcore under testpmd\'s statistics: rx = tx + dropped, the GC count reported', () => {
    engine('half.mjs', HALF);
    const r = testpmd([...THREE_LCORES, ...NULL_PORTS, '--', '--forward-mode=./half.mjs', '--nb-cores=2', '--rxq=2', '--txq=2', '--burst=16', '--duration=0.5', SMALL, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as Json;
    assert.equal(j.forwardMode, './half.mjs');
    assert.match(r.stderr, /Set \.\/half\.mjs packet forwarding mode/);
    assert.deepEqual([...new Set(j.streams.filter((s) => s.rxPackets > 0).map((s) => s.lcore))].sort(), [1, 2], 'both lcores forwarded');
    for (const s of j.streams) {
      assert.equal(s.rxPackets, s.txPackets + s.fwdDropped);
      assert.equal(s.txPackets, s.rxPackets / 2, 'every other packet dropped by the engine');
    }
    for (const l of j.lcores) assert.equal(typeof l.gc, 'number', `lcore ${l.lcore} reports its GC count`);
  });

  it('set fwd ./engine.ts and set fwd ./engine.ts retry load a TypeScript engine; built-in modes come back', () => {
    engine('swap.ts', `
import type { Burst, UserStream } from 'dpkit';
export default (_b: Burst, n: number, s: UserStream): number => (s.txPort === 0 || s.txPort === 1 ? n : 0);
`);
    const r = testpmd([...NULL_PORTS, '--', '-i', SMALL], ['set fwd ./swap.ts', 'start', 'stop', 'set fwd ./swap.ts retry', 'show config rxtx', 'set fwd io', 'start', 'stop', 'quit'].join('\n') + '\n');
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = r.stdout.split('testpmd> ');
    assert.equal(out[1], 'Set ./swap.ts packet forwarding mode\n');
    assert.match(out[3]!, /Accumulated forward statistics for all ports/);
    assert.match(out[3]!, /RX-packets: (\d+) +RX-dropped: 0 +RX-total: \1/);
    assert.doesNotMatch(out[3]!, /RX-packets: 0 /);
    assert.equal(out[4], 'Set ./swap.ts packet forwarding mode with retry\n');
    assert.match(out[5]!, /\.\/swap\.ts packet forwarding with retry packets\/burst=32/);
    assert.equal(out[6], 'Set io packet forwarding mode\n');
  });

  it('a missing file is one line at start-up, in the shell too', () => {
    const r = testpmd([...NULL_PORTS, '--', '--forward-mode=./nope.js', SMALL]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim(), `dpkit: --forward-mode=./nope.js: ${join(dir, 'nope.js')}: no such file`);
    const s = testpmd([...NULL_PORTS, '--', '-i', SMALL], 'set fwd ./nope.js\nshow config rxtx\nquit\n');
    assert.equal(s.code, 0, s.stderr);
    const out = s.stdout.split('testpmd> ');
    assert.equal(out[1], `set fwd ./nope.js: ${join(dir, 'nope.js')}: no such file\n`);
    assert.match(out[2]!, /^ {2}io packet forwarding/);
  });

  const bad: [string, string, RegExp][] = [
    ['no-export.mjs', 'export const notEngine = 1;\n', /no-export\.mjs: exports no engine \(write `export const engine/],
    ['throws-at-load.mjs', "throw new RangeError('no config');\n", /throws-at-load\.mjs: failed to load: RangeError: no config$/],
    ['not-a-function.mjs', 'export const engine = 42;\n', /not-a-function\.mjs: engine is a number, not a function or an object with a burst function$/],
    ['no-burst.mjs', 'export const engine = { setup() {} };\n', /no-burst\.mjs: engine\.burst is missing, not a function$/],
    ['setup-throws.mjs', "export const engine = { setup() { throw new Error('no table'); }, burst: (b, n) => n };\n", /setup-throws\.mjs: engine\.setup threw Error: no table$/],
    ['syntax.mjs', 'export const engine = (b, n) => { return n;\n', /syntax\.mjs: failed to load: SyntaxError/],
  ];
  for (const [name, source, message] of bad) {
    it(`a bad module (${name}) fails start with one line naming the file; nothing forwarded`, () => {
      const file = engine(name, source);
      const r = testpmd([...THREE_LCORES, ...NULL_PORTS, '--', `--forward-mode=./${name}`, '--nb-cores=2', '--rxq=2', '--txq=2', SMALL]);
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /^dpkit: lcore [12]: /);
      assert.ok(lines[0]!.includes(file), lines[0]);
      assert.match(lines[0]!, message);
    });
  }

  it('an engine that throws mid-run stops every lcore with one line naming the file and the lcore; the pool is full', () => {
    // Lcore 2 fails on its 51st burst (port 0 queue 1: its streams alternate); lcore 1 forwards until it is told to stop.
    engine('throws.mjs', `
let lcore = 0;
let bursts = 0;
export const engine = {
  setup(ctx) { lcore = ctx.lcoreId; },
  burst(b, n) { if (lcore === 2 && ++bursts === 51) throw new TypeError('bad header'); return n; },
};
`);
    const r = testpmd([...THREE_LCORES, ...NULL_PORTS, '--', '--forward-mode=./throws.mjs', '--nb-cores=2', '--rxq=2', '--txq=2', '--duration=600', SMALL]);
    assert.equal(r.code, 1, r.stderr);
    // One line, and no leak reported after it: close() found every mbuf back in the pool.
    assert.equal(r.stderr, `dpkit: lcore 2: ${join(dir, 'throws.mjs')}: engine threw TypeError: bad header (burst from port 0 queue 1)\n`);
  });

  it('an engine returning a count out of 0..n fails as a throw does', () => {
    engine('too-many.mjs', 'export const engine = (b, n) => n + 1;\n');
    const r = testpmd([...NULL_PORTS, '--', '--forward-mode=./too-many.mjs', '--duration=600', SMALL]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `dpkit: lcore 1: ${join(dir, 'too-many.mjs')}: engine returned 33, not a count in 0..32 (burst from port 0 queue 0)\n`);
  });

  it('in the shell a failing engine stops forwarding and the prompt comes back: forwarding starts again, pools full at quit', () => {
    engine('first-burst.mjs', "export const engine = () => { throw new Error('boom'); };\n");
    const r = testpmd([...NULL_PORTS, '--', '-i', SMALL], ['set fwd ./first-burst.mjs', 'start', 'stop', 'set fwd io', 'start', 'stop', 'quit'].join('\n') + '\n');
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = r.stdout.split('testpmd> ');
    assert.match(out[2]!, new RegExp(`\\nlcore 1: ${join(dir, 'first-burst.mjs').replace(/[.]/g, '\\.')}: engine threw Error: boom \\(burst from port [01] queue 0\\)\\n$`));
    assert.equal(out[3], 'Packet forwarding not started\n');
    assert.match(out[6]!, /Accumulated forward statistics for all ports/);
    assert.match(r.stdout, /Bye\.\.\.\n$/);
  });
});
