#!/usr/bin/env node
// Where a dpkit run spends its CPU: the command under `perf record` (a
// cpu-clock sample every 250 us of every thread, so it needs no hardware
// counters and works in a VM), node started with --perf-basic-prof so perf
// can name JavaScript and wasm code, and each wasm-function[N] renamed to
// the kernel it is. This is how pcap's drop path (a JS loop summing pktLen)
// and mbufFreeBulk's per-packet test chain were found; docs/architecture.md,
// "What V8 makes of a kernel".
//
//   node scripts/lcore-profile.js [--top N] -- DPKIT_ARGS...
//   e.g. node scripts/lcore-profile.js -- testpmd -l 0-1 --vdev net_null0 --vdev net_null1 -- --forward-mode=io --duration=5
//
// Prints the run's own output, then one line per symbol: share of all
// samples, where it lives (wasm, js, node, libc, kernel...) and its name.
// Needs perf (Debian: linux-perf) and kernel.perf_event_paranoid <= 2.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportedFunctions } from './wasm-exports.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const WASM = join(root, 'build/kernels/dpkit.wasm');

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
if (dash < 0 || dash === argv.length - 1) {
  console.error('usage: node scripts/lcore-profile.js [--top N] -- DPKIT_ARGS...   (after npm run build)');
  process.exit(2);
}
let top = 20;
const own = argv.slice(0, dash);
for (let i = 0; i < own.length; i++) {
  if (own[i] === '--top' && /^[1-9]\d*$/.test(own[i + 1] ?? '')) top = Number(own[++i]);
  else {
    console.error(`lcore-profile: unknown option ${own[i]} (expected --top N)`);
    process.exit(2);
  }
}
const dpkitArgs = argv.slice(dash + 1);

if (spawnSync('perf', ['--version'], { encoding: 'utf8' }).error) {
  console.error('lcore-profile: perf is not installed (Debian: apt-get install linux-perf)');
  process.exit(1);
}
let names;
try {
  names = exportedFunctions(readFileSync(WASM));
} catch {
  console.error(`lcore-profile: no ${WASM}: run npm run build first`);
  process.exit(1);
}
const byIndex = new Map([...names].map(([name, index]) => [index, name]));

const dir = mkdtempSync(join(tmpdir(), 'dpkit-profile-'));
const data = join(dir, 'perf.data');
const pids = [];
try {
  // Run in the scratch folder: V8's perf maps go to /tmp/perf-PID.map, anything else it writes stays here.
  const rec = spawnSync('perf', ['record', '-q', '-e', 'cpu-clock', '-F', '4000', '-o', data, '--', process.execPath, '--perf-basic-prof', join(root, 'bin/dpkit.js'), ...dpkitArgs], {
    cwd: dir,
    stdio: 'inherit',
  });
  if (!existsSync(data) || statSync(data).size === 0) {
    console.error(`lcore-profile: perf record failed (status ${rec.status}; kernel.perf_event_paranoid is ${readParanoid()}, at most 2 is needed)`);
    process.exit(1);
  }
  // perf returns the run's status: a failed run is said, and what it ran is still profiled.
  if (rec.status !== 0) console.error(`lcore-profile: the run exited with status ${rec.status}`);
  const rep = spawnSync('perf', ['report', '-i', data, '--stdio', '--no-children', '--sort', 'pid,dso,sym'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (rep.status !== 0) {
    console.error(`lcore-profile: perf report failed: ${rep.stderr.trim().split('\n')[0]}`);
    process.exit(1);
  }
  // One row a symbol: perf splits each by thread.
  const bySym = new Map();
  for (const line of rep.stdout.split('\n')) {
    // "    32.75%    31218:node     [JIT] tid 31206       [.] JS:wasm-function[1]-1-turbofan"
    const m = /^\s*([\d.]+)%\s+\d+:\S+\s+(.+?)\s+\[([.k])\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const jit = /^\[JIT\] tid (\d+)$/.exec(m[2]);
    if (jit) pids.push(jit[1]);
    const w = where(m[2], m[3], m[4]);
    const sym = symbol(m[4]);
    const key = `${w} ${sym}`;
    const row = bySym.get(key) ?? { share: 0, where: w, sym };
    row.share += Number(m[1]);
    bySym.set(key, row);
  }
  const rows = [...bySym.values()].sort((a, b) => b.share - a.share);
  console.log('\nshare   where   symbol');
  for (const r of rows.slice(0, top)) console.log(`${r.share.toFixed(2).padStart(6)}%  ${r.where.padEnd(6)}  ${r.sym}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
  for (const pid of new Set(pids)) rmSync(join(tmpdir(), `perf-${pid}.map`), { force: true });
}

/** The kernel's name for a wasm frame; JS frames without V8's tier marks. */
function symbol(sym) {
  const w = /^JS:wasm-function\[(\d+)\]/.exec(sym);
  if (w) return byIndex.get(Number(w[1])) ?? `wasm-function[${w[1]}]`;
  return sym.replace(/^JS:[*~^]?\s*/, '').replace(`file://${root}`, '');
}

/** A short name for where the code lives. */
function where(dso, kind, sym) {
  if (kind === 'k') return 'kernel';
  if (sym.startsWith('JS:wasm-function')) return 'wasm';
  if (sym.startsWith('JS:')) return 'js';
  const base = dso.split('/').pop() ?? dso;
  return base.replace(/\.so.*$/, '');
}

function readParanoid() {
  try {
    return readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}
