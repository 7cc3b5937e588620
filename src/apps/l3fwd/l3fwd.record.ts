// l3fwd's per-lcore block in the heap, declared once
// (scripts/gen-layouts.ts writes l3fwd-layout.ts and l3fwd-layout.as.ts).
import { defineRecords } from '../../eal/record.js';

export default defineRecords({
  name: 'l3fwdLcore',
  doc: `
What one l3fwd lcore's forward kernel (l3fwd.as.ts, twin l3fwd.twin.ts)
reads and writes per burst, as DPDK's struct lcore_conf: the IPv4 and IPv6
lookup tables, the enabled ports, each port's two MAC addresses and largest
frame, and a tx buffer per port
(DPDK's tx_mbufs) that the kernel fills and the lcore's loop sends. The
kernel writes the packets it drops into the drop list; the loop frees them.
Counters are Float64 slots with one writer, this lcore.`,
  size: 1280,
  prefix: 'L3L',
  index: { u32: 'L3L_W', f64: 'L3L_F' },
  fields: {
    table: { type: 'u32', at: 0, doc: "Heap offset of the IPv4 lookup table's header: an Lpm (lpm.record.ts) or a Hash (hash.record.ts) by L3L_FLAG_EM; 0: IPv4 packets miss." },
    flags: { type: 'u32', at: 4, doc: 'L3L_F_* bits.' },
    portMask: { type: 'u32', at: 8, doc: 'The enabled ports (-p): a lookup naming another port sends back out of the rx port, as DPDK.' },
    rxPort: { type: 'u32', at: 12, doc: 'The port the burst came from: written by the loop before each call.' },
    txBufs: { type: 'u32', at: 16, doc: 'Heap offset of the tx buffers: L3L_TX_BUF_LEN handles per port, port-major.' },
    drops: { type: 'u32', at: 20, doc: 'Heap offset of the drop list (a burst\'s worth of handles).' },
    nbDrops: { type: 'u32', at: 24, doc: 'Handles in the drop list after a call.' },
    table6: { type: 'u32', at: 28, doc: "Heap offset of the IPv6 lookup table's header: an Lpm6 (lpm6.record.ts) or a Hash with 48-byte keys by L3L_FLAG_EM; 0: IPv6 packets miss." },
    key: { type: 'u8', at: 32, count: 16, doc: 'EM: the 16-byte 5-tuple key of the packet at hand (DPDK\'s ipv4_5tuple_host).' },
    rxPackets: { type: 'f64', at: 48, doc: 'Packets received.' },
    badPackets: { type: 'f64', at: 56, doc: 'Packets dropped as not IPv4 or failing the RFC 1812 checks.' },
    txPackets: { type: 'f64', at: 64, doc: 'Packets sent (written by the loop).' },
    txDropped: { type: 'f64', at: 72, doc: 'Packets a tx queue refused, freed (written by the loop).' },
    key6: { type: 'u8', at: 80, count: 48, doc: "EM: the 48-byte key of an IPv6 packet (DPDK's ipv6_5tuple_host)." },
    txLen: { type: 'u32', at: 128, count: 32, doc: 'Handles waiting in each port\'s tx buffer.' },
    mac: { type: 'u8', at: 256, count: 512, doc: 'Per port, 16 bytes: the 6-byte destination MAC (--eth-dest), then the port\'s own 6 as source.' },
    maxLen: { type: 'u32', at: 768, count: 32, doc: "Per port: the largest frame it receives, its MTU plus the Ethernet header (--max-pkt-len sets the MTU); a longer one is dropped as a NIC drops it." },
    rxOversize: { type: 'f64', at: 896, doc: 'Frames dropped as longer than their port\'s maxLen (a NIC\'s rx_oversize / ierrors).' },
    hashes: { type: 'u32', at: 904, count: 32, doc: "EM: each packet's key hash, the kernel's first pass over up to L3L_HASH_BURST packets (the hash table's own bulk lookup is in passes, for the same reason)." },
  },
  consts: {
    L3L_FLAG_EM: { value: 1, doc: 'Exact-match lookup on the 5-tuple (--lookup em); else LPM on the destination address.' },
    L3L_MAX_PORTS: { value: 32, doc: 'Ports an lcore can send to (the port mask is 32 bits).' },
    L3L_TX_BUF_LEN: { value: 64, doc: 'A tx buffer holds a burst beyond MAX_TX_BURST: the loop sends whenever one holds any, after each rx burst.' },
    L3L_MAC_STRIDE: { value: 16, doc: 'Bytes of L3L_MAC per port.' },
    L3L_HASH_BURST: { value: 32, doc: 'Packets per pass of the EM kernel: L3L_HASHES holds their hashes.' },
  },
});
