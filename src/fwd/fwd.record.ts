// The forwarding engines' blocks in the heap, declared once
// (scripts/gen-layouts.ts writes fwd-layout.ts and fwd-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'fwdEngine',
    doc: `
One engine's settings in the heap, written once when the engine is made
(testpmd makes its engines at \`start\`, from its command line and \`set\`
commands): what the engine kernels (macswap.as.ts, mac.as.ts, 5tswap.as.ts,
csum.as.ts, txonly.as.ts, flowgen.as.ts, icmpecho.as.ts) and their twins read at entry, as DPDK's engines
read their globals. txonly's flow variable and flowgen's next flow are the
fields a burst writes.`,
    size: 64,
    prefix: 'FWDE',
    index: { u32: 'FWDE_W' },
    fields: {
      olHi: { type: 'u32', at: 0, doc: 'Tx flags (bits 32..63 of ol_flags) every packet gets: ol_flags_init for the tx port\'s VLAN / QinQ insert offloads (tx-fields.ts).' },
      keepHi: { type: 'u32', at: 4, doc: 'The ol_flags bits 32..63 a packet keeps (INDIRECT, EXTERNAL: mbuf_field_set).' },
      vlan: { type: 'u32', at: 8, doc: 'VLAN TCI to insert (low 16 bits).' },
      vlanOuter: { type: 'u32', at: 12, doc: 'Outer VLAN TCI to insert (QinQ; low 16 bits).' },
      flags: { type: 'u32', at: 16, doc: 'FWDE_F_* bits.' },
      pktLen: { type: 'u32', at: 20, doc: 'txonly: length of each generated single-segment packet.' },
      ipDst: { type: 'u32', at: 24, doc: 'txonly: the IPv4 destination, which multi-flow sources are made from.' },
      ipVar: { type: 'u32', at: 28, doc: "txonly: multi-flow's 8-bit flow variable, carried across bursts and streams." },
      flows: { type: 'u32', at: 32, doc: 'flowgen: how many flows the destination address walks (--flowgen-flows).' },
      flow: { type: 'u32', at: 36, doc: "flowgen: the next packet's flow (testpmd's per-lcore _next_flow), carried across bursts and streams." },
      drops: { type: 'u32', at: 40, doc: "icmpecho: heap offset of a burst the kernel leaves the packets it does not answer in, for the engine to free." },
    },
    consts: {
      FWDE_F_VLAN: { value: 1, doc: 'Set vlanTci on every packet (VLAN insert offload; mac sets it whatever the offloads).' },
      FWDE_F_QINQ: { value: 2, doc: 'Set vlanTciOuter on every packet (QinQ insert offload).' },
      FWDE_F_MULTI_FLOW: { value: 4, doc: 'txonly: vary the IPv4 source per packet (--txonly-multi-flow).' },
      FWDE_F_CSUM_NO_MAC: { value: 8, doc: "csum: leave the Ethernet addresses as they are (testpmd's `csum mac-swap off`; BurstOps.checksum without addresses)." },
    },
  },
  {
    name: 'fwdStream',
    doc: `
What one engine keeps per stream, beside its engine block: the stream's
Ethernet addresses as the packets carry them, its counters, and txonly's
header template (flowgen's too). Made the first time the engine forwards the
stream; the kernels of mac, csum, txonly, flowgen and icmpecho take this
block, the others the engine's.`,
    size: 128,
    prefix: 'FWDS',
    index: { u32: 'FWDS_W' },
    fields: {
      engine: { type: 'u32', at: 0, doc: "Heap offset of the engine's block (FWDE_*)." },
      stats: { type: 'u32', at: 4, doc: "Heap offset of the stream's counters (fwdStreamStats)." },
      sumNoSrc: { type: 'u32', at: 8, doc: "txonly: the IPv4 header's sum without the source and checksum fields; multi-flow adds the source and folds." },
      sumNoDst: { type: 'u32', at: 12, doc: "flowgen: the IPv4 header's sum without the destination and checksum fields; each packet adds its destination and folds." },
      mac: { type: 'u32', at: 16, count: 3, doc: 'The 12 address bytes the packets get (the peer, then the tx port) as three little-endian words.' },
      tmpl: { type: 'u8', at: 64, count: 48, doc: 'txonly, flowgen: the 42-byte Ethernet/IPv4/UDP header of every packet (48 readable bytes; flowgen\'s has destination and checksum 0).' },
    },
  },
  {
    name: 'fwdStreamStats',
    doc: `
One stream's counters (testpmd's fwd_stream counts): Float64 slots, one
writer (the lcore forwarding the stream), one cache line per stream; see
ethdev/stats.ts for why plain stores are safe.`,
    size: 64,
    prefix: 'FS_STAT',
    index: { f64: 'FS' },
    fields: {
      rxPackets: { type: 'f64', at: 0, doc: 'Packets received.' },
      txPackets: { type: 'f64', at: 8, doc: 'Packets sent.' },
      fwdDropped: { type: 'f64', at: 16, doc: 'Packets the tx queue refused, freed (fwd_dropped).' },
      rxBadIpCsum: { type: 'f64', at: 24, doc: 'csum: packets that arrived with a bad IPv4 header checksum.' },
      rxBadL4Csum: { type: 'f64', at: 32, doc: 'csum: packets that arrived with a bad UDP or TCP checksum.' },
      probe: { type: 'f64', at: 40, doc: "rxprobe: heap offset of the lcore's probe checker (gen/probe.ts), 0 before its first burst." },
    },
  },
);
