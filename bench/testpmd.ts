/**
 * `npm run bench -- testpmd`: dpkit's testpmd against DPDK's on two null
 * ports, one forwarding lcore, burst 32: engines × packet sizes, the two
 * systems alternating cell by cell (their speed drifts ±30 % an hour here).
 * Mpps is what the ports report in testpmd's periodic statistics: received
 * packets per second summed over both ports (transmitted, for txonly).
 */
import { dpdkTestpmd, runTestpmd, type System } from '../src/apps/bench/testpmd-run.js';
import { summarize } from '../src/apps/bench/stats.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import Table from 'cli-table3';

const ENGINES = ['io', 'mac', 'macswap', 'rxonly', 'txonly'];
const SIZES = [64, 128, 256, 512, 1024, 1518];

function cell(engine: string, size: number, system: System, seconds: number): BenchCase {
  return {
    name: `${engine} ${size} B ${system}`,
    params: { engine, size, system },
    measure: async () => ({
      mpps: await runTestpmd({
        system,
        eal: ['-l', '0-1', '--vdev', `net_null0,size=${size}`, '--vdev', `net_null1,size=${size}`],
        app: [`--forward-mode=${engine}`, '--burst=32', `--txpkts=${size}`, '--nb-cores=1', '--rxq=1', '--txq=1'],
        seconds,
        countTx: engine === 'txonly',
      }),
      gc: 0,
    }),
  };
}

export const benchmark: Benchmark = {
  name: 'testpmd',
  title: 'testpmd, 2 null ports, 1 fwd lcore, burst 32 (Mpps summed over ports)',
  // Each cell is a process: few repetitions of a few seconds each.
  defaults: { reps: 3, durationMs: 4000 },
  cases: (opts) => {
    const seconds = Math.max(1, Math.round(opts.durationMs / 1000));
    const systems: System[] = dpdkTestpmd() ? ['dpkit', 'dpdk'] : ['dpkit'];
    const sizes = opts.quick ? [64] : SIZES;
    return ENGINES.flatMap((e) => sizes.flatMap((s) => systems.map((sys) => cell(e, s, sys, opts.quick ? 2 : seconds))));
  },
  summary: (results) => {
    const table = new Table({ head: ['engine', 'size', 'dpkit Mpps', 'DPDK Mpps', 'dpkit / DPDK'], style: { head: [], border: [] } });
    const med = (engine: string, size: number, system: string) => {
      const r = results.find((x) => x.params['engine'] === engine && x.params['size'] === size && x.params['system'] === system);
      return r ? summarize(r.samples).median : NaN;
    };
    const seen = new Set<string>();
    for (const r of results) {
      const key = `${r.params['engine']} ${r.params['size']}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const a = med(String(r.params['engine']), Number(r.params['size']), 'dpkit');
      const b = med(String(r.params['engine']), Number(r.params['size']), 'dpdk');
      table.push([String(r.params['engine']), String(r.params['size']), a.toFixed(1), Number.isFinite(b) ? b.toFixed(1) : '-', Number.isFinite(b) ? (a / b).toFixed(2) : '-']);
    }
    return `dpkit against DPDK ${dpdkTestpmd() ? '(same run, alternating)' : '(dpdk-testpmd not installed: apt-get install dpdk-dev)'}\n${table.toString()}`;
  },
};
