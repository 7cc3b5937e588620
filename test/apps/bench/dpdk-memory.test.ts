// Which pages the bench's DPDK runs on: read from /proc's text, chosen once per bench process.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DPDK_MEM_MB, chooseDpdkMemory, dpdkEalArgs, dpdkMemoryFact, hugepages, hugepagesMissing } from '../../../src/apps/bench/dpdk-memory.js';

const meminfo = (total: number, free: number, kb = 2048) => `MemTotal:       24684544 kB\nHugePages_Total:    ${total}\nHugePages_Free:     ${free}\nHugepagesize:       ${kb} kB\n`;
const MOUNTED = 'proc /proc proc rw 0 0\nnodev /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n';

describe('bench: DPDK on hugepages', () => {
  it('finds the default-size pages and their hugetlbfs mount, and nothing without either', () => {
    assert.deepEqual(hugepages(meminfo(1280, 1280), MOUNTED), { pageBytes: 2 << 20, free: 1280, mount: '/dev/hugepages' });
    // A mount without pagesize= serves the default size.
    assert.deepEqual(hugepages(meminfo(8, 8), 'none /mnt/huge hugetlbfs rw 0 0\n'), { pageBytes: 2 << 20, free: 8, mount: '/mnt/huge' });
    assert.equal(hugepages(meminfo(1280, 1280), 'proc /proc proc rw 0 0\n'), null, 'reserved but not mounted');
    assert.equal(hugepages(meminfo(1280, 1280), 'nodev /dev/hugepages1G hugetlbfs rw,pagesize=1G 0 0\n'), null, 'mounted for another size');
    assert.equal(hugepages('MemTotal: 1 kB\n', MOUNTED), null, 'a kernel without hugepages');
  });

  it('wants enough free pages for two DPDK processes at once, and says what is missing', () => {
    const pages = (2 * DPDK_MEM_MB) / 2;
    assert.equal(hugepagesMissing(hugepages(meminfo(pages, pages), MOUNTED)), null);
    assert.equal(hugepagesMissing(hugepages(meminfo(pages, pages - 1), MOUNTED)), `${pages - 1} hugepages free of the ${pages} two DPDK processes need`);
    assert.equal(hugepagesMissing(null), 'no hugepages reserved or no hugetlbfs mounted');
  });

  it('--dpdk-memory: no-huge is DPDK\'s test mode, a bad word is refused, huge fails where the machine cannot', () => {
    assert.equal(chooseDpdkMemory('no-huge'), 'no-huge');
    assert.deepEqual(dpdkEalArgs('p'), ['--no-huge', '-m', String(DPDK_MEM_MB), '--no-pci', '--file-prefix', 'p']);
    assert.match(dpdkMemoryFact(), /^--no-huge \(4 KiB pages; .+\)$/);
    assert.throws(() => chooseDpdkMemory('some'), /bench --dpdk-memory some: expected huge, no-huge or auto/);
    const missing = hugepagesMissing();
    if (missing) assert.throws(() => chooseDpdkMemory('huge'), (e: Error) => e.message === `bench --dpdk-memory huge: ${missing} (scripts/hugepages.sh reserves them)`);
    else {
      assert.equal(chooseDpdkMemory('huge'), 'huge');
      assert.deepEqual(dpdkEalArgs('p'), ['-m', String(DPDK_MEM_MB), '--in-memory', '--single-file-segments', '--no-pci', '--file-prefix', 'p']);
      assert.match(dpdkMemoryFact(), /^hugepages of \d+ MiB \(\/.+\)$/);
    }
    assert.equal(chooseDpdkMemory('auto'), missing ? 'no-huge' : 'huge');
  });
});
