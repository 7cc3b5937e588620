/**
 * Prometheus' text exposition format (version 0.0.4): families with HELP and
 * TYPE lines, then one line per sample with escaped label values.
 *
 * Why not prom-client: its Counter only increments, while dpkit's counters
 * already live in shared memory and are read whole at each scrape; mirroring
 * them would mean a reset and an inc per sample per scrape, plus a registry of
 * objects, for what is one string built from numbers here. This writer has no
 * dependency and no state between scrapes.
 */

export type MetricType = 'counter' | 'gauge';

/** One sample: label values by label name, and the value (NaN and ±Inf allowed). */
export interface MetricSample {
  labels?: Record<string, string | number>;
  value: number;
}

/** A metric family as Prometheus names it: `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*; counters end in _total. */
export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: MetricSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Renders families in the text format, in the order given.
 * @returns the page body, ending in a newline.
 * @throws Error for a bad metric or label name (a programming error, not input).
 */
export function renderMetrics(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    if (!NAME.test(f.name)) throw new Error(`metrics: bad metric name '${f.name}'`);
    out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) out.push(`${f.name}${labelText(s.labels)} ${valueText(s.value)}`);
  }
  return out.join('\n') + '\n';
}

function labelText(labels: Record<string, string | number> | undefined): string {
  if (!labels) return '';
  const parts = Object.entries(labels).map(([k, v]) => {
    if (!LABEL.test(k) || k.startsWith('__')) throw new Error(`metrics: bad label name '${k}'`);
    return `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
  });
  return parts.length ? `{${parts.join(',')}}` : '';
}

function valueText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}
