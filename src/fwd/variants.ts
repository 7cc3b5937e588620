/**
 * The studies users rerun, behind one seam: each study dpkit started from
 * keeps its arms selectable so its measurement can be repeated (docs/
 * glossary.md, "The studies"), and this registry is the one place that
 * names them. testpmd's option parser and `--help`, and the bench presets
 * (`seed-<study>`) read it; the layer that runs a variant takes the choice
 * from its usual input (an engine from FwdConfig.variants, a driver from its
 * devargs) and nothing in between carries a flag of its own. The default of
 * each study is the arm it measured to win.
 */
import { ArgError } from '../errors.js';
import { TX_FREE_MODES, TX_FREE_MODE_DEFAULT } from '../ethdev/tx-reclaim.js';

/** One study: its arms, the winner (the default), and how a run selects one. */
export interface Study<V extends string = string> {
  /** Its bench preset is `seed-<name>`. */
  readonly name: string;
  /** What it measured, one line. */
  readonly title: string;
  /** A testpmd option (`--macswap-kernel=V`) or a devarg of the drivers that implement it (`tx_free_mode=V`). */
  readonly select: { readonly option: string } | { readonly devarg: string; readonly drivers: readonly string[] };
  readonly variants: readonly V[];
  readonly winner: V;
  /** Each arm in a few words, in `variants` order. */
  readonly arms: readonly string[];
  /** Where the study is written up. */
  readonly doc: string;
}

/** macswap's arms: the TypeScript twin and the wasm shapes of DPDK's SSE macswap patches (macswap.as.ts). */
export const MACSWAP_VARIANTS = ['scalar', 'simd', 'simd-ofl', 'simd-interleave'] as const;
export type MacswapVariant = (typeof MACSWAP_VARIANTS)[number];

export const macswapStudy: Study<MacswapVariant> & { readonly select: { readonly option: string } } = {
  name: 'macswap',
  title: "SIMD macswap: the order of the work in DPDK's SSE macswap patches",
  select: { option: 'macswap-kernel' },
  variants: MACSWAP_VARIANTS,
  winner: 'simd-interleave',
  arms: ['the TypeScript twin', 'load, shuffle, store per packet', 'offload fields first', '4 packets interleaved'],
  doc: 'docs/macswap-study.md',
};

export const txFreeStudy: Study & { readonly select: { readonly devarg: string; readonly drivers: readonly string[] } } = {
  name: 'txfree',
  title: 'i40e bulk free: sent mbufs back to their pool one by one, 64 or all at once',
  select: { devarg: 'tx_free_mode', drivers: ['net_nicsim', 'virtio_user'] },
  variants: TX_FREE_MODES,
  winner: TX_FREE_MODE_DEFAULT,
  arms: ['one put per mbuf', 'putBulk through a 64-entry array', 'one array for the batch'],
  doc: 'docs/nicsim.md',
};

/** Every study by name. */
export const studies: ReadonlyMap<string, Study> = new Map<string, Study>([
  [macswapStudy.name, macswapStudy],
  [txFreeStudy.name, txFreeStudy],
]);

/** The arms the engines run (FwdConfig.variants): one entry per study selected by a testpmd option. */
export interface EngineVariants {
  macswap: MacswapVariant;
}

/** Every study's winner. */
export function defaultVariants(): EngineVariants {
  return { macswap: macswapStudy.winner };
}

/**
 * The arm `value` of `study`, or its winner when `value` is undefined.
 * @throws ArgError naming the option or devarg and the arms when `value` is none of them.
 */
export function parseVariant<V extends string>(study: Study<V>, value: string | undefined): V {
  if (value === undefined) return study.winner;
  if ((study.variants as readonly string[]).includes(value)) return value as V;
  const what = 'option' in study.select ? `--${study.select.option}` : study.select.devarg;
  throw new ArgError(`${what}=${value}: expected ${study.variants.join(', ')}`);
}

/** The studies' lines of a `--help`: how each is selected, what it measured, its arms (the winner marked). */
export function studiesUsage(): string {
  const lines: string[] = [];
  const pad = ' '.repeat(25);
  for (const s of studies.values()) {
    const how = 'option' in s.select ? `--${s.select.option}=V` : `${s.select.devarg}=V`;
    const where = 'option' in s.select ? '' : `devarg of ${s.select.drivers.join(', ')}; `;
    lines.push(`  ${how.padEnd(23)}${s.title}`, `${pad}(${where}${s.doc}; dpkit bench seed-${s.name})`);
    s.variants.forEach((v, i) => lines.push(`${pad}${v.padEnd(16)}${s.arms[i]}${v === s.winner ? ' (default)' : ''}`));
  }
  return lines.join('\n') + '\n';
}
