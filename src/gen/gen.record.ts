// The traffic generator's per-stream block and its field variables in the
// heap, declared once (scripts/gen-layouts.ts writes gen-layout.ts and
// gen-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'genStream',
    doc: `
One generator stream: where its packet template is, the header offsets and
checksum sums genCsum fixes packets from, and up to GEN_MAX_VARS field
variables (genVar records at \`vars\`). Written once when the stream is made;
a burst writes only the variables' state and the random state. genFill and
genCsum (gen.as.ts) and their twins (gen.twin.ts) take this block.`,
    size: 320,
    prefix: 'GENS',
    index: { u32: 'GENS_W' },
    fields: {
      tmpl: { type: 'u32', at: 0, doc: 'Heap offset of the template: the packet at the template length, padded with zeros up to the longest size the stream sends.' },
      tmplLen: { type: 'u32', at: 4, doc: 'Length of the template packet: the length its checksum sums were taken at.' },
      l3: { type: 'u32', at: 8, doc: 'Offset of the IPv4 / IPv6 header in the packet (0: none).' },
      l4: { type: 'u32', at: 12, doc: 'Offset of the UDP / TCP header (0: none).' },
      flags: { type: 'u32', at: 16, doc: 'GEN_F_* bits.' },
      nbVars: { type: 'u32', at: 20, doc: 'Field variables in use at `vars`.' },
      rng: { type: 'u32', at: 24, doc: 'xorshift32 state of the random variables (never 0).' },
      ipSum: { type: 'u32', at: 28, doc: "The template's IPv4 header sum without its checksum field, unfolded." },
      l4Sum: { type: 'u32', at: 32, doc: "The template's UDP / TCP sum (pseudo-header, header, payload) without its checksum field, unfolded." },
      vars: { type: 'u8', at: 64, count: 256, doc: 'GEN_MAX_VARS genVar records of GEN_VAR_SIZE bytes.' },
    },
    consts: {
      GEN_MAX_VARS: { value: 8, doc: 'Field variables one stream may hold.' },
      GEN_F_IPV4: { value: 1, doc: 'The packet has an IPv4 header at l3 (20 bytes, no options).' },
      GEN_F_IPV6: { value: 2, doc: 'The packet has an IPv6 header at l3 (40 bytes, no extension headers).' },
      GEN_F_UDP: { value: 4, doc: 'The L4 header at l4 is UDP.' },
      GEN_F_TCP: { value: 8, doc: 'The L4 header at l4 is TCP.' },
      GEN_F_CSUM: { value: 16, doc: 'genCsum fixes the IPv4 header checksum and the UDP / TCP checksum.' },
      GEN_F_LEN: { value: 32, doc: 'A variable sets the packet length: genFill writes the IP and UDP length fields.' },
      GEN_LEN_FIELD: { value: 0xffff, doc: "A variable's offset that stands for the packet's length, not bytes in it." },
    },
  },
  {
    name: 'genVar',
    doc: `
One field variable of a stream: each packet gets the next value, written
big-endian into \`width\` bytes at \`off\` (or, at GEN_LEN_FIELD, taken as the
packet's length). inc and dec step from min to max and wrap; random draws in
[min, max] from the stream's xorshift32; list cycles through listLen u32
values at list.`,
    size: 32,
    prefix: 'GENV',
    index: { u32: 'GENV_W' },
    fields: {
      off: { type: 'u16', at: 0, doc: 'Byte offset in the packet, or GEN_LEN_FIELD.' },
      width: { type: 'u8', at: 2, doc: 'Bytes written: 1, 2 or 4.' },
      kind: { type: 'u8', at: 3, doc: 'GEN_INC, GEN_DEC, GEN_RANDOM or GEN_LIST.' },
      min: { type: 'u32', at: 4, doc: 'Smallest value.' },
      max: { type: 'u32', at: 8, doc: 'Largest value.' },
      step: { type: 'u32', at: 12, doc: 'inc / dec: the step (at least 1).' },
      cur: { type: 'u32', at: 16, doc: 'inc / dec: the next value; list: the next index.' },
      list: { type: 'u32', at: 20, doc: 'list: heap offset of the values (u32 each).' },
      listLen: { type: 'u32', at: 24, doc: 'list: how many values.' },
    },
    consts: {
      GEN_INC: { value: 0, doc: 'min, min + step, … up to max, then min again.' },
      GEN_DEC: { value: 1, doc: 'max, max - step, … down to min, then max again.' },
      GEN_RANDOM: { value: 2, doc: 'Uniform in [min, max] from the stream\'s xorshift32 (repeatable from its seed).' },
      GEN_LIST: { value: 3, doc: 'The values at list, in order, round and round.' },
    },
  },
  {
    name: 'genTxStats',
    doc: `
One generator stream's account as its sender keeps it: the schedule's cursor
and what became of every packet (sent, refused by the tx queue, not made,
late). Float64 slots, one writer (the thread sending the stream), so the
control plane reads them live without stopping it (testpmd's gen forward
mode reserves them on the main thread and hands the offsets to its lcores).
t0 is the sender's start on nowNs(), the clock every lcore shares.`,
    size: 128,
    prefix: 'GENT',
    index: { f64: 'GENT_D' },
    fields: {
      t0: { type: 'f64', at: 0, doc: 'nowNs() when the sender started (0: not started).' },
      next: { type: 'f64', at: 8, doc: 'The next packet of the schedule (packets before it were sent, refused or not made).' },
      sent: { type: 'f64', at: 16, doc: 'Packets the tx queue accepted.' },
      bytes: { type: 'f64', at: 24, doc: 'Bytes of the packets sent.' },
      txDropped: { type: 'f64', at: 32, doc: 'Packets the tx queue refused (ring full), freed.' },
      noMbuf: { type: 'f64', at: 40, doc: 'Packets not made: the pool was empty.' },
      late: { type: 'f64', at: 48, doc: "Packets whose burst left more than the run's lateness bound after its deadline." },
      maxLateNs: { type: 'f64', at: 56, doc: 'The latest a burst left after its deadline, ns.' },
      lastDepartNs: { type: 'f64', at: 64, doc: 'When the last burst left, ns after t0.' },
    },
  },
);
