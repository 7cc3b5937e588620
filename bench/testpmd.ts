/**
 * `npm run bench -- testpmd`: dpkit's testpmd against DPDK's on two null
 * ports, burst 32: engines × packet sizes on one forwarding lcore, then io
 * and macswap at 64 and 1518 B on two forwarding lcores with two queues per
 * port. The two systems alternate cell by cell (their speed drifts ±30 % an
 * hour here). Mpps is what the ports report in testpmd's periodic
 * statistics: received packets per second summed over both ports
 * (transmitted, for txonly).
 *
 * Two forwarding lcores on this 2-core machine share a core with the main
 * lcore: both systems run `--lcores 0@0,1@1,2@0` (the main thread sleeps
 * while they forward), dpkit pinning with its native shim.
 */
import { dpdkTestpmd, testpmdCase, type System } from '../src/apps/bench/testpmd-run.js';
import { summarize } from '../src/apps/bench/stats.js';
import type { Benchmark } from '../src/apps/bench/types.js';
import Table from 'cli-table3';

const ENGINES = ['io', 'mac', 'macswap', 'rxonly', 'txonly'];
const SIZES = [64, 128, 256, 512, 1024, 1518];

export const benchmark: Benchmark = {
  name: 'testpmd',
  title: 'testpmd, 2 null ports, 1 fwd lcore, burst 32 (Mpps summed over ports)',
  // Each cell is a process: few repetitions of a few seconds each.
  defaults: { reps: 3, durationMs: 4000 },
  cases: (opts) => {
    const seconds = Math.max(1, Math.round(opts.durationMs / 1000));
    const systems: System[] = dpdkTestpmd() ? ['dpkit', 'dpdk'] : ['dpkit'];
    const sizes = opts.quick ? [64] : SIZES;
    const secs = opts.quick ? 2 : seconds;
    const one = ENGINES.flatMap((e) => sizes.flatMap((s) => systems.map((sys) => testpmdCase({ engine: e, size: s, cores: 1, system: sys, seconds: secs }))));
    const two = ['io', 'macswap'].flatMap((e) => (opts.quick ? [64] : [64, 1518]).flatMap((s) => systems.map((sys) => testpmdCase({ engine: e, size: s, cores: 2, system: sys, seconds: secs }))));
    // The TypeScript twins of the kernels, for the sizes issue 5 asks about: what wasm buys.
    const ts = ['io', 'macswap'].flatMap((e) =>
      (opts.quick ? [64] : [64, 128, 256]).map((s) => testpmdCase({ engine: e, size: s, cores: 1, system: 'dpkit', seconds: secs, extra: ['--datapath=ts'], label: 'dpkit-ts' })),
    );
    return [...one, ...two, ...ts];
  },
  summary: (results) => {
    const med = (engine: string, size: number, cores: number, variant: string) => {
      const r = results.find((x) => x.params['engine'] === engine && x.params['size'] === size && x.params['cores'] === cores && x.params['variant'] === variant);
      return r ? summarize(r.samples).median : NaN;
    };
    const f = (v: number, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
    const table = new Table({ head: ['engine', 'size', 'lcores', 'dpkit Mpps', 'DPDK Mpps', 'dpkit / DPDK', 'dpkit ts Mpps', 'ts / DPDK'], style: { head: [], border: [] } });
    const seen = new Set<string>();
    for (const r of results) {
      const [e, s, c] = [String(r.params['engine']), Number(r.params['size']), Number(r.params['cores'])];
      if (seen.has(`${e} ${s} ${c}`)) continue;
      seen.add(`${e} ${s} ${c}`);
      const a = med(e, s, c, 'dpkit');
      const b = med(e, s, c, 'dpdk');
      const t = med(e, s, c, 'dpkit-ts');
      table.push([e, String(s), String(c), f(a), f(b), f(a / b, 2), f(t), f(t / b, 2)]);
    }
    const scaling = new Table({ head: ['engine', 'size', 'dpkit 2c / 1c', 'DPDK 2c / 1c'], style: { head: [], border: [] } });
    for (const e of ['io', 'macswap']) {
      for (const s of [64, 1518]) {
        const a = med(e, s, 2, 'dpkit') / med(e, s, 1, 'dpkit');
        const b = med(e, s, 2, 'dpdk') / med(e, s, 1, 'dpdk');
        if (Number.isFinite(a)) scaling.push([e, String(s), f(a, 2), f(b, 2)]);
      }
    }
    return `dpkit against DPDK ${dpdkTestpmd() ? '(same run, alternating)' : '(dpdk-testpmd not installed: apt-get install dpdk-dev)'}\n${table.toString()}\nScaling from 1 to 2 forwarding lcores\n${scaling.toString()}`;
  },
};
