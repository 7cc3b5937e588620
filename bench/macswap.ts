/**
 * `npm run bench -- macswap`: the study of seeds 000/001 on dpkit. The
 * seeds made DPDK's SSE macswap faster by (1) keeping mask and addresses in
 * registers, (2) setting the mbuf offload fields early, on their own cache
 * line, and (3) interleaving loads, shuffles and stores over 4 packets.
 * dpkit's variants: scalar (the TypeScript twin), simd, simd-ofl (2) and
 * simd-interleave (2 + 3); (1) is what a wasm compiler does anyway.
 *
 * Printed in the seeds' shape: TEST IO 64B baseline, then per size
 * `<variant : Before : After>` against scalar and against the previous
 * variant, for 1Q 1C and 2Q 2C, with DPDK's macswap beside them. Each figure
 * is the median of ≥ 5 repetitions alternating over all cells; a difference
 * is called beyond noise only when the two min–max ranges do not overlap, and
 * the ratio's bootstrap 95 % interval gives the verdict (faster / slower /
 * no significant difference).
 */
import { dpdkTestpmd, testpmdCase, type System } from '../src/apps/bench/testpmd-run.js';
import { bootstrapRatio, summarize, verdict } from '../src/apps/bench/stats.js';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';

const VARIANTS = ['scalar', 'simd', 'simd-ofl', 'simd-interleave'] as const;

interface Row {
  name: string;
  params: Record<string, string | number>;
  samples: number[];
}

export const benchmark: Benchmark = {
  name: 'macswap',
  title: 'macswap study (seeds 000/001): 2 null ports, burst 32, Mpps summed over ports',
  defaults: { reps: 5, durationMs: 3000 },
  cases: (opts) => {
    const seconds = opts.quick ? 1 : Math.max(1, Math.round(opts.durationMs / 1000));
    const sizes = opts.quick ? [64] : [64, 128, 256];
    const cores: (1 | 2)[] = opts.quick ? [1] : [1, 2];
    const out: BenchCase[] = [testpmdCase({ engine: 'io', size: 64, cores: 1, system: 'dpkit', seconds })];
    for (const c of cores) {
      for (const size of sizes) {
        for (const v of VARIANTS) out.push(testpmdCase({ engine: 'macswap', size, cores: c, system: 'dpkit', seconds, extra: [`--macswap-kernel=${v}`], label: v }));
        if (dpdkTestpmd()) out.push(testpmdCase({ engine: 'macswap', size, cores: c, system: 'dpdk' as System, seconds }));
      }
    }
    return out;
  },
  summary: (results) => seedTables(results),
};

/** The seeds' layout: one block per test, `<variant : Before : After>` lines with the change and the noise call. */
export function seedTables(results: Row[]): string {
  const find = (engine: string, size: number, cores: number, variant: string) =>
    results.find((r) => r.params['engine'] === engine && r.params['size'] === size && r.params['cores'] === cores && r.params['variant'] === variant);
  const med = (r: Row | undefined) => (r ? summarize(r.samples).median : NaN);
  const line = '------------------------------------------------';
  const out: string[] = [line];
  const io = find('io', 64, 1, 'dpkit');
  out.push('TEST IO 64B: baseline <system : Mpps>', ` - dpkit 1Q 1C : ${fmt(med(io))}`, line);
  const sizes = [...new Set(results.filter((r) => r.params['engine'] === 'macswap').map((r) => Number(r.params['size'])))];
  for (const cores of [1, 2]) {
    for (const size of sizes) {
      const rows = VARIANTS.map((v) => find('macswap', size, cores, v));
      if (rows.every((r) => !r)) continue;
      out.push(`TEST MACSWAP ${size}B ${cores}Q ${cores}C: <variant : Before : After>`);
      const scalar = rows[0];
      for (let i = 1; i < VARIANTS.length; i++) {
        out.push(` - ${VARIANTS[i]} vs scalar : ${compare(scalar, rows[i])}`);
        if (i > 1) out.push(` - ${VARIANTS[i]} vs ${VARIANTS[i - 1]} : ${compare(rows[i - 1], rows[i])}`);
      }
      const dpdk = find('macswap', size, cores, 'dpdk');
      if (dpdk) out.push(` - DPDK macswap : ${fmt(med(dpdk))} (best dpkit variant / DPDK: ${(Math.max(...rows.map(med)) / med(dpdk)).toFixed(2)})`);
      out.push(line);
    }
  }
  return out.join('\n');
}

function fmt(v: number): string {
  return Number.isFinite(v) ? v.toFixed(2) : '-';
}

/** "before : after (+x.x %, beyond noise | within noise)": noise = the min–max ranges overlap. */
function compare(before: Row | undefined, after: Row | undefined): string {
  if (!before || !after) return '-';
  const a = summarize(before.samples);
  const b = summarize(after.samples);
  const pct = ((b.median - a.median) / a.median) * 100;
  const beyond = b.min > a.max || b.max < a.min;
  const ci = bootstrapRatio(before.samples, after.samples);
  return `${fmt(a.median)} : ${fmt(b.median)} (${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %, ${beyond ? 'beyond noise' : 'within noise'}; 95 % CI ${ci.lo.toFixed(3)}..${ci.hi.toFixed(3)}: ${verdict(ci)})`;
}
