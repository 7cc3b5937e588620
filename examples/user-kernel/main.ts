/**
 * user-kernel: a forwarding program whose per-burst work is the user's own
 * AssemblyScript kernel (ttl.as.ts: IPv4 TTL - 1, checksum fixed), built
 * by `dpkit build-kernel` and loaded on the lcore with loadKernel().
 *
 *   dpkit build-kernel examples/user-kernel/ttl.as.ts -o build/user-kernel/ttl.wasm
 *   node dist/examples/user-kernel/main.js -l 0-1 --vdev net_null0 --vdev net_null1 -- --wasm build/user-kernel/ttl.wasm
 *
 * After `--`: `--wasm FILE` (the built kernel, required), `--count N` (stop
 * once N packets have been received; without it, forward until Ctrl-C).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ArgError, init } from 'dpkit';
import type { UserKernelArgs, UserKernelCounts } from './lcore.js';

const RING_SIZE = 1024;
const NUM_MBUFS = 8191;

/** What a run forwarded and changed, and whether every mbuf came back. */
export interface UserKernelReport extends UserKernelCounts {
  poolFull: boolean;
}

/** Runs the example with DPDK's command line. @throws ArgError for a bad command line, LaunchError when the lcore fails (a kernel that does not load). */
export async function userKernel(argv: readonly string[]): Promise<UserKernelReport> {
  const eal = init(argv, { mbufs: NUM_MBUFS });
  try {
    const { values: v } = parseArgs({ args: [...eal.args], strict: true, options: { wasm: { type: 'string' }, count: { type: 'string' } } });
    if (v.wasm === undefined) throw new ArgError('user-kernel: give the built kernel with --wasm FILE (dpkit build-kernel examples/user-kernel/ttl.as.ts -o FILE)');
    const count = v.count === undefined ? Infinity : Number(v.count);
    if (!(count > 0)) throw new ArgError(`user-kernel: invalid --count ${v.count}`);
    const ports = eal.ethdev.portIds();
    if (ports.length < 2 || ports.length % 2 !== 0) throw new ArgError('user-kernel: number of ports must be even');
    for (const p of ports) {
      eal.ethdev.configure(p, 1, 1);
      eal.ethdev.rxQueueSetup(p, 0, RING_SIZE, eal.pool);
      eal.ethdev.txQueueSetup(p, 0, RING_SIZE);
      eal.ethdev.start(p);
    }
    const args: UserKernelArgs = { ports, count, wasm: resolve(v.wasm) };
    const run = await eal.launch<UserKernelCounts, UserKernelArgs>(new URL('./lcore.js', import.meta.url), { lcores: eal.workerLcores().slice(0, 1), args });
    const stop = () => void run.stop().catch(() => {});
    process.once('SIGINT', stop);
    try {
      const [only] = await run.wait();
      await eal.close();
      return { ...only!.value, poolFull: eal.pool.full() };
    } finally {
      process.off('SIGINT', stop);
    }
  } finally {
    await eal.close().catch(() => {});
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await userKernel(process.argv.slice(2));
  console.log(`rx ${r.rx}  tx ${r.tx}  dropped ${r.dropped}  ttl decremented ${r.ttlDecremented}  pool ${r.poolFull ? 'full' : 'NOT full'}`);
}
