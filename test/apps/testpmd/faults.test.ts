// Faults in lcores: a forwarding lcore that throws, exits or is killed mid-traffic stops the
// run with one error naming the lcore and the cause; the other lcore leaves its loop cleanly;
// every mbuf the dead worker held (its cache, the burst in its hands) is back in the pool at
// close, and no file descriptor is left open. Ring ports with tx_first keep mbufs moving
// through both lcores' hands the whole time, so a dead worker always holds some.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseTestpmdArgs } from '../../../src/apps/testpmd/options.js';
import { Testpmd } from '../../../src/apps/testpmd/testpmd.js';
import { ArgError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');

/** An io engine that does `fault` on lcore `lcore` at its 200th burst. */
function faultyEngine(fault: 'throw' | 'exit', lcore: number): string {
  const file = join(dir, `${fault}-${lcore}.mjs`);
  const act = fault === 'throw' ? "throw new RangeError('injected')" : 'process.exit(3)';
  writeFileSync(file, `let lcore = 0;\nlet bursts = 0;\nexport const engine = {\n  setup(ctx) { lcore = ctx.lcoreId; },\n  burst(b, n) { if (lcore === ${lcore} && ++bursts === 200) ${act}; return n; },\n};\n`);
  return file;
}

/**
 * Open fds, as `fd target`, other than pipes, event fds and /dev/null: tsx's compiler and libuv open
 * and close those on their own schedule (a /dev/null one comes and goes as a new engine module loads).
 */
function openFds(): string[] {
  const target = (fd: string) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return 'pipe:'; // the directory's own fd, gone by now
    }
  };
  return readdirSync('/proc/self/fd')
    .map((fd) => `${fd} ${target(fd)}`)
    .filter((t) => !/^\d+ (pipe:|anon_inode:|\/dev\/null$)/.test(t));
}

/** A 2-lcore testpmd over two ring ports, 2 queues each: lcore 1 forwards queue 0, lcore 2 queue 1. */
function twoLcores(mode = 'io'): { pmd: Testpmd; lines: string[] } {
  const lines: string[] = [];
  const argv = ['-l', '0-2', '--vdev', 'net_ring0', '--vdev', 'net_ring1', '--', '--nb-cores=2', '--rxq=2', '--txq=2', '--total-num-mbufs=4096', `--forward-mode=${mode}`];
  return { pmd: new Testpmd(parseTestpmdArgs(argv, [0, 1, 2]), (l) => lines.push(l)), lines };
}

/** Resolves with the failure testpmd reports once every lcore has exited. */
function failure(pmd: Testpmd): Promise<Error> {
  return new Promise((resolve) => (pmd.onLcoreFailure = resolve));
}

/** After the failure: forwarding is off, close() takes back what the dead lcore held and finds the pool full. */
function closeAfter(pmd: Testpmd, lines: string[], lcore: number): void {
  assert.equal(pmd.forwarding, false);
  assert.ok(pmd.pool.inUse() > 0, 'ports and the dead lcore still hold mbufs');
  pmd.close(); // throws LeakError if anything is missing
  assert.equal(pmd.pool.inUse(), 0);
  const reclaimed = lines.find((l) => l.includes('held by failed lcore'));
  assert.match(reclaimed ?? '', new RegExp(`^testpmd: \\d+ mbufs held by failed lcore ${lcore} returned to mb_pool_0$`), 'only the dead lcore is named: the other stopped cleanly');
}

describe('a forwarding lcore that fails mid-traffic', () => {
  // A first run opens what node keeps open for worker threads, so the counts below compare like with like.
  // (An engine module's first load under tsx opens its compiler's pipes, kept for the process.)
  it('warm-up: a clean run, built-in and module engines, leaves the pool full', async () => {
    for (const mode of ['io', faultyEngine('throw', 9)]) {
      const { pmd } = twoLcores(mode);
      await pmd.start(1);
      await pmd.stop();
      pmd.close();
    }
  });

  for (const lcore of [1, 2]) {
    it(`killed (worker.terminate()) on lcore ${lcore}: one error naming it, the other stops, the pool is full, no fd left open`, async () => {
      const fds = openFds();
      const { pmd, lines } = twoLcores();
      const failed = failure(pmd);
      await pmd.start(4);
      await pmd.killLcore(lcore);
      const e = await failed;
      assert.equal(e.message, `lcore ${lcore}: killed (its worker was terminated)`);
      closeAfter(pmd, lines, lcore);
      assert.deepEqual(openFds(), fds);
    });

    for (const fault of ['throw', 'exit'] as const) {
      it(`${fault === 'throw' ? 'an engine that throws' : 'a worker that exits'} on lcore ${lcore}: one error naming it and the cause, the pool is full`, async () => {
        const fds = openFds();
        const { pmd, lines } = twoLcores(faultyEngine(fault, lcore));
        const failed = failure(pmd);
        // The fault may come before start() has seen every lcore poll: then start() rejects with it.
        const e = await pmd.start(4).then(() => failed, (err: Error) => err);
        assert.match(e.message, fault === 'throw' ? new RegExp(`^lcore ${lcore}: .*engine threw RangeError: injected`) : new RegExp(`^lcore ${lcore}: worker exited with code 3 before finishing$`));
        closeAfter(pmd, lines, lcore);
        assert.deepEqual(openFds(), fds);
      });
    }
  }

  it('killLcore refuses when nothing forwards and names an lcore that does not', async () => {
    const { pmd } = twoLcores();
    await assert.rejects(pmd.killLcore(1), (e: unknown) => e instanceof ArgError && e.message === 'Packet forwarding not started');
    await pmd.start();
    await assert.rejects(pmd.killLcore(7), (e: unknown) => e instanceof ArgError && /^lcore 7: no worker runs on it \(lcores 1,2\)$/.test(e.message));
    await pmd.stop();
    pmd.close();
  });
});
