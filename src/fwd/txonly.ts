/**
 * txonly: generate IPv4/UDP packets and send them (testpmd's txonly): each
 * packet is --txpkts segments long (a chain when several), with Ethernet
 * dst = the tx port's peer, src = the tx port, IPv4 198.18.0.1 → 198.18.0.2,
 * UDP 9 → 9, TTL 64. --txonly-multi-flow varies the source address per packet
 * (as testpmd: (dst | var << 8) + lcore) so a receiver's RSS spreads them.
 */
import { ArgError } from '../errors.js';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4 } from '../net/ether.js';
import {
  H_DATA_LEN,
  H_DATA_OFF,
  H_NB_SEGS,
  H_VLAN_TCI,
  H_VLAN_TCI_OUTER,
  MBUF_HALF_SHIFT,
  MBUF_WORD_SHIFT,
  OlFlagsHi,
  W_BUF_ADDR,
  W_NEXT,
  W_OL_FLAGS_HI,
  W_PKT_LEN,
  W_TX_OFFLOAD,
} from '../mem/mbuf-layout.js';
import { transmit } from './common.js';
import type { Mempool } from '../mem/mempool.js';
import type { FwdConfig, FwdContext, FwdEngine, FwdStream } from './engine.js';
import { TX_OFFLOAD_ETH_IPV4 } from './macswap.js';
import { txOlFlagsHi } from './tx-fields.js';

const IPV4_HDR_LEN = 20;
const UDP_HDR_LEN = 8;
/** Ethernet + IPv4 + UDP: the bytes txonly writes into every packet. */
export const TXONLY_HDR_LEN = ETHER_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN;
const IP_DEFTTL = 64;
const IPPROTO_UDP = 17;

/** The 42 header bytes of a txonly packet of `pktLen` bytes from `src` to `dst` MAC. */
export function txonlyTemplate(config: FwdConfig, pktLen: number, src: Uint8Array, dst: Uint8Array): Uint8Array {
  const t = new Uint8Array(TXONLY_HDR_LEN);
  const v = new DataView(t.buffer);
  t.set(dst.subarray(0, 6), 0);
  t.set(src.subarray(0, 6), 6);
  v.setUint16(12, ETHER_TYPE_IPV4);
  v.setUint8(14, 0x45);
  v.setUint16(16, pktLen - ETHER_HDR_LEN);
  v.setUint8(22, IP_DEFTTL);
  v.setUint8(23, IPPROTO_UDP);
  v.setUint32(26, config.txIpSrc);
  v.setUint32(30, config.txIpDst);
  v.setUint16(24, ipv4Checksum(t, 14));
  v.setUint16(34, config.txUdpSrc);
  v.setUint16(36, config.txUdpDst);
  v.setUint16(38, pktLen - ETHER_HDR_LEN - IPV4_HDR_LEN);
  return t;
}

/** One's-complement checksum of the 20-byte IPv4 header at `off` (checksum field taken as 0). */
function ipv4Checksum(b: Uint8Array, off: number): number {
  let sum = 0;
  for (let i = 0; i < IPV4_HDR_LEN; i += 2) if (i !== 10) sum += (b[off + i]! << 8) | b[off + i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

interface StreamTemplate {
  /** The header as 10 big-endian words plus the UDP length/checksum half-word. */
  words: Uint32Array;
  /** The header bytes in the heap, 64 bytes reserved, for the kernel. */
  addr: number;
  /** IPv4 header sum without the source address and checksum: multi-flow adds the address and folds. */
  sumNoSrc: number;
}

/**
 * Checks the packet shape txonly would build from `config.txPkts` with mbufs
 * of `pool` (testpmd's set_tx_pkt_segments checks): run by the control plane
 * before any lcore starts, and by the engine itself.
 * @throws ArgError when a segment is empty or larger than an mbuf's data
 *   room, or the packet is shorter than its Ethernet/IPv4/UDP header.
 */
export function txonlyCheck(config: FwdConfig, pool: Mempool): void {
  const segs = config.txPkts;
  const pktLen = segs.reduce((a, b) => a + b, 0);
  const room = pool.bufLen - pool.headroom;
  if (segs.some((s) => s > room || s <= 0)) throw new ArgError(`txonly: --txpkts ${segs.join(',')}: each segment must be 1..${room} bytes (the mbuf data room)`);
  if (pktLen < TXONLY_HDR_LEN) throw new ArgError(`txonly: packet length ${pktLen} is shorter than the ${TXONLY_HDR_LEN}-byte Ethernet/IPv4/UDP header`);
}

export function txonly(ctx: FwdContext): FwdEngine {
  const { heap, mb, pool, burst, config } = ctx;
  txonlyCheck(config, pool);
  const segs = config.txPkts;
  const pktLen = segs.reduce((a, b) => a + b, 0);
  const nbSegs = segs.length;
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  const olHi = txOlFlagsHi(config);
  const multiFlow = config.txOnlyMultiFlow;
  const kernel = heap.kernels?.fwd ?? null;
  const inHeap = burst.buffer === heap.buffer;
  const setVlan = olHi & OlFlagsHi.TX_VLAN ? 1 : 0;
  const setQinq = olHi & OlFlagsHi.TX_QINQ ? 1 : 0;
  const seg = heap.burst(nbSegs);
  const templates = new WeakMap<FwdStream, StreamTemplate>();
  const lcoreId = heap.lcoreId;
  const hdr = new Uint8Array(TXONLY_HDR_LEN);
  const hdrView = new DataView(hdr.buffer);
  let ipVar = 0;

  const template = (fs: FwdStream): StreamTemplate => {
    let t = templates.get(fs);
    if (!t) {
      const bytes = txonlyTemplate(config, pktLen, fs.txMac, fs.peerMac);
      const v = new DataView(bytes.buffer);
      const words = new Uint32Array(11);
      for (let i = 0; i < 10; i++) words[i] = v.getUint32(i * 4);
      words[10] = v.getUint16(40);
      let sum = 0;
      for (let i = 14; i < 34; i += 2) if (i !== 24 && i !== 26 && i !== 28) sum += v.getUint16(i);
      const addr = heap.reserve(64, 64, 'txonly template');
      u8.set(bytes, addr);
      t = { words, addr, sumNoSrc: sum };
      templates.set(fs, t);
    }
    return t;
  };

  /** Writes the headers at `p` in `view` (the packet, or the staging copy for short segments). */
  const writeHeaders = (t: StreamTemplate, view: DataView, p: number): void => {
    const w = t.words;
    for (let i = 0; i < 10; i++) view.setUint32(p + i * 4, w[i]!);
    view.setUint16(p + 40, w[10]!);
    if (multiFlow) {
      const src = ((config.txIpDst | ((ipVar & 0xff) << 8)) + lcoreId) >>> 0;
      ipVar = (ipVar + 1) & 0xff;
      view.setUint32(p + 26, src);
      let sum = t.sumNoSrc + (src >>> 16) + (src & 0xffff);
      while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
      view.setUint16(p + 24, ~sum & 0xffff);
    }
  };

  /** Slow path: a first segment shorter than the headers; stage them, then copy across segments. */
  const writeHeadersSegs = (t: StreamTemplate, h: number): void => {
    writeHeaders(t, hdrView, 0);
    let k = 0;
    for (let m = h; m !== 0 && k < TXONLY_HDR_LEN; m = mb.next(m)) {
      const len = Math.min(mb.dataLen(m), TXONLY_HDR_LEN - k);
      u8.set(hdr.subarray(k, k + len), mb.mtod(m));
      k += len;
    }
  };

  const setFields = (h: number): void => {
    const r = h << MBUF_WORD_SHIFT;
    u32[r + W_OL_FLAGS_HI] = olHi;
    u32[r + W_TX_OFFLOAD] = TX_OFFLOAD_ETH_IPV4;
    if (olHi & OlFlagsHi.TX_VLAN) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = config.vlanTci;
    if (olHi & OlFlagsHi.TX_QINQ) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = config.vlanTciOuter;
  };

  return {
    name: 'txonly',
    fwd(fs: FwdStream): void {
      const t = template(fs);
      const want = config.burst;
      let n = 0;
      if (nbSegs === 1) {
        if (pool.allocBulk(burst, want) === want) n = want;
        else while (n < want && (burst[n] = pool.alloc()) !== 0) n++;
        if (kernel !== null && inHeap) {
          ipVar = kernel.txonlyFill(burst.byteOffset, n, t.addr, pktLen, olHi, setVlan, config.vlanTci, setQinq, config.vlanTciOuter, multiFlow ? 1 : 0, config.txIpDst, ipVar, lcoreId, t.sumNoSrc);
        } else for (let i = 0; i < n; i++) {
          // The TypeScript twin of the txonlyFill kernel.
          const h = burst[i]!;
          u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = pktLen;
          u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = pktLen;
          setFields(h);
          writeHeaders(t, dv, u32[(h << MBUF_WORD_SHIFT) + W_BUF_ADDR]! + u16[(h << MBUF_HALF_SHIFT) + H_DATA_OFF]!);
        }
      } else {
        for (; n < want; n++) {
          if (pool.allocBulk(seg, nbSegs) === 0) break;
          for (let s = 0; s < nbSegs; s++) {
            const m = seg[s]!;
            u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = segs[s]!;
            if (s + 1 < nbSegs) u32[(m << MBUF_WORD_SHIFT) + W_NEXT] = seg[s + 1]!;
          }
          const h = seg[0]!;
          u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = pktLen;
          u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS] = nbSegs;
          setFields(h);
          if (segs[0]! >= TXONLY_HDR_LEN) writeHeaders(t, dv, mb.mtod(h));
          else writeHeadersSegs(t, h);
          burst[n] = h;
        }
      }
      if (n > 0) transmit(ctx, fs, n);
    },
  };
}
