/**
 * How the bench's DPDK processes get their memory. DPDK is meant to run on
 * hugepages; `--no-huge` (4 KiB pages) is its test mode, and here it costs
 * DPDK 25.11's testpmd io on null ports 2.6 x (22 against 57 Mpps a port,
 * whatever the pool's size). Each DPDK mbuf carries its header beside its
 * 2 KiB buffer, so the few hundred mbufs in flight sit on as many 4 KiB pages,
 * more than a first-level TLB holds (no PMU here to count the misses); dpkit's
 * mbuf records are one dense array, 64 B each, and its rate does not move
 * with the page size. A comparison is fair only against DPDK on hugepages, so
 * the bench uses them whenever the machine has them (`scripts/hugepages.sh`
 * reserves and mounts them) and says so in the report when it cannot.
 */
import { readFileSync } from 'node:fs';
import { ArgError } from '../../errors.js';

export type DpdkMemoryMode = 'huge' | 'no-huge';

/** MiB each DPDK process takes (`-m`), in either mode: testpmd's default pool fits with room. */
export const DPDK_MEM_MB = 1024;

/** DPDK processes that run at once in one bench run (a vhost-user or memif pair). */
const PROCESSES_AT_ONCE = 2;

export interface Hugepages {
  /** Bytes a page. */
  pageBytes: number;
  free: number;
  /** Where hugetlbfs is mounted for that page size. */
  mount: string;
}

/** The machine's default-size hugepages, when some are reserved and hugetlbfs is mounted; else null. */
export function hugepages(meminfo = readText('/proc/meminfo'), mounts = readText('/proc/mounts')): Hugepages | null {
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? NaN);
  const kb = field('Hugepagesize');
  const free = field('HugePages_Free');
  if (!(kb > 0) || !(free >= 0)) return null;
  // A hugetlbfs mount without pagesize= serves the default size.
  for (const line of mounts.split('\n')) {
    const [, dir, type, opts = ''] = line.split(' ');
    if (type !== 'hugetlbfs' || dir === undefined) continue;
    const size = /(?:^|,)pagesize=(\d+)([KMG])/.exec(opts);
    const bytes = size ? Number(size[1]) * { K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[size[2] as 'K' | 'M' | 'G'] : kb * 1024;
    if (bytes === kb * 1024) return { pageBytes: bytes, free, mount: dir };
  }
  return null;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Why hugepages cannot be used now, or null when they can (enough free for a pair of DPDK processes). */
export function hugepagesMissing(h = hugepages()): string | null {
  if (!h) return 'no hugepages reserved or no hugetlbfs mounted';
  const need = Math.ceil((PROCESSES_AT_ONCE * DPDK_MEM_MB * 1024 * 1024) / h.pageBytes);
  return h.free < need ? `${h.free} hugepages free of the ${need} two DPDK processes need` : null;
}

/** The mode this process's DPDK runs in, and the report's line for it, fixed when chosen. */
let chosen: { mode: DpdkMemoryMode; fact: string } | undefined;

/**
 * Sets the mode for this process's DPDK runs from `--dpdk-memory`: `huge`
 * (fails if the machine cannot), `no-huge`, or `auto` (hugepages when there
 * are enough). Returns the mode.
 */
export function chooseDpdkMemory(option: string | undefined): DpdkMemoryMode {
  const want = option ?? 'auto';
  if (want !== 'auto' && want !== 'huge' && want !== 'no-huge') throw new ArgError(`bench --dpdk-memory ${want}: expected huge, no-huge or auto`);
  const h = want === 'no-huge' ? null : hugepages();
  const missing = want === 'no-huge' ? null : hugepagesMissing(h);
  if (want === 'huge' && missing) throw new ArgError(`bench --dpdk-memory huge: ${missing} (scripts/hugepages.sh reserves them)`);
  chosen =
    h && !missing
      ? { mode: 'huge', fact: `hugepages of ${h.pageBytes / 1024 / 1024} MiB (${h.mount})` }
      : { mode: 'no-huge', fact: `--no-huge (4 KiB pages; ${missing ?? 'chosen'})` };
  return chosen.mode;
}

/** The mode DPDK runs in (chosen by `chooseDpdkMemory`, else auto). */
export function dpdkMemory(): DpdkMemoryMode {
  return chosen?.mode ?? chooseDpdkMemory('auto');
}

/**
 * The EAL arguments every DPDK process of the bench takes: its memory, no
 * PCI scan, and its own `--file-prefix` (two run at once in a pair). On
 * hugepages: `--in-memory` (memfds, no files left in hugetlbfs by a killed
 * run) with `--single-file-segments` (one fd a segment list: a page a file
 * would make virtio_user's memory table 512 regions, past vhost-user's 8; DPDK
 * refuses it beside an explicit `--huge-unlink`).
 */
export function dpdkEalArgs(prefix: string): string[] {
  const mem = dpdkMemory() === 'huge' ? ['-m', String(DPDK_MEM_MB), '--in-memory', '--single-file-segments'] : ['--no-huge', '-m', String(DPDK_MEM_MB)];
  return [...mem, '--no-pci', '--file-prefix', prefix];
}

/** One line for a report's header: the pages DPDK's processes ran on. */
export function dpdkMemoryFact(): string {
  if (!chosen) chooseDpdkMemory('auto');
  return chosen!.fact;
}
