/**
 * A report as text: blocks shaped as DPDK's macswap patches reported (`TEST MACSWAP 64B 1Q 1C: <variant :
 * Before : After>`) with the verdict of each comparison, then one table row
 * per cell. Also the text of `--compare`.
 */
import { compareByMode, modesText, probeSummary, rateModes } from './modes.js';
import Table from 'cli-table3';
import { ceilingShare, CEILING_ROW, type BenchReport, type Comparison, type ReportComparison } from './report.js';

const LINE = '------------------------------------------------';

export function mpps(v: number): string {
  return Number.isFinite(v) ? v.toFixed(2) : '-';
}

export function pct(ratio: number): string {
  const p = (ratio - 1) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)} %`;
}

/** "+4.2 %, 95 % CI 1.01..1.07: faster" */
export function ciText(c: Pick<Comparison, 'ratio' | 'lo' | 'hi' | 'level' | 'verdict'>): string {
  return `${pct(c.ratio)}, ${Math.round(c.level * 100)} % CI ${c.lo.toFixed(3)}..${c.hi.toFixed(3)}: ${c.verdict}`;
}

export function renderText(r: BenchReport): string {
  const out: string[] = [];
  out.push(`${r.title}`);
  out.push(`${r.machine.cpu}, ${r.machine.cores} cores, node ${r.machine.node}, DPDK ${r.machine.dpdk ?? 'not installed'}; ${r.config.pairs} pairs x ${r.config.seconds} s (+${r.config.warmup} s warm-up) per arm and cell`);
  for (const b of r.machine.dpdkBuilds ?? []) out.push(`${b.name}: DPDK ${b.version}, ${b.flags} (${b.path})`);
  if (r.machine.dpdkMemory) out.push(`DPDK's memory: ${r.machine.dpdkMemory}`);
  const probes = r.cells.flatMap((c) => c.arms.flatMap((a) => a.probes ?? []));
  const summary = probeSummary(probes);
  if (summary) out.push(`CPU probe before each run (CPUs ${probes[0]!.cpus.join(' <-> ')}): cache-line ${summary}; "~" lines split a bimodal arm's runs and give each mode's probe medians`);
  if (r.ceiling) out.push(`ceiling, one lcore, no engine (bench ceiling): ${r.ceiling.map((c) => `${c.name} ${mpps(c.mpps)}`).join(', ')} Mpps; "of ceiling" is an arm's median over ${CEILING_ROW} x lcores`);
  out.push(LINE);
  for (const c of r.cells) {
    const head = `TEST ${c.engine.toUpperCase()} ${c.size}B ${c.lcores}Q ${c.lcores}C${c.burst === 32 ? '' : ` burst ${c.burst}`}${c.txThresh ? ` RS/FREE ${c.txThresh[0]}/${c.txThresh[1]}` : ''}`;
    out.push(`${head}: <arm : Mpps median [min..max]>`);
    for (const a of c.arms) {
      // dpkit's own machinery is the ceiling: a DPDK arm is not read against it.
      const share = a.system === 'dpkit' ? ceilingShare(r, c.lcores, a.median) : undefined;
      out.push(` - ${a.name} : ${mpps(a.median)} [${mpps(a.min)}..${mpps(a.max)}]${share === undefined ? '' : ` (${(share * 100).toFixed(0)} % of ceiling)`}${a.failures?.length ? ` (${a.failures.length} failed runs left out)` : ''}`);
    }
    for (const a of c.arms) {
      const m = rateModes(a);
      if (m) out.push(` ~ ${a.name} is bimodal: ${modesText(m)}`);
    }
    if (c.comparisons.length) {
      out.push(`${head}: <B vs A : Before : After>`);
      const arm = new Map(c.arms.map((a) => [a.name, a]));
      for (const k of c.comparisons) out.push(` - ${k.b} vs ${k.a} : ${mpps(arm.get(k.a)!.median)} : ${mpps(arm.get(k.b)!.median)} (${ciText(k)})`);
      for (const k of c.comparisons) {
        const byMode = compareByMode(arm.get(k.a)!, arm.get(k.b)!);
        if (byMode) out.push(` ~ ${k.b} vs ${k.a} by mode: ${byMode.map((m) => `${m.mode} ${mpps(m.a)} : ${mpps(m.b)} (${ciText(m)})`).join(', ')}`);
      }
    }
    for (const w of c.warnings) out.push(` ! ${w}`);
    out.push(LINE);
  }
  const arms = r.cells[0]?.arms.map((a) => a.name) ?? [];
  const cmps = r.cells[0]?.comparisons.map((k) => `${k.b} / ${k.a}`) ?? [];
  const table = new Table({ head: ['cell', ...arms.map((a) => `${a} Mpps`), ...cmps], style: { head: [], border: [] } });
  for (const c of r.cells) table.push([c.id, ...c.arms.map((a) => mpps(a.median)), ...c.comparisons.map((k) => `${k.ratio.toFixed(3)} ${k.verdict === 'faster' ? '▲' : k.verdict === 'slower' ? '▼' : k.verdict === 'too few runs' ? '?' : '='}`)]);
  out.push(table.toString());
  if (cmps.length) out.push('▲ faster, ▼ slower, = no significant difference, ? too few runs (bootstrap 95 % interval of the ratio of medians)');
  if (r.scaling.length) {
    const t = new Table({ head: ['engine', 'size', 'arm', 'lcores', 'n lcores / 1 lcore', '95 % CI'], style: { head: [], border: [] } });
    for (const k of r.scaling) t.push([k.engine, `${k.size} B`, k.arm, String(k.lcores), k.ratio.toFixed(2), `${k.lo.toFixed(2)}..${k.hi.toFixed(2)}`]);
    out.push('Scaling with forwarding lcores', t.toString());
  }
  for (const w of r.warnings) out.push(`warning: ${w}`);
  return out.join('\n') + '\n';
}

export function renderCompare(oldFile: string, newFile: string, cmp: { rows: ReportComparison[]; onlyOld: string[]; onlyNew: string[] }): string {
  const table = new Table({ head: ['cell', 'arm', 'old Mpps', 'new Mpps', 'new / old', '95 % CI', 'verdict'], style: { head: [], border: [] } });
  for (const r of cmp.rows) {
    const k = r.comparison;
    table.push([r.cell, r.arm, mpps(r.old.median), mpps(r.new.median), `${k.ratio.toFixed(3)} (${pct(k.ratio)})`, `${k.lo.toFixed(3)}..${k.hi.toFixed(3)}`, k.verdict]);
  }
  const out = [`old: ${oldFile}`, `new: ${newFile}`, table.toString()];
  if (cmp.onlyOld.length) out.push(`only in old: ${cmp.onlyOld.join('; ')}`);
  if (cmp.onlyNew.length) out.push(`only in new: ${cmp.onlyNew.join('; ')}`);
  return out.join('\n') + '\n';
}
