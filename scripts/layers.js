#!/usr/bin/env node
// Prints dpkit's layers: which top-level folder of src/ (and bench/) imports
// which, each folder on the lowest layer above everything it imports. Static
// imports and literal dynamic imports count; type-only imports too (they are
// still a dependency a reader follows). Exits 1 on a cycle between folders:
// then no layering exists, some arrow points up. docs/architecture.md quotes
// the output.
//
//   node scripts/layers.js          the layers, lowest first, each with what it imports
//   node scripts/layers.js --dot    the graph for graphviz
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.(ts|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** src/mem/mbuf.ts → mem; src/errors.ts (imported as errors.js) → errors.ts; bench/x.ts → bench */
function unit(path) {
  const parts = relative('.', path).split(sep);
  if (parts[0] !== 'src') return parts[0];
  return parts.length > 2 ? parts[1] : parts[1].replace(/\.js$/, '.ts');
}

const graph = new Map();
for (const f of [...files('src'), ...files('bench')]) {
  const from = unit(f);
  if (!graph.has(from)) graph.set(from, new Set());
  for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith('.')) continue;
    const to = unit(normalize(join(dirname(f), spec)));
    if (to !== from) graph.get(from).add(to);
  }
}
for (const deps of graph.values()) for (const d of deps) if (!graph.has(d)) graph.set(d, new Set());

// Layer of a folder: 0 when it imports nothing else, else one above the highest it imports.
const layer = new Map();
const visiting = new Set();
function layerOf(u, path) {
  if (layer.has(u)) return layer.get(u);
  if (visiting.has(u)) {
    console.error(`layers: cycle ${[...path.slice(path.indexOf(u)), u].join(' -> ')}: an arrow points up`);
    process.exit(1);
  }
  visiting.add(u);
  let l = 0;
  for (const d of graph.get(u)) l = Math.max(l, layerOf(d, [...path, u]) + 1);
  visiting.delete(u);
  layer.set(u, l);
  return l;
}
for (const u of graph.keys()) layerOf(u, []);

const byName = (a, b) => a.localeCompare(b);
if (process.argv.includes('--dot')) {
  console.log('digraph dpkit {\n  rankdir=BT;');
  for (const [u, deps] of [...graph].sort(([a], [b]) => byName(a, b))) for (const d of [...deps].sort(byName)) console.log(`  "${u}" -> "${d}";`);
  console.log('}');
} else {
  const top = Math.max(...layer.values());
  for (let l = 0; l <= top; l++) {
    const us = [...layer].filter(([, v]) => v === l).map(([u]) => u).sort(byName);
    for (const u of us) console.log(`${l}  ${u.padEnd(12)} ${[...graph.get(u)].sort(byName).join(' ') || '-'}`);
  }
}
