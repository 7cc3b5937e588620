/**
 * Built-in matrices (`dpkit bench --preset NAME`, or `dpkit bench NAME`).
 * The `seed-` names re-run the studies dpkit started from (docs/glossary.md,
 * "The studies"): seed-macswap the SIMD macswap study, seed-txfree the i40e
 * bulk-free study. seed-vhost, the vhost enqueue-by-size study, is not a
 * matrix: its host and guest must share one dpkit process, so it is the
 * `vhost` micro-benchmark (bench/vhost.ts), DPDK's pair beside it.
 */
import { macswapStudy, txFreeStudy } from '../../fwd/variants.js';
import { KERNEL_PORTS, PCAP_LIVE, kernelPortVariants } from './kernel-ports.js';
import type { MatrixConfig } from './matrix.js';

/**
 * Other names for a preset (`npm run bench -- txfree`) or a micro-benchmark
 * (`seed-vhost`, the study's name for `vhost`).
 */
export const benchAliases: ReadonlyMap<string, string> = new Map([
  ['txfree', 'seed-txfree'],
  ['seed-vhost', 'vhost'],
]);

const SIZES = [64, 128, 256, 512, 1024, 1518];

export const presets: ReadonlyMap<string, MatrixConfig> = new Map<string, MatrixConfig>([
  [
    'testpmd',
    {
      name: 'testpmd',
      title: "testpmd per core: dpkit against DPDK's dpdk-testpmd, 2 null ports, Mpps summed over ports",
      matrix: [
        { engines: ['io', 'mac', 'macswap', 'rxonly', 'txonly'], sizes: SIZES, lcores: [1] },
        // Two lcores at every size too: the strongest-DPDK goal holds io and macswap to 2 x on one and two.
        { engines: ['io', 'macswap'], sizes: SIZES, lcores: [2] },
      ],
      variants: [{ name: 'dpdk', system: 'dpdk' }, { name: 'dpkit' }],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'seed-macswap',
    {
      name: 'seed-macswap',
      title: "SIMD macswap study (the shapes of DPDK's SSE macswap patches): 2 null ports, burst 32, Mpps summed over ports",
      matrix: [{ engines: ['macswap'], sizes: [64, 128, 256], lcores: [1, 2] }],
      // scalar is the TypeScript twin; simd keeps mask and addresses in registers
      // (the patches' step 1), simd-ofl sets the offload fields first (step 2),
      // simd-interleave also interleaves 4 packets (step 3).
      variants: [...macswapStudy.variants.map((v) => ({ name: v, args: [`--${macswapStudy.select.option}=${v}`] })), { name: 'dpdk', system: 'dpdk' as const }],
      compare: [
        ['scalar', 'simd'],
        ['simd', 'simd-ofl'],
        ['simd-ofl', 'simd-interleave'],
        ['scalar', 'simd-interleave'],
        ['dpdk', 'simd-interleave'],
      ],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'seed-txfree',
    {
      name: 'seed-txfree',
      title: "i40e bulk-free study (tx mbufs freed one by one, 64 at a time or all at once): 2 cabled net_nicsim ports (ring 1024, fast free), io on one lcore, the model's hardware on the other CPU, Mpps summed over ports",
      ports: 'nicsim',
      nbDesc: 1024,
      // The study's columns: tx_rs_thresh/tx_free_thresh pairs on i40e with 1024 descriptors.
      matrix: [{ engines: ['io'], sizes: [64], lcores: [1], txThresh: [[32, 32], [256, 256], [512, 512]] }],
      // Its rows: one put per mbuf (the base), putBulk through a 64-entry array (merged), one array for the batch.
      // Fast free, as the study measured: without it bulk64 and bulkall free the same way (refcounts, runs of 64).
      variants: txFreeStudy.variants.map((m) => ({ name: m, devargs: `${txFreeStudy.select.devarg}=${m}`, args: ['--tx-offloads=0x10000'] })),
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'pcap',
    {
      name: 'pcap',
      title: 'net_pcap replay (infinite_rx=1) with macswap: dpkit against DPDK, 2 ports, Mpps summed over ports',
      ports: 'pcap-replay',
      matrix: [{ engines: ['macswap'], sizes: [64, 1518], lcores: [1] }],
      variants: [{ name: 'dpdk', system: 'dpdk' }, { name: 'dpkit' }],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'pcap-live',
    {
      name: 'pcap-live',
      title: "net_pcap on live interfaces (iface=vethX) against DPDK's: io between two veths fed by a txonly source in a namespace (kernel-ports' topology), Mpps received",
      ports: 'kernel',
      // iface= is one queue pair per port in both systems: one forwarding lcore.
      matrix: [{ engines: ['io'], sizes: [64, 1518], lcores: [1] }],
      variants: kernelPortVariants([PCAP_LIVE]),
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'observe',
    {
      name: 'observe',
      title: 'Watched while forwarding: 50 telemetry clients (10 served, as DPDK), 20 dashboard viewers and 20 /metrics scrapers against none, 2 null ports, Mpps summed over ports',
      matrix: [{ engines: ['io', 'txonly'], sizes: [64], lcores: [1] }],
      variants: [{ name: 'quiet' }, { name: 'watched', watch: { telemetry: 50, metrics: 20, web: 20 } }],
      compare: [['quiet', 'watched']],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'vhost-user',
    {
      name: 'vhost-user',
      title:
        "vhost-user across processes (the vhost enqueue-by-size study's setup): a host net_vhost and a guest virtio_user on one unix socket, each testpmd on its own CPU; rxonly cells: host txonly -> guest rxonly, txonly cells: the reverse; Mpps received",
      ports: 'vhost-user',
      // The enqueue study's sizes; a whole run of every arm is long (7.5 to 9 s a run): pick with --sizes and --arms.
      matrix: [{ engines: ['rxonly', 'txonly'], sizes: [64, 128, 256, 512, 1024, 1400, 1518], lcores: [1] }],
      // Arms name host/guest. DPDK's own pair is the baseline; each dpkit arm changes one side, then both.
      // dpkit's sides count every packet by size and cast as DPDK's vhost and virtio always do
      // (net_stats=1: equal work); the last arm, without, shows what that costs.
      variants: [
        { name: 'dpdk/dpdk', system: 'dpdk', guest: 'dpdk' },
        { name: 'dpkit/dpdk', system: 'dpkit', guest: 'dpdk', devargs: 'net_stats=1' },
        { name: 'dpdk/dpkit', system: 'dpdk', guest: 'dpkit', devargs: 'net_stats=1' },
        { name: 'dpkit/dpkit', system: 'dpkit', guest: 'dpkit', devargs: 'net_stats=1' },
        { name: 'dpkit/dpkit no-stats', system: 'dpkit', guest: 'dpkit' },
        // Packed virtqueues (the guest's packed_vq=1): dpkit's host against DPDK's, both with DPDK's guest;
        // then dpkit's guest (its packed frontend) with DPDK's host, and dpkit on both sides.
        { name: 'dpdk/dpdk-packed', system: 'dpdk', guest: 'dpdk', guestDevargs: 'packed_vq=1' },
        { name: 'dpkit/dpdk-packed', system: 'dpkit', guest: 'dpdk', devargs: 'net_stats=1', guestDevargs: 'packed_vq=1' },
        { name: 'dpdk/dpkit-packed', system: 'dpdk', guest: 'dpkit', devargs: 'net_stats=1', guestDevargs: 'packed_vq=1' },
        { name: 'dpkit/dpkit-packed', system: 'dpkit', guest: 'dpkit', devargs: 'net_stats=1', guestDevargs: 'packed_vq=1' },
      ],
      compare: [
        ['dpdk/dpdk', 'dpkit/dpdk'],
        ['dpdk/dpdk', 'dpdk/dpkit'],
        ['dpdk/dpdk', 'dpkit/dpkit'],
        ['dpkit/dpkit', 'dpkit/dpkit no-stats'],
        ['dpdk/dpdk-packed', 'dpkit/dpdk-packed'],
        ['dpkit/dpdk', 'dpkit/dpdk-packed'],
        ['dpdk/dpdk-packed', 'dpdk/dpkit-packed'],
        ['dpdk/dpdk-packed', 'dpkit/dpkit-packed'],
        ['dpdk/dpkit', 'dpdk/dpkit-packed'],
      ],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'memif',
    {
      name: 'memif',
      title:
        'memif pair: a client process txonly into a server process running rxonly (or io, sending every packet back), one net_memif port each (copy mode, or a zero-copy dpkit client in the .zc arms; abstract socket), Mpps the server receives; arms are client-server systems, each process on its own CPU',
      ports: 'memif',
      matrix: [{ engines: ['rxonly', 'io'], sizes: [64, 1518], lcores: [1, 2] }],
      variants: [
        { name: 'dpdk-dpdk', system: 'dpdk', peer: 'dpdk' },
        { name: 'dpkit-dpdk', system: 'dpdk', peer: 'dpkit' },
        { name: 'dpdk-dpkit', system: 'dpkit', peer: 'dpdk' },
        { name: 'dpkit-dpkit', system: 'dpkit', peer: 'dpkit' },
        // dpkit's client with zero-copy=yes: the server reads and fills the client's mbufs in place. Its region is
        // its heap's prefix, pool included: 16384 mbufs keep it inside a dpkit server's 64 MiB window budget.
        { name: 'dpkit.zc-dpdk', system: 'dpdk', peer: 'dpkit', peerDevargs: 'zero-copy=yes', peerArgs: ['--total-num-mbufs=16384'] },
        { name: 'dpkit.zc-dpkit', system: 'dpkit', peer: 'dpkit', peerDevargs: 'zero-copy=yes', peerArgs: ['--total-num-mbufs=16384'] },
      ],
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
  [
    'kernel-ports',
    {
      name: 'kernel-ports',
      title: "kernel-port drivers (net_af_packet, net_tap) against DPDK's of the same name: io between two Linux interfaces fed by a txonly source in a namespace, Mpps received",
      ports: 'kernel',
      matrix: [{ engines: ['io'], sizes: [64, 1518], lcores: [1, 2] }],
      variants: kernelPortVariants(),
      compare: KERNEL_PORTS.map((d) => [`${d.name}-dpdk`, `${d.name}-dpkit`] as [string, string]),
      pairs: 5,
      seconds: 3,
      warmup: 1,
    },
  ],
]);
