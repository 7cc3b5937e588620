#!/usr/bin/env node
// Builds the optional native shim (native/: what Node cannot do, such as mmap and affinity) with node-gyp.
// It never fails the install: without it, affinity and the drivers that need
// it report themselves unavailable with this script's reason, and everything
// else works. The reason is kept in build/native-status.txt.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const STATUS = 'build/native-status.txt';

/** node-gyp as npm ships it (npm sets npm_config_node_gyp in scripts), else npm's own copy. */
function nodeGyp() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npmDir = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  const candidate = join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(candidate)) return candidate;
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    return undefined;
  }
}

/** Node's own headers beside its binary (a system install has them), so no download is needed. */
function nodeDirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = join(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${prefix}`] : [];
}

mkdirSync('build', { recursive: true });
const gyp = nodeGyp();
let status;
if (!gyp) {
  status = 'not built: node-gyp not found (it ships with npm)';
} else {
  const r = spawnSync(process.execPath, [gyp, 'rebuild', '--directory=native', ...nodeDirArgs()], { encoding: 'utf8' });
  if (r.status === 0) status = 'built';
  else {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
    status = `not built: node-gyp rebuild exited with ${r.status ?? r.signal}\n${tail}`;
  }
}
writeFileSync(STATUS, status + '\n');
if (status !== 'built') console.warn(`dpkit: native shim ${status}\n(affinity and the drivers that need it are unavailable; everything else works)`);
