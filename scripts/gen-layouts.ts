#!/usr/bin/env node
// Writes the layout constants of every shared-memory record from its one
// declaration (src/**/<owner>.record.ts, see src/eal/record.ts) into
// <owner>-layout.ts (TypeScript) and <owner>-layout.as.ts (AssemblyScript),
// beside the declaration, and for a record marked `native` the native shim's
// native/src/<owner>-layout.h (C++ constexprs). Run by scripts/build-kernels.js
// before the kernels compile (`node --import tsx scripts/gen-layouts.ts`); a file is rewritten
// only when its text changes, so the kernel build's mtime check still skips.
// test/eal/layout.test.ts renders in memory and fails on a stale file.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIELD_BYTES, type FieldDecl, type RecordDecl } from '../src/eal/record.js';

/** dataOffRefcnt → DATA_OFF_REFCNT */
export function upperSnake(camel: string): string {
  return camel.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function findRecords(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findRecords(p));
    else if (name.endsWith('.record.ts')) out.push(p);
  }
  return out;
}

/** One constant: its name, value, comment, and whether AssemblyScript gets it too. */
interface Const {
  name: string;
  value: number;
  doc: string;
  as: boolean;
}

function fail(file: string, msg: string): never {
  throw new Error(`gen-layouts: ${file}: ${msg}`);
}

function check(file: string, r: RecordDecl): void {
  const where = `record ${r.name}`;
  const spans: [number, number, string][] = [];
  for (const [name, f] of Object.entries(r.fields)) {
    const w = FIELD_BYTES[f.type];
    const count = f.count ?? 1;
    if (!Number.isInteger(f.at) || f.at % w !== 0) fail(file, `${where}: ${name} at ${f.at} is not aligned to its ${w}-byte ${f.type}`);
    if (f.count === 0) {
      if (f.at !== r.size) fail(file, `${where}: flexible array ${name} must start at the record's end (${r.size}), not ${f.at}`);
      continue;
    }
    if (f.at + w * count > r.size) fail(file, `${where}: ${name} (${f.at}..${f.at + w * count}) passes the record's ${r.size} bytes`);
    if (!f.view) spans.push([f.at, f.at + w * count, name]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) fail(file, `${where}: ${spans[i]![2]} overlaps ${spans[i - 1]![2]} (mark a wider view \`view: true\`)`);
  }
  if (r.handles && (r.size & (r.size - 1)) !== 0) fail(file, `${where}: records addressed by handle need a power-of-two size, not ${r.size}`);
}

function fieldDoc(f: FieldDecl): string {
  const arr = f.count === undefined ? '' : f.count === 0 ? '[]' : `[${f.count}]`;
  return `${f.doc} (${f.type}${arr} at byte ${f.at})`;
}

function constsOf(file: string, r: RecordDecl): Const[] {
  check(file, r);
  const NAME = upperSnake(r.name);
  const out: Const[] = [{ name: r.sizeName ?? `${NAME}_SIZE`, value: r.size, doc: `Bytes per ${r.name} record${Object.values(r.fields).some((f) => f.count === 0) ? ' before its flexible array' : ''}.`, as: true }];
  if (r.handles) {
    const shift = Math.log2(r.size);
    out.push({ name: `${NAME}_SHIFT`, value: shift, doc: `Record \`h\` starts at byte \`h << ${NAME}_SHIFT\`.`, as: true });
    for (const [s, bytes] of [['HALF_SHIFT', 2], ['WORD_SHIFT', 4], ['SLOT_SHIFT', 8]] as const) {
      out.push({ name: `${NAME}_${s}`, value: shift - Math.log2(bytes), doc: `Record \`h\`'s first ${bytes}-byte slot: \`h << ${NAME}_${s}\`.`, as: true });
    }
  }
  for (const [name, f] of Object.entries(r.fields)) {
    const F = upperSnake(name);
    out.push({ name: `${r.prefix}_${F}`, value: f.at, doc: fieldDoc(f), as: true });
    const idx = r.index?.[f.type];
    if (idx) out.push({ name: `${idx}_${F}`, value: f.at / FIELD_BYTES[f.type], doc: `${r.prefix}_${F} as a ${f.type} index.`, as: false });
    if (f.count !== undefined && f.count > 0) out.push({ name: `${r.prefix}_${F}_COUNT`, value: f.count, doc: `Elements of ${r.prefix}_${F}.`, as: true });
  }
  for (const [name, c] of Object.entries(r.consts ?? {})) out.push({ name, value: c.value, doc: c.doc, as: true });
  return out;
}

function comment(doc: string, indent = ''): string {
  const lines = doc.trim().split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

function num(v: number, hex: boolean): string {
  return hex ? `0x${(v >>> 0).toString(16)}` : String(v);
}

/** FNV-1a over the constants' names and values: what the kernels were compiled with. */
function layoutId(consts: readonly Const[]): number {
  let h = 0x811c9dc5;
  for (const c of consts) {
    for (const ch of `${c.name}=${c.value};`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  }
  return h;
}

/** The generated TypeScript and AssemblyScript text for one declaration file, and the C++ header when a record is `native`. */
export function render(file: string, records: readonly RecordDecl[]): { ts: string; as: string; h?: string } {
  const base = basename(file);
  const stem = base.replace(/\.record\.ts$/, '');
  const head = `// Generated by scripts/gen-layouts.ts from ${base}: do not edit.\n// Change the declaration and run \`npm run build\` (test/eal/layout.test.ts checks this file is current).\n`;
  let ts = head;
  let as = head;
  let h = '';
  const all: Const[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    const consts = constsOf(file, r);
    ts += `\n${comment(r.doc)}`;
    as += `\n// ---- ${r.name}: see ${stem}-layout.ts for why the record is what it is.\n`;
    for (const c of consts) {
      if (seen.has(c.name)) fail(file, `${c.name} is declared twice`);
      seen.add(c.name);
      const hex = c.value > 0xffff;
      ts += `${comment(c.doc)}export const ${c.name} = ${num(c.value, hex)};\n`;
      if (c.as) as += `export const ${c.name}: u32 = ${num(c.value, hex)};\n`;
      if (c.as && r.native) h += `constexpr uint32_t ${c.name} = ${num(c.value, hex)};\n`;
    }
    for (const [group, g] of Object.entries(r.flags ?? {})) {
      ts += `\n${comment(g.doc)}export const ${group} = {\n`;
      for (const [k, v] of Object.entries(g.values)) {
        const bit = (v & (v - 1)) === 0 ? ` // bit ${Math.log2(v >>> 0)}` : '';
        const doc = g.docs?.[k] ?? (g.dpdk ? `DPDK's ${g.dpdk}${k}.` : '');
        if (doc) ts += `  /** ${doc} */\n`;
        ts += `  ${k}: ${num(v, true)},${bit}\n`;
        const name = `${g.as}_${k}`;
        if (seen.has(name)) fail(file, `${name} is declared twice`);
        seen.add(name);
        as += `export const ${name}: u32 = ${num(v, true)};\n`;
        if (r.native) h += `constexpr uint32_t ${name} = ${num(v, true)};\n`;
        all.push({ name, value: v, doc: '', as: true });
      }
      ts += `} as const;\n`;
    }
    all.push(...consts);
  }
  const idName = `${upperSnake(stem.replace(/-(.)/g, (_, c: string) => c.toUpperCase()))}_LAYOUT_ID`;
  const id = num(layoutId(all), true);
  ts += `\n/** Hash of this file's constants; the kernels export theirs as \`layout…\` (test/eal/layout.test.ts compares). */\nexport const ${idName} = ${id};\n`;
  as += `\nexport const ${idName}: u32 = ${id};\n`;
  if (!h) return { ts, as };
  h = `${head}// Why the record is what it is: ${stem}-layout.ts, beside the declaration.\n#pragma once\n#include <cstdint>\n\nnamespace dpkit::layout {\n${h}}  // namespace dpkit::layout\n`;
  return { ts, as, h };
}

/** Every generated file, by path, rendered from the declarations under `root`/src. */
export async function renderLayouts(root = process.cwd()): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const file of findRecords(join(root, 'src'))) {
    const mod = (await import(pathToFileURL(file).href)) as { default?: readonly RecordDecl[] };
    if (!Array.isArray(mod.default) || mod.default.length === 0) fail(file, 'export default defineRecords(...) with at least one record');
    const { ts, as, h } = render(file, mod.default);
    const base = file.replace(/\.record\.ts$/, '');
    out.set(`${base}-layout.ts`, ts);
    out.set(`${base}-layout.as.ts`, as);
    if (h !== undefined) {
      const header = join(root, 'native', 'src', `${basename(base)}-layout.h`);
      if (out.has(header)) fail(file, `${relative(root, header)} is generated from two declarations`);
      out.set(header, h);
    }
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [path, text] of await renderLayouts()) {
    let old = '';
    try {
      old = readFileSync(path, 'utf8');
    } catch {
      // a new record
    }
    if (old === text) continue;
    writeFileSync(path, text);
    console.log(`gen-layouts: ${relative(process.cwd(), path)}`);
  }
}
