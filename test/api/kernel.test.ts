/**
 * User kernels: buildKernel refuses what would break the shared heap (static
 * data) or does not compile, writing nothing; loadKernel refuses a file that
 * is not a kernel module for this heap, with one line naming the file.
 * (The example kernel, built and run, is in examples.test.ts.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ArgError, buildKernel, Heap, KernelError, loadKernel } from 'dpkit';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-kernel-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = (name: string) => join(dir, name);

const HEADER = [0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
const utf8 = (s: string) => [s.length, ...Buffer.from(s)];
/** An import section: env.memory, shared, 1 page up to 65536 (what a kernel imports). */
const MEMORY_IMPORT = ((body: number[]) => [2, body.length, ...body])([1, ...utf8('env'), ...utf8('memory'), 2, 3, 1, 0x80, 0x80, 0x04]);
/** An import section with a function import nothing gives (type 0 must exist: a type section first). */
const TYPES = [1, 4, 1, 0x60, 0, 0];
const FOREIGN_IMPORT = ((body: number[]) => [2, body.length, ...body])([1, ...utf8('env'), ...utf8('seed'), 0, 0]);
/** An empty data section (id 11): static data, even when empty. */
const DATA = [11, 1, 0];

function wasm(name: string, ...sections: number[][]): string {
  writeFileSync(path(name), Uint8Array.from([...HEADER, ...sections.flat()]));
  return path(name);
}

describe('loadKernel', () => {
  const heap = Heap.create({ size: 1 << 20 });
  const refused = (file: string, names: string[], re: RegExp) =>
    assert.throws(() => loadKernel(heap, file, names), (e: unknown) => e instanceof KernelError && e.message.includes(file) && re.test(e.message));

  it('refuses a missing file, a file that is not wasm, and a module without the heap memory, naming the file', () => {
    refused(path('missing.wasm'), [], /cannot read it \(ENOENT\)/);
    writeFileSync(path('text.wasm'), 'not wasm');
    refused(path('text.wasm'), [], /not a wasm module/);
    refused(wasm('nomem.wasm'), [], /does not import the heap's memory \(env\.memory\)/);
  });

  it("refuses static data, imports dpkit does not give and a missing export", () => {
    refused(wasm('data.wasm', MEMORY_IMPORT, DATA), [], /static data/);
    refused(wasm('foreign.wasm', TYPES, FOREIGN_IMPORT), [], /imports env\.seed \(function\)/);
    refused(wasm('bare.wasm', MEMORY_IMPORT), ['ttlDec'], /no exported function ttlDec/);
    // The same module without names asked: it loads.
    assert.deepEqual(loadKernel(heap, path('bare.wasm'), []), {});
  });
});

describe('buildKernel', () => {
  it('refuses a kernel with static data and one that does not compile, naming it and writing nothing', { timeout: 180_000 }, async () => {
    writeFileSync(path('strings.as.ts'), `const GREETING = 'hello';\nexport function len(): u32 { return <u32>GREETING.length + <u32>changetype<usize>(GREETING); }\n`);
    await assert.rejects(buildKernel(path('strings.as.ts'), path('strings.wasm')), (e: unknown) => e instanceof KernelError && /strings\.as\.ts: the module has static data/.test(e.message));
    assert.ok(!existsSync(path('strings.wasm')), 'nothing written');
    let log = '';
    writeFileSync(path('broken.as.ts'), `export function f(x: u32): u32 { return x + undefinedName; }\n`);
    await assert.rejects(buildKernel(path('broken.as.ts'), path('broken.wasm'), { log: (s) => (log += s) }), (e: unknown) => e instanceof KernelError && /broken\.as\.ts: does not compile/.test(e.message));
    assert.match(log, /undefinedName/, 'the compiler said why');
    assert.ok(!existsSync(path('broken.wasm')));
    await assert.rejects(buildKernel(path('kernel.js'), path('k.wasm')), (e: unknown) => e instanceof ArgError && /kernel\.js: an AssemblyScript kernel is a \.ts file/.test(e.message));
  });
});
