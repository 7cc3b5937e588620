/**
 * A memif pair as a benchmark cell: two testpmd processes, dpkit's or DPDK's,
 * joined by one net_memif port each. The server (the arm's `system`) runs the
 * cell's engine (rxonly, or io: its one port sends every packet back to the
 * client) and is measured; the client (the arm's `peer`) runs txonly into it. The server starts first and the client once the server
 * prints statistics, since DPDK's client does not retry a server whose port
 * is not up yet. Each process has its own CPU when there are two: the server
 * on CPU 1, the client on CPU 0, each with its main lcore beside its
 * forwarding lcores (one queue pair per forwarding lcore).
 */
import { availableParallelism } from 'node:os';
import type { Cell, MatrixConfig, Variant } from './matrix.js';
import { pairOutcome, runTestpmd, type System } from './testpmd-run.js';

/** Seconds the server waits for its client to start (a DPDK client needs 3 s or more on a loaded machine), added to its run. */
const CLIENT_LEAD = 8;
let pairs = 0;

/** EAL and app arguments of one side of the pair: `role` on `socket` (an abstract name), the cell's queues on `cpu`, `extra` devargs on its port. */
export function memifSideArgs(cell: Cell, role: 'server' | 'client', socket: string, cpu: number, extra?: string): { eal: string[]; app: string[] } {
  const placement = Array.from({ length: cell.lcores + 1 }, (_, i) => `${i}@${cpu}`);
  return {
    eal: ['--lcores', placement.join(','), '--vdev', `net_memif0,role=${role},socket=${socket}${extra ? `,${extra}` : ''}`],
    app: [
      `--forward-mode=${role === 'server' ? cell.engine : 'txonly'}`,
      `--burst=${cell.burst}`,
      `--txpkts=${cell.size}`,
      `--nb-cores=${cell.lcores}`,
      `--rxq=${cell.lcores}`,
      `--txq=${cell.lcores}`,
    ],
  };
}

/**
 * One measurement of the pair: the server's received Mpps over the measured
 * seconds. The client's rate is not used; when the server fails, the client's
 * failure is reported beside it (a server without a client fails for want of
 * traffic, a client stopped by a failed server fails after it).
 * @throws Error when the server fails.
 */
export async function measureMemifPair(cell: Cell, variant: Variant, config: MatrixConfig): Promise<number> {
  const socket = `/tmp/dpkit-bench-memif-${process.pid}-${pairs++}.sock`;
  const two = availableParallelism() > 1;
  const serverSide = memifSideArgs(cell, 'server', socket, two ? 1 : 0);
  const clientSide = memifSideArgs(cell, 'client', socket, 0, variant.peerDevargs);
  clientSide.app.push(...(variant.peerArgs ?? []));
  const peer: System = variant.peer ?? 'dpkit';
  let startClient: () => void = () => {};
  const serverUp = new Promise<void>((resolve) => (startClient = resolve));
  const server = runTestpmd({
    system: variant.system ?? 'dpkit',
    ...serverSide,
    seconds: config.seconds,
    warmup: config.warmup,
    countTx: false,
    checkout: variant.system === 'dpdk' ? undefined : variant.checkout,
    lead: CLIENT_LEAD,
    dpdk: variant.dpdk,
    onOutput: (text) => text.includes('Port statistics ====') && startClient(),
  });
  // A server that fails before its first statistics must not leave the client waiting.
  server.catch(() => startClient());
  await serverUp;
  // The client feeds the server until the server has its measured blocks, and then stops.
  const client = runTestpmd({
    system: peer,
    ...clientSide,
    seconds: config.seconds,
    warmup: config.warmup,
    countTx: true,
    checkout: peer === 'dpdk' ? undefined : variant.checkout,
    lead: 4,
    dpdk: variant.dpdk,
    stopWhen: server,
  });
  const [s, c] = await Promise.allSettled([server, client]);
  return pairOutcome({ role: 'server', result: s }, { role: 'client', result: c });
}
