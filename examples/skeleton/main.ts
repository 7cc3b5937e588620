/**
 * skeleton: DPDK's basicfwd. Every packet received on port 0 goes out of
 * port 1 and the other way round (ports 2 <-> 3 and so on), on one lcore.
 *
 *   node examples/skeleton/main.js -l 0-1 --vdev net_null0 --vdev net_null1 -- --count 100000
 *
 * `--count N` (dpkit's): stop once N packets have been received. Without it,
 * forward until Ctrl-C.
 */
import { pathToFileURL } from 'node:url';
import { init, type Eal } from 'dpkit';
import type { SkeletonArgs, SkeletonCounts } from './lcore.js';

const RX_RING_SIZE = 1024;
const TX_RING_SIZE = 1024;
const NUM_MBUFS = 8191;

/** What a run forwarded, and whether every mbuf came back. */
export interface SkeletonReport extends SkeletonCounts {
  poolFull: boolean;
}

/** basicfwd's port_init: one rx and one tx queue, started, promiscuous. */
function portInit(eal: Eal, port: number): void {
  const { ethdev } = eal;
  ethdev.configure(port, 1, 1);
  ethdev.rxQueueSetup(port, 0, RX_RING_SIZE, eal.pool);
  ethdev.txQueueSetup(port, 0, TX_RING_SIZE);
  ethdev.start(port);
  ethdev.promiscuousEnable(port);
  const mac = [...ethdev.macAddr(port)].map((b) => b.toString(16).padStart(2, '0')).join(':');
  console.log(`Port ${port} MAC: ${mac}`);
}

/** Runs basicfwd with DPDK's command line. @throws ArgError for a bad command line, LaunchError when the lcore fails. */
export async function skeleton(argv: readonly string[]): Promise<SkeletonReport> {
  const eal = init(argv, { mbufs: NUM_MBUFS });
  const at = eal.args.indexOf('--count');
  const count = at >= 0 ? Number(eal.args[at + 1]) : Infinity;
  const ports = eal.ethdev.portIds();
  if (ports.length < 2 || ports.length % 2 !== 0) throw new Error('Error: number of ports must be even');
  for (const p of ports) portInit(eal, p);
  console.log(`\nCore ${eal.workerLcores()[0]} forwarding packets. [Ctrl+C to quit]`);
  const run = await eal.launch<SkeletonCounts, SkeletonArgs>(new URL('./lcore.js', import.meta.url), { lcores: eal.workerLcores().slice(0, 1), args: { ports, count } });
  const stop = () => void run.stop().catch(() => {});
  process.once('SIGINT', stop);
  try {
    const [only] = await run.wait();
    await eal.close();
    return { ...only!.value, poolFull: eal.pool.full() };
  } finally {
    process.off('SIGINT', stop);
    await eal.close().catch(() => {});
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await skeleton(process.argv.slice(2));
  console.log(`rx ${r.rx}  tx ${r.tx}  dropped ${r.dropped}  pool ${r.poolFull ? 'full' : 'NOT full'}`);
}
